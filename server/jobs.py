"""The gateway's long jobs (synthesis, evaluations): one persistent store, one life cycle.

Jobs outlive requests and must outlive the gateway too: an hour of synthesis or a thousand
evaluated episodes is not something a restart may silently forget. So every job is a row in one
SQLite file (``Settings.jobs_db``, under the gateway's home), written whenever the job changes
(status, progress, result), and read back by id. A job belongs to the API key that made it: a
key asking for another key's job gets the same 404 as for no job at all (as with sessions).

Life cycle: ``queued -> running -> succeeded | failed | cancelled``. A job still ``queued`` or
``running`` when its gateway stops is marked ``interrupted``: at a clean shutdown by the gateway
itself, after a crash by the next gateway that opens the store. To tell a crashed gateway's jobs
from those of a live gateway sharing the same home (tests run several), each store holds an
exclusive ``flock`` on a lock file of its own for as long as it is open; a job whose holder's lock
can be taken has no living holder. An interrupted (or cancelled) job can be resumed
(``POST .../resume``): it runs again under the same id, and each kind decides what resuming
means (a synthesis job starts over from its fixed seed; an evaluation continues from the
episodes it had finished).

:class:`JobStore` is the storage; :class:`JobManager` runs one kind of job in the gateway's event
loop (capacity, cancel, resume, shutdown) and leaves the work itself to a subclass's
:meth:`JobManager.work`.

Slots are shared fairly between keys. A kind has ``limit`` slots in a gateway; a key's *share*
is ``ceil(limit / n)``, ``n`` the keys holding a job of the kind here (running or waiting, the
asking key counted). A job starts at once while a slot is free; when none is, a key under its
share waits (the job stays ``queued``) and takes the next slot that frees, before any other
job; a key at or over its share is refused with 429. So a lone key may use every slot, and a
key that filled them cannot keep another key's jobs out: the newcomer runs as soon as one of
them ends. Running jobs are never stopped to make room (an hour of synthesis is not thrown
away), so the wait is at most the shortest of the running jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import math
import os
import secrets
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra.errors import CapacityExceeded, Conflict, JobNotFound
from palaestra.paths import home
from palaestra.server.settings import Settings

log = logging.getLogger("palaestra.server")
ACTIVE = ("queued", "running")
#: the states a job may be resumed from
RESUMABLE = ("interrupted", "cancelled")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    meta TEXT NOT NULL,
    progress TEXT NOT NULL,
    result TEXT,
    error TEXT,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    runs INTEGER NOT NULL DEFAULT 0,
    holder TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (kind, owner, created);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status);
"""
_JSON_FIELDS = ("request", "meta", "progress", "result")
_COLUMNS = (
    "id",
    "kind",
    "owner",
    "status",
    *_JSON_FIELDS,
    "error",
    "created",
    "started",
    "finished",
    "runs",
    "holder",
)
#: the fields every kind shows its owner (after ``job_id``), in this order
_PUBLIC = ("status", "request", "progress", "error", "created", "started", "finished", "runs")


@dataclass
class Job:
    """One job as stored. ``request`` is the client's validated body; ``meta`` what the kind
    derived from it (a suite name, an output folder); ``result`` the kind's final report."""

    id: str
    kind: str
    owner: str
    request: dict[str, Any]
    status: str = "queued"
    meta: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    #: how many times the job was started (a resume starts it again)
    runs: int = 0
    holder: str | None = None

    def public(self) -> dict[str, Any]:
        """What every kind shows of a job (its id and :data:`_PUBLIC`); a manager adds its own
        fields."""
        return {"job_id": self.id, **{name: getattr(self, name) for name in _PUBLIC}}


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """The gateway's way to open one of its SQLite files (jobs, the episode catalog): shared
    between gateways (WAL), autocommit, short waits on a busy file, the schema ensured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    db.executescript(schema)
    return db


class JobStore:
    """Jobs in one SQLite file, safe to share between gateways (WAL, short transactions).

    Calls are short enough to make from the event loop (a write is a fraction of a
    millisecond); a lock serialises the threads that may call in.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect(self.path, _SCHEMA)
        # this store's liveness token: its lock file stays locked while the store is open
        self.holder = secrets.token_hex(8)
        self._holders = self.path.with_name(self.path.name + ".holders")
        self._holders.mkdir(exist_ok=True)
        self._held = os.open(self._holders / f"{self.holder}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._held, fcntl.LOCK_EX | fcntl.LOCK_NB)

    # ----- reading --------------------------------------------------------------------------
    def get(self, kind: str, owner: str, job_id: str) -> Job:
        """The owner's job of this kind; anything else (no such job, another key's) is a 404."""
        rows = self._select("id = ? AND kind = ? AND owner = ?", (job_id, kind, owner))
        if not rows:
            raise JobNotFound(f"no {kind} job {job_id!r} for this API key", job_id=job_id)
        return rows[0]

    def owned(self, kind: str, owner: str) -> list[Job]:
        return self._select("kind = ? AND owner = ? ORDER BY created", (kind, owner))

    def active(self, kind: str) -> list[Job]:
        return self._select("kind = ? AND status IN ('queued', 'running')", (kind,))

    def _select(self, where: str, args: tuple[Any, ...]) -> list[Job]:
        sql = f"SELECT {', '.join(_COLUMNS)} FROM jobs WHERE {where}"
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [_job(row) for row in rows]

    # ----- writing --------------------------------------------------------------------------
    def add(self, job: Job) -> Job:
        job.holder = self.holder
        values = _row(job)
        marks = ", ".join("?" for _ in values)
        with self._lock:
            self._db.execute(f"INSERT INTO jobs ({', '.join(_COLUMNS)}) VALUES ({marks})", values)
        return job

    def save(self, job: Job) -> None:
        """Write the job's changing fields (status, progress, result, timestamps)."""
        values = _row(job)
        sets = ", ".join(f"{c} = ?" for c in _COLUMNS[1:])
        with self._lock:
            self._db.execute(f"UPDATE jobs SET {sets} WHERE id = ?", (*values[1:], job.id))

    def recover(self) -> list[Job]:
        """Mark ``interrupted`` the queued and running jobs no living store holds (their
        gateway crashed or was killed); returns them."""
        found = []
        for job in self._select("status IN ('queued', 'running')", ()):
            if job.holder == self.holder or self._alive(job.holder):
                continue
            _interrupt(job, "the gateway stopped while the job ran; resume it to continue")
            self.save(job)
            found.append(job)
        for lock in self._holders.glob("*.lock"):  # the lock files of stores gone since
            if lock.stem != self.holder:
                self._alive(lock.stem)
        return found

    def _alive(self, holder: str | None) -> bool:
        if not holder:
            return False
        lock = self._holders / f"{holder}.lock"
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            lock.unlink()
        return False

    def close(self) -> None:
        with self._lock:
            self._db.close()
        with contextlib.suppress(OSError):
            (self._holders / f"{self.holder}.lock").unlink()
        os.close(self._held)


def _row(job: Job) -> tuple[Any, ...]:
    return tuple(
        json.dumps(getattr(job, c)) if c in _JSON_FIELDS else getattr(job, c) for c in _COLUMNS
    )


def _job(row: tuple[Any, ...]) -> Job:
    values = dict(zip(_COLUMNS, row, strict=True))
    for name in _JSON_FIELDS:
        values[name] = json.loads(values[name]) if values[name] is not None else None
    return Job(**values)


def _interrupt(job: Job, why: str) -> None:
    job.status, job.error, job.finished = "interrupted", why, time.time()
    job.progress = {**job.progress, "phase": "interrupted"}


class JobFailed(Exception):
    """Raised by :meth:`JobManager.work` to fail the job with this message (no traceback)."""


def server_paths(settings: Settings | None = None) -> dict[str, str]:
    """Where the gateway keeps things (its folders, its home, its installation), as the text
    :func:`scrub` replaces by a name: ``{"/srv/pal/evals": "<evals_dir>", ...}``."""
    import palaestra

    found: list[tuple[str, Path | str]] = []
    if settings is not None:
        found += [
            ("<evals_dir>", settings.evals_dir),
            ("<suites_dir>", settings.suites_dir),
            ("<runs_dir>", settings.runs_dir),
            ("<jobs_db>", settings.jobs_db),
        ]
    found += [("<home>", home()), ("<install>", Path(palaestra.__file__).parents[1])]
    found += [("<python>", sys.prefix), ("<python>", sys.base_prefix)]
    out: dict[str, str] = {}
    for name, path in found:
        for form in {str(Path(path)), str(Path(path).resolve())}:
            if form != "/":
                out.setdefault(form, name)
    # the longest first, so a folder inside another is named by itself
    return dict(sorted(out.items(), key=lambda kv: -len(kv[0])))


#: fields of a job's result that say where it was written on the server
_PATH_FIELDS = ("out",)


def scrub(value: Any, paths: dict[str, str]) -> Any:
    """``value`` with the server's paths replaced by their names and ``out`` fields dropped:
    a job's result or error reaches its owner, who has no business with the server's disk."""
    if isinstance(value, str):
        for path, name in paths.items():
            value = value.replace(path, name)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, paths) for k, v in value.items() if k not in _PATH_FIELDS}
    if isinstance(value, list):
        return [scrub(v, paths) for v in value]
    return value


class JobManager:
    """Runs one kind of job in the gateway's event loop, persisting it through the store.

    Subclasses set :attr:`kind` and :attr:`noun`, implement :meth:`work` (which updates the
    job's progress through :meth:`update` and returns its result) and may override
    :meth:`public` and :meth:`check` (extra refusals at submission).
    """

    kind = "job"
    noun = "jobs"

    def __init__(self, store: JobStore, limit: int, paths: dict[str, str] | None = None) -> None:
        """``paths``: the server's paths (:func:`server_paths`), kept out of results and
        errors."""
        self.store = store
        self.limit = limit
        self.paths = paths if paths is not None else server_paths()
        self.runners: dict[str, asyncio.Task[None]] = {}
        #: the running jobs' owners, and the jobs waiting for a slot (oldest first)
        self._running: dict[str, str] = {}
        self.waiting: list[Job] = []
        self._cancelled: set[str] = set()

    # ----- what routes call -----------------------------------------------------------------
    def get(self, owner: str, job_id: str) -> Job:
        return self.store.get(self.kind, owner, job_id)

    def owned(self, owner: str) -> list[Job]:
        return self.store.owned(self.kind, owner)

    def submit(
        self, owner: str, request: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> Job:
        self._admit(owner)
        job = Job(secrets.token_hex(6), self.kind, owner, request, meta=dict(meta or {}))
        job.progress = self.initial_progress()
        self.check(job)
        self.store.add(job)
        self._enqueue(job)
        return job

    async def cancel(self, owner: str, job_id: str, wait_s: float = 30.0) -> Job:
        """Stop a queued or running job and wait (up to ``wait_s``) for it to wind down; the
        answer is the job as it then is. Cancelling a finished job changes nothing, so a
        client may repeat the call."""
        job = self.get(owner, job_id)
        runner = self.runners.get(job.id)
        waiting = next((j for j in self.waiting if j.id == job.id), None)
        if waiting is not None:  # never started: nothing to wind down
            self.waiting.remove(waiting)
            waiting.status, waiting.error = "cancelled", "cancelled by its owner"
            waiting.finished = time.time()
            self.update(waiting, phase="cancelled")
        elif job.status in ACTIVE and runner is not None and not runner.done():
            self._cancelled.add(job.id)
            runner.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.wait(job.id)), wait_s)
        return self.get(owner, job_id)

    def resume(self, owner: str, job_id: str) -> Job:
        job = self.get(owner, job_id)
        if job.status not in RESUMABLE:
            raise Conflict(
                f"{self.kind} job {job_id!r} is {job.status}; only an interrupted or a "
                "cancelled job resumes",
                job_id=job_id,
                job_status=job.status,
            )
        self._admit(owner)
        self.check(job, resuming=True)
        job.status, job.error, job.finished = "queued", None, None
        job.progress = {**job.progress, "phase": "queued"}
        job.holder = self.store.holder
        self.store.save(job)
        self._enqueue(job)
        return job

    async def wait(self, job_id: str) -> None:
        """Until the job's runner in this gateway has finished (tests, shutdown)."""
        runner = self.runners.get(job_id)
        if runner is not None:
            await asyncio.gather(runner, return_exceptions=True)

    # ----- for subclasses -------------------------------------------------------------------
    def initial_progress(self) -> dict[str, Any]:
        return {"phase": "queued"}

    def check(self, job: Job, resuming: bool = False) -> None:
        """Refuse a job before it is stored or resumed (raise a PalaestraError)."""

    async def work(self, job: Job) -> dict[str, Any] | None:
        """Do the job; return its result, or raise :class:`JobFailed`."""
        raise NotImplementedError

    def public(self, job: Job) -> dict[str, Any]:
        return job.public()

    def update(self, job: Job, **progress: Any) -> None:
        """Record progress (persisted at once: it is what a restart resumes from)."""
        job.progress = {**job.progress, **progress}
        self.store.save(job)

    # ----- slots, shared fairly between keys (the module's docstring) ------------------------
    def held(self, owner: str) -> int:
        """The owner's jobs of this kind here, running or waiting for a slot."""
        running = sum(1 for who in self._running.values() if who == owner)
        return running + sum(1 for j in self.waiting if j.owner == owner)

    def share(self, owner: str) -> int:
        """The slots ``owner`` may hold while other keys wait: ``ceil(limit / keys)``."""
        keys = {*self._running.values(), *(j.owner for j in self.waiting), owner}
        return math.ceil(self.limit / len(keys))

    def _admit(self, owner: str) -> None:
        """Refuse (429) a job that could neither start nor wait for a slot fairly."""
        if len(self._running) + len(self.waiting) < self.limit:
            return  # a slot is free
        held, share = self.held(owner), self.share(owner)
        if held < share:
            return  # it waits, and takes the next slot
        raise CapacityExceeded(
            f"{len(self._running)} of at most {self.limit} {self.noun} are running and this "
            f"API key holds {held}, its share while other keys wait; retry when one has "
            "finished",
            limit=self.limit,
            share=share,
            retry_after_s=30,
        )

    def _enqueue(self, job: Job) -> None:
        self.waiting.append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        """Start waiting jobs while slots are free: first the job of the key running the
        fewest, then the oldest."""
        while self.waiting and len(self._running) < self.limit:
            running = [*self._running.values()]
            job = min(self.waiting, key=lambda j: running.count(j.owner))
            self.waiting.remove(job)
            self._start(job)

    def _start(self, job: Job) -> None:
        self._running[job.id] = job.owner
        self.runners[job.id] = asyncio.create_task(self._run(job), name=f"{self.kind}-{job.id}")

    async def _run(self, job: Job) -> None:
        job.status, job.started, job.runs = "running", time.time(), job.runs + 1
        self.update(job, phase="starting")
        try:
            job.result = scrub(await self.work(job), self.paths)
            job.status, job.error = "succeeded", None
        except asyncio.CancelledError:
            if job.id in self._cancelled:
                job.status, job.error = "cancelled", "cancelled by its owner"
            else:  # the gateway is shutting down: the job resumes later
                _interrupt(job, "the gateway shut down while the job ran; resume it to continue")
                self.store.save(job)
                raise
        except JobFailed as exc:
            job.status, job.error = "failed", scrub(str(exc), self.paths)
        except Exception as exc:  # a job's failure is reported on the job, never raised
            log.error("%s job %s failed", self.kind, job.id, exc_info=exc)
            job.status, job.error = "failed", scrub(f"{type(exc).__name__}: {exc}", self.paths)
        finally:
            self._cancelled.discard(job.id)
            self.runners.pop(job.id, None)
            self._running.pop(job.id, None)
        job.finished = time.time()
        self.update(job, phase=job.status)
        self._dispatch()  # its slot goes to the next waiting job

    async def close_all(self) -> None:
        """Stop this gateway's runners; their jobs, and those waiting, are left
        ``interrupted``."""
        for job in self.waiting:
            _interrupt(job, "the gateway shut down before the job started; resume it to run it")
            self.store.save(job)
        self.waiting.clear()
        runners = [r for r in self.runners.values() if not r.done()]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
