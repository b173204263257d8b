"""What the live dashboard shows of a caller's sessions, pools, jobs and the gateway's rates.

A session's last action, last error and latest screenshot come from the tail of its recording
(``events.jsonl``, written before each answer leaves the gateway), not from a hook in the step
path: the dashboard then costs the step route nothing, and a tick re-reads only the sessions
whose file grew since the last one (a ``stat`` each). Unrecorded sessions show their step count
and failure only.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson
from markupsafe import Markup

from palaestra.server.sessions import Session

#: how much of a recording's end is read to find its last event (observations can be large)
_TAILS = (8 * 1024, 256 * 1024)
_ACTION_CHARS = 160
#: live sessions a page of the dashboard shows (and its events keep current)
PAGE = 25
#: a row's last action, error and thumbnail are re-read at most this often (its step count
#: every tick): each new thumbnail in view is a request to the gateway
REREAD_S = 2.0


def image_url(run_id: str, sid: str, name: str) -> str:
    """The dashboard's owner-checked route to a recorded image."""
    return f"/dashboard/runs/{quote(run_id)}/sessions/{quote(sid)}/images/{quote(name)}"


def first_image(value: Any) -> str | None:
    """The file name of the first image a recorded observation names (the screenshot)."""
    if isinstance(value, dict):
        path = value.get("__file__")
        if isinstance(path, str):
            return path.rsplit("/", 1)[-1]
        for v in value.values():
            found = first_image(v)
            if found:
                return found
    return None


def action_text(action: Any) -> str:
    text = action if isinstance(action, str) else orjson.dumps(action).decode()
    return text if len(text) <= _ACTION_CHARS else text[: _ACTION_CHARS - 1] + "…"


def last_event(path: str) -> dict[str, Any] | None:
    """The last complete reset or step event of a recording (None if none is in its tail).
    A few KB are read first; the larger tail only when an observation outgrew them."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            for tail in _TAILS:
                fh.seek(max(0, size - tail))
                lines = fh.read().split(b"\n")
                for line in reversed(lines[1:] if size > tail else lines):
                    if b'"type":"step"' in line or b'"type":"reset"' in line:
                        try:
                            return dict(orjson.loads(line))
                        except orjson.JSONDecodeError:
                            continue  # a torn last line: the one before it is whole
                if size <= tail:
                    break
    except OSError:
        pass
    return None


def step_error(event: dict[str, Any]) -> str | None:
    """The error an agent was told about at this step: a malformed action or a verifier's."""
    obs = event.get("observation")
    if isinstance(obs, dict) and obs.get("last_action_error"):
        return str(obs["last_action_error"])
    info = event.get("info") or {}
    for key in ("last_action_error", "error"):
        if info.get(key):
            return str(info[key])
    verifier = info.get("verifier")
    if isinstance(verifier, dict) and verifier.get("error"):
        return str(verifier["error"])
    return None


@dataclass
class _Seen:
    size: int
    row: dict[str, Any]
    read: float = 0.0


@dataclass
class LiveSessions:
    """Rows of one owner's live sessions, re-read only where the recording grew."""

    seen: dict[str, _Seen] = field(default_factory=dict)

    def rows(self, sessions: list[Session], page: int = 0) -> dict[str, dict[str, Any]]:
        """The rows of one page of ``sessions`` (newest first)."""
        shown = sorted(sessions, key=lambda s: -s.created)[page * PAGE : (page + 1) * PAGE]
        out = {}
        for s in shown:
            out[s.id] = self.row(s)
        for gone in set(self.seen) - set(out):
            del self.seen[gone]
        return out

    def row(self, s: Session) -> dict[str, Any]:
        base = {
            "id": s.id,
            "env": s.env_id,
            "task": s.task or "",
            "worker": s.worker.name,
            "steps": s.steps,
            "failed": s.failure.detail if s.failure else None,
        }
        rec = s.recorder
        if rec is None:
            return {**base, "recorded": False}
        seen = self.seen.get(s.id)
        now = time.monotonic()
        if seen is None or now - seen.read >= REREAD_S:
            path = str(rec.dir / "events.jsonl")
            try:
                size = os.stat(path).st_size
            except OSError:
                size = -1
            if seen is None or seen.size != size:
                seen = _Seen(size, self._from_event(rec.run_id, s.id, last_event(path)))
                self.seen[s.id] = seen
            seen.read = now
        return {**base, **seen.row, "recorded": True, "run": rec.run_id}

    @staticmethod
    def _from_event(run_id: str, sid: str, event: dict[str, Any] | None) -> dict[str, Any]:
        if event is None:
            return {}
        image = first_image(event.get("observation"))
        return {
            "episode": event.get("episode"),
            "index": event.get("index", 0),
            "last_action": action_text(event["action"]) if "action" in event else "(reset)",
            "reward": event.get("reward"),
            "error": step_error(event),
            "thumb": image_url(run_id, sid, image) if image else None,
        }


def row_html(r: dict[str, Any]) -> Markup:
    """One live session's table row: on the page and, when it changes, in the events (plain
    string building: a tick renders every changed row, and a template call costs 5x more)."""
    e = html.escape
    sid = e(r["id"])
    if r.get("thumb"):
        thumb = f'<img src="{e(r["thumb"])}" alt="screenshot of {sid}" loading="lazy">'
    else:
        thumb = f'<span class="muted">{"no image" if r["recorded"] else "not recorded"}</span>'
    task = f'<br><span class="muted">{e(r["task"])}</span>' if r["task"] else ""
    ep = f'<br><span class="muted">ep {r["episode"]}</span>' if r.get("episode") else ""
    reward = r.get("reward")
    reward = f'<br><span class="muted">reward {reward}</span>' if reward is not None else ""
    link = ""
    if r.get("run"):
        query = f"?episode={r['episode']}" if r.get("episode") else ""
        link = f'<a href="/dashboard/runs/{e(quote(r["run"]))}/sessions/{sid}{query}">view</a>'
    return Markup(
        f'<tr id="s-{sid}"><td class="thumb">{thumb}</td>'
        f'<td><code>{sid}</code><br><span class="muted">{e(r["worker"])}</span></td>'
        f"<td>{e(r['env'])}{task}</td>"
        f'<td class="num steps">{r["steps"]}{ep}</td>'
        f'<td class="action"><code>{e(r.get("last_action") or "")}</code>{reward}</td>'
        f'<td class="bad">{e(r["failed"] or r.get("error") or "")}</td><td>{link}</td></tr>'
    )


def pool_rows(pools: Any, owner: str) -> list[dict[str, Any]]:
    """The owner's pools: size, members stepping right now, warm spares."""
    out = []
    for pool in list(pools.pools.values()):
        if pool.owner != owner or not pool.members:
            continue
        low, high = pool.bounds
        out.append(
            {
                "id": pool.id,
                "env": pool.members[0].task or pool.members[0].env_id,
                "size": len(pool.members),
                "busy": sum(m.lock.locked() for m in pool.members),
                "warm": len(pool.spares),
                "bounds": f"{low}..{high}",
            }
        )
    return out


def job_rows(manager: Any, kind: str, owner: str, limit: int = 10) -> list[dict[str, Any]]:
    """The owner's latest jobs of one kind with their progress (``done``/``total`` if known)."""
    jobs = sorted(manager.owned(owner), key=lambda j: j.created, reverse=True)[:limit]
    out = []
    for job in jobs:
        p = job.progress or {}
        done, total = p.get("done"), p.get("total")
        pct = round(100 * done / total) if isinstance(done, int) and total else None
        out.append(
            {
                "id": job.id,
                "kind": kind,
                "status": job.status,
                "phase": p.get("phase", ""),
                "done": done,
                "total": total,
                "pct": pct,
                "error": job.error,
                "created": job.created,
            }
        )
    return out


@dataclass
class Rates:
    """Step rate and latency over the last second or more, from the gateway's step histogram.
    One per gateway, shared by every viewer: a new or reconnecting page shows a rate at once,
    and several pages do not shorten each other's interval."""

    last: tuple[float, float, float] | None = None  # (time, count, sum)
    shown: dict[str, Any] = field(default_factory=dict)

    def tick(self, histogram: Any, min_s: float = 0.9) -> dict[str, Any]:
        now = time.monotonic()
        if self.last is not None and now - self.last[0] < min_s and self.shown:
            return self.shown
        count = total = 0.0
        for metric in histogram.collect():
            for sample in metric.samples:
                if sample.name.endswith("_count"):
                    count = sample.value
                elif sample.name.endswith("_sum"):
                    total = sample.value
        out: dict[str, Any] = {"steps_total": int(count), "step_rate": None, "latency_ms": None}
        if self.last is not None:
            dt, dn, ds = now - self.last[0], count - self.last[1], total - self.last[2]
            out["step_rate"] = round(dn / dt, 1) if dt > 0 else None
            out["latency_ms"] = round(1000 * ds / dn, 2) if dn else None
        elif count:
            out["latency_ms"] = round(1000 * total / count, 2)
        self.last, self.shown = (now, count, total), out
        return out
