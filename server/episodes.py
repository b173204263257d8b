"""The episode catalog: named runs, their tags, and an index of every recorded episode.

THE QUERY API (used by ``/v1/runs``, the dashboard and tests) is :class:`EpisodeCatalog`::

    cat = EpisodeCatalog(settings.catalog_db)            # one SQLite file under the home
    cat.claim_run(run_id, owner, tags) -> dict            # create, or check it is the owner's
    cat.add_session(run_id, session_id, owner)            # a recorded session joined
    cat.add(summary)                                      # an ended episode (recording.summary)
    cat.run(owner, run_id) -> dict                        # one run + counts; 404 for others
    cat.runs(owner, *, agent=None, experiment=None, limit=50, offset=0) -> Page
    cat.episodes(owner, run_id, *, task=None, env=None, success=None, min_score=None,
                 agent=None, limit=50, offset=0) -> Page
    cat.index_run(run_dir) -> int                         # (re)index a run from its files
    cat.index_missing(runs_dir) -> list[str]              # runs it does not know (at start)
    cat.forget(run_id, session_id=None)                   # after retention deleted files

A ``Page`` is ``{"items": [...], "total": n, "limit": l, "offset": o, "next_offset": o2|None}``.
A run row: ``run_id, shared, created, tags{agent, experiment, config, ...}, episodes, sessions,
successes, mean_score, last_ended``; an episode row: ``run_id, session_id, episode, env, task,
seed, agent, score, success, steps, duration_s, error, version, ended``.

The recordings on disk (:mod:`palaestra.recording`) are the truth; this index only finds them
fast. It is written when an episode ends (the session manager calls :meth:`add`) and can be
rebuilt from the files (:meth:`index_run`). Everything is owner-scoped: a run belongs to the
API key that made it, and another key gets the same 404 as for no run at all. It shares the
job store's way of opening SQLite (:func:`palaestra.server.jobs.connect`).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palaestra import recording
from palaestra.errors import Conflict, InvalidRequest, NotFound
from palaestra.server.jobs import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created REAL NOT NULL,
    tags TEXT NOT NULL,
    agent TEXT,
    experiment TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, created);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    episode INTEGER NOT NULL,
    owner TEXT NOT NULL,
    env TEXT,
    task TEXT,
    seed INTEGER,
    agent TEXT,
    score REAL NOT NULL,
    success INTEGER NOT NULL,
    steps INTEGER NOT NULL,
    duration_s REAL,
    error TEXT,
    version TEXT,
    ended REAL,
    PRIMARY KEY (run_id, session_id, episode)
);
CREATE INDEX IF NOT EXISTS episodes_by_run ON episodes (run_id, ended);
CREATE TABLE IF NOT EXISTS sessions (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (run_id, session_id)
);
"""
_EPISODE = (
    "run_id",
    "session_id",
    "episode",
    "owner",
    "env",
    "task",
    "seed",
    "agent",
    "score",
    "success",
    "steps",
    "duration_s",
    "error",
    "version",
    "ended",
)
#: SQLite's largest integer: a larger offset is a 422, not an OverflowError (a 500)
MAX_OFFSET = 2**63 - 1
MAX_PAGE = 500
#: the owner of a run every key writes to (each key still sees only its own episodes)
SHARED = "*"


@dataclass
class RunQuery:
    """Which runs a listing shows (``GET /v1/runs``'s query parameters), a page at a time."""

    agent: str | None = None
    experiment: str | None = None
    limit: int = 50
    offset: int = 0


@dataclass
class EpisodeQuery:
    """Which episodes of a run a listing shows (``GET /v1/runs/{run}/episodes``'s query
    parameters), a page at a time."""

    task: str | None = None
    env: str | None = None
    success: bool | None = None
    min_score: float | None = None
    agent: str | None = None
    limit: int = 50
    offset: int = 0


class EpisodeCatalog:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect(self.path, _SCHEMA)

    # ----- writing --------------------------------------------------------------------------
    def claim_run(
        self, run_id: str, owner: str, tags: dict[str, str] | None = None, shared: bool = False
    ) -> dict:
        """The run named ``run_id``, made for ``owner`` if new. A name another key holds is a
        409 (names are global, like folders under ``runs_dir``). A ``shared`` run (the
        gateway's default, ``live``) is every key's, and each sees only its own episodes."""
        if shared:
            owner = SHARED
        if not recording.RUN_NAME.match(run_id):
            raise InvalidRequest(
                "run must be 1-64 letters, digits, '.', '_' or '-', not starting with a symbol",
                field="run",
            )
        tags = dict(tags or {})
        with self._lock:
            row = self._db.execute(
                "SELECT owner, tags FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        owner,
                        time.time(),
                        json.dumps(tags),
                        tags.get("agent"),
                        tags.get("experiment"),
                    ),
                )
            elif row[0] != owner and row[0] != SHARED:
                raise Conflict(
                    f"run {run_id!r} belongs to another API key; name another", field="run"
                )
            else:  # the run's own tags; a later session's are the same run's
                tags = {**json.loads(row[1]), **tags}
        return {"run_id": run_id, "owner": owner, "tags": tags}

    def add_session(self, run_id: str, session_id: str, owner: str) -> None:
        """A recorded session joined the run (listed before any of its episodes ends)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?)",
                (run_id, session_id, owner, time.time()),
            )

    def add(self, summary: dict[str, Any]) -> None:
        values = tuple(summary.get(c) for c in _EPISODE)
        marks = ", ".join("?" for _ in _EPISODE)
        with self._lock:
            self._db.execute(f"INSERT OR REPLACE INTO episodes VALUES ({marks})", values)

    def index_run(self, run_dir: Path) -> int:
        """(Re)index a run from its recordings (e.g. one recorded before the catalog existed);
        the number of episodes indexed. Unreadable lines are skipped, as everywhere."""
        meta = recording.ensure_run(run_dir, None)
        sessions = sorted(p.parent for p in run_dir.glob("*/session.json"))
        owners = set()
        count = 0
        for sdir in sessions:
            with contextlib.suppress(OSError, ValueError):
                who = str(json.loads((sdir / "session.json").read_text()).get("owner"))
                owners.add(who)
                self.add_session(run_dir.name, sdir.name, who)
            for ep in recording.episodes(sdir):
                self.add(ep)
                count += 1
        owner = meta.get("owner") or (owners.pop() if len(owners) == 1 else None)
        # a run several keys wrote to (the old default, ``live``) stays shared
        with contextlib.suppress(Conflict):  # re-indexing a run another key holds changes nothing
            self.claim_run(run_dir.name, str(owner), meta.get("tags"), shared=owner is None)
        return count

    def index_missing(self, runs_dir: Path) -> list[str]:
        """Index the runs under ``runs_dir`` the catalog does not know (recorded before it
        existed, or by another tool); their names. Run once when the gateway starts."""
        with self._lock:
            known = {r for (r,) in self._db.execute("SELECT run_id FROM runs")}
        found = []
        for meta in sorted(Path(runs_dir).glob("*/run.json")):
            if meta.parent.name not in known and recording.RUN_NAME.match(meta.parent.name):
                self.index_run(meta.parent)
                found.append(meta.parent.name)
        return found

    def forget(self, run_id: str, session_id: str | None = None) -> None:
        with self._lock:
            if session_id is None:
                self._db.execute("DELETE FROM episodes WHERE run_id = ?", (run_id,))
                self._db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
                self._db.execute("DELETE FROM sessions WHERE run_id = ?", (run_id,))
            else:
                self._db.execute(
                    "DELETE FROM episodes WHERE run_id = ? AND session_id = ?",
                    (run_id, session_id),
                )
                self._db.execute(
                    "DELETE FROM sessions WHERE run_id = ? AND session_id = ?",
                    (run_id, session_id),
                )

    # ----- reading --------------------------------------------------------------------------
    def run(self, owner: str, run_id: str) -> dict[str, Any]:
        page = self._runs(owner, "r.run_id = ?", [run_id], 1, 0)
        if not page["items"]:
            raise NotFound(f"no run {run_id!r} for this API key", run_id=run_id)
        return dict(page["items"][0])

    def runs(self, owner: str, query: RunQuery | None = None, **given: Any) -> dict[str, Any]:
        """A page of the owner's runs that ``query`` (or the ``given`` fields of one) admits."""
        q = query or RunQuery(**given)
        where, args = ["1"], []
        for column, value in (("agent", q.agent), ("experiment", q.experiment)):
            if value is not None:
                where.append(f"r.{column} = ?")
                args.append(value)
        return self._runs(owner, " AND ".join(where), args, q.limit, q.offset)

    def _runs(
        self, owner: str, where: str, args: list[Any], limit: int, offset: int
    ) -> dict[str, Any]:
        """The owner's runs, and the shared ones where the owner has episodes."""
        limit, offset = _paging(limit, offset)
        sql = (
            "SELECT r.run_id, r.owner, r.created, r.tags, COUNT(e.episode), "
            "COALESCE(SUM(e.success), 0), AVG(e.score), MAX(e.ended) "
            "FROM runs r LEFT JOIN episodes e ON e.run_id = r.run_id AND e.owner = ? "
            f"WHERE (r.owner = ? OR r.owner = '{SHARED}') AND {where} GROUP BY r.run_id "
            f"HAVING r.owner != '{SHARED}' OR EXISTS (SELECT 1 FROM sessions s "
            "WHERE s.run_id = r.run_id AND s.owner = ?)"
        )
        page = f"{sql} ORDER BY r.created DESC, r.run_id LIMIT ? OFFSET ?"
        with self._lock:
            rows = self._db.execute(page, (owner, owner, *args, owner, limit, offset)).fetchall()
            total = self._db.execute(
                f"SELECT COUNT(*) FROM ({sql})", (owner, owner, *args, owner)
            ).fetchone()
            members = {
                r[0]: [
                    sid
                    for (sid,) in self._db.execute(
                        "SELECT session_id FROM sessions WHERE run_id = ? AND owner = ? "
                        "ORDER BY created",
                        (r[0], owner),
                    )
                ]
                for r in rows
            }
        items = [
            {
                "run_id": r[0],
                "shared": r[1] == SHARED,
                "created": r[2],
                "tags": json.loads(r[3]),
                "episodes": r[4],
                "successes": r[5],
                "mean_score": None if r[6] is None else round(r[6], 4),
                "last_ended": r[7],
                "sessions": members[r[0]],
            }
            for r in rows
        ]
        return _page(items, total[0], limit, offset)

    def episodes(
        self, owner: str, run_id: str, query: EpisodeQuery | None = None, **given: Any
    ) -> dict[str, Any]:
        """A page of the run's episodes of the owner that ``query`` (or the ``given`` fields of
        one) admits."""
        q = query or EpisodeQuery(**given)
        self.run(owner, run_id)  # 404 unless the owner's
        limit, offset = _paging(q.limit, q.offset)
        where, args = ["run_id = ?", "owner = ?"], list[Any]([run_id, owner])
        for column, value in (("task", q.task), ("env", q.env), ("agent", q.agent)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        success, min_score = q.success, q.min_score
        if success is not None:
            where.append("success = ?")
            args.append(int(success))
        if min_score is not None:
            where.append("score >= ?")
            args.append(min_score)
        cond = " AND ".join(where)
        sql = (
            f"SELECT {', '.join(_EPISODE)} FROM episodes WHERE {cond} "
            "ORDER BY ended, session_id, episode LIMIT ? OFFSET ?"
        )
        with self._lock:
            rows = self._db.execute(sql, (*args, limit, offset)).fetchall()
            total = self._db.execute(f"SELECT COUNT(*) FROM episodes WHERE {cond}", args)
            count = total.fetchone()[0]
        items = []
        for row in rows:
            item = dict(zip(_EPISODE, row, strict=True))
            item.pop("owner")
            item["success"] = bool(item["success"])
            items.append(item)
        return _page(items, count, limit, offset)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _paging(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit must be 1..{MAX_PAGE}", field="limit")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidRequest(f"offset must be 0..{MAX_OFFSET}", field="offset")
    return limit, offset


def _page(items: list[dict[str, Any]], total: int, limit: int, offset: int) -> dict[str, Any]:
    nxt = offset + len(items)
    return {
        "items": items,
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": nxt if nxt < total else None,
    }
