"""Sessions: ownership, capacity, routing to workers, serialisation, recording, reaping.

The manager is the only place that knows which worker hosts a session. Calls to one session
are serialised by a lock, so two clients stepping it at once are answered one after the other,
never interleaved. A worker death fails exactly the sessions it hosted; the next call on one of
them gets the reason, and the backend starts a replacement for new sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from palaestra import registry
from palaestra.errors import (
    CapacityExceeded,
    InvalidRequest,
    PalaestraError,
    SessionClosed,
    SessionNotFound,
    WorkerCrashed,
    WorkerError,
)
from palaestra.options import check_options, options_model
from palaestra.recording import SessionRecorder
from palaestra.redaction import Redactor
from palaestra.server.catalog import SuiteCatalog
from palaestra.server.episodes import EpisodeCatalog
from palaestra.server.metrics import Metrics
from palaestra.server.models import CreateSession
from palaestra.server.settings import Settings
from palaestra.steps import ResetReply, StepReply, public
from palaestra.workers.base import Backend, Worker

_CLOSED_MEMORY = 10_000


def owner_of(api_key: str | None) -> str:
    """Sessions are owned by a digest of the key, so keys never sit in memory dumps or runs."""
    if not api_key:
        return "anonymous"
    return hashlib.sha256(api_key.encode()).hexdigest()[:16]


@dataclass
class Session:
    id: str
    owner: str
    env_id: str
    task: str | None
    worker: Worker
    spaces: dict[str, Any]
    actions: str
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failure: PalaestraError | None = None
    recorder: SessionRecorder | None = None
    steps: int = 0
    waiting: int = 0
    step_counter: Any = None  # this env's labelled Prometheus counter, looked up once

    def public(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "env": self.env_id,
            "task": self.task,
            "worker": self.worker.name,
            "spaces": self.spaces,
            "actions": self.actions,
            "steps": self.steps,
            "failed": self.failure.detail if self.failure else None,
        }


class SessionManager:
    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        metrics: Metrics,
        suites: SuiteCatalog | None = None,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.metrics = metrics
        self.suites = suites or SuiteCatalog()
        self.sessions: dict[str, Session] = {}
        #: the operator's env settings, built once (settings do not change while serving)
        self.operator = settings.operator()
        self._redactor = Redactor(self.operator.secrets())
        #: closed session id -> (owner, why); only its owner hears why (others get a 404)
        self._closed: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._reserved = 0
        self._described: dict[str, dict[str, Any]] = {}
        #: named runs and the index of recorded episodes (server/episodes.py)
        self.episodes = EpisodeCatalog(
            settings.catalog_db or settings.runs_dir / ".catalog.sqlite3"
        )
        backend.on_worker_death = self._worker_died

    # ----- lookup and capacity -------------------------------------------------------------
    def get(self, owner: str, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None or session.owner != owner:
            if session is None and self._closed.get(sid, (None, ""))[0] == owner:
                raise self._closed_error(sid)
            # a foreign session is indistinguishable from a missing one
            raise SessionNotFound(f"no session {sid!r} for this API key", session_id=sid)
        return session

    def _closed_error(self, sid: str) -> SessionClosed:
        reason = self._closed.get(sid, (None, "closed"))[1]
        return SessionClosed(
            f"session {sid} is closed ({reason}); create a new one", session_id=sid
        )

    def owned(self, owner: str) -> list[Session]:
        return [s for s in self.sessions.values() if s.owner == owner]

    def _reserve(self, owner: str, count: int) -> None:
        limits = (
            (
                "the gateway hosts",
                len(self.sessions) + self._reserved,
                self.settings.max_sessions,
                "close some or retry later",
            ),
            (
                "this API key holds",
                len(self.owned(owner)),
                self.settings.max_sessions_per_key,
                "close some first",
            ),
        )
        for holder, held, limit, advice in limits:
            if held + count > limit:
                raise CapacityExceeded(
                    f"{holder} {held} of at most {limit} sessions; {advice}",
                    limit=limit,
                    retry_after_s=5,
                )
        self._reserved += count

    # ----- lifecycle -----------------------------------------------------------------------
    def prepare(
        self, req: CreateSession
    ) -> tuple[registry.EnvSpec, str | None, dict[str, Any], dict[str, Any]]:
        """The spec to build (a task names its own env; a clash is the caller's mistake) and
        the client's options checked against the env's options model (422 naming the field,
        before any worker is touched): (spec, task, constructor arguments with the operator's
        settings added, the client's own options as recorded). Loads the task's suite the
        first time: call it in a thread."""
        env, task, budget = req.env, req.task, None
        if task is not None:
            task_obj = self.suites.get_task(task)
            if env is not None and env != task_obj.env:
                raise InvalidRequest(
                    f"task {task!r} runs on {task_obj.env}, not {env}", field="env"
                )
            env, budget = task_obj.env, task_obj.max_steps
        assert env is not None
        spec = registry.spec(env)
        parsed = check_options(options_model(spec), req.options, budget)
        shown = parsed.model_dump(mode="json", exclude_unset=True)
        return spec, task, parsed.env_kwargs(self.operator), shown

    async def create(
        self, owner: str, req: CreateSession, count: int = 1, placement: str = "spread"
    ) -> list[Session]:
        """Create ``count`` sessions (a pool's members) all or nothing, within the limits.

        ``spread`` puts each on the least-loaded worker (on Ray, workers are spread over the
        nodes); ``pack`` puts them all on one worker, e.g. so a pool's members share its
        browser process and its machine.
        """
        spec, task, kwargs, shown = await run_in_threadpool(self.prepare, req)
        record = req.record if req.record is not None else self.settings.record
        run = self.episodes.claim_run(
            req.run or self.settings.run_id, owner, req.tags, shared=req.run is None
        )
        self._reserve(owner, count)
        worker = self.backend.pick() if placement == "pack" else None
        try:
            made = await asyncio.gather(
                *(
                    self._create(owner, spec, task, kwargs, record, worker, shown, run)
                    for _ in range(count)
                ),
                return_exceptions=True,
            )
        finally:
            self._reserved -= count
        sessions = [m for m in made if isinstance(m, Session)]
        failures = [m for m in made if isinstance(m, BaseException)]
        if failures:
            await asyncio.gather(*(self.close(s, "its batch failed to start") for s in sessions))
            raise failures[0]
        return sessions

    async def _create(
        self,
        owner: str,
        spec: registry.EnvSpec,
        task: str | None,
        options: dict[str, Any],
        record: bool,
        worker: Worker | None = None,
        shown: dict[str, Any] | None = None,
        run: dict[str, Any] | None = None,
    ) -> Session:
        worker = worker or self.backend.pick()
        sid = secrets.token_urlsafe(12)
        worker.sessions.add(sid)
        try:
            made = await self._make(worker, sid, spec, task, options, snapshot=record)
        except BaseException:
            worker.sessions.discard(sid)
            raise
        session = Session(sid, owner, spec.id, task, worker, made["spaces"], made["actions"])
        session.step_counter = self.metrics.steps.labels(env=spec.id)
        if record:
            run = run or {"run_id": self.settings.run_id, "tags": {}}
            session.recorder = SessionRecorder(
                self.settings.runs_dir / run["run_id"],
                sid,
                {"owner": owner, "env": spec.id, "task": task, "options": shown or {}},
                secrets=self._redactor.secrets,
                tags=run["tags"],
            )
            self.episodes.add_session(run["run_id"], sid, owner)
        self.sessions[sid] = session
        self.metrics.sessions_created.labels(env=spec.id).inc()
        self.metrics.sessions_active.set(len(self.sessions))
        return session

    @contextlib.asynccontextmanager
    async def _turn(self, session: Session) -> AsyncIterator[None]:
        """Calls on one session run one at a time; past a few waiting ones, refuse (429)."""
        if session.waiting >= self.settings.max_waiting_per_session:
            raise CapacityExceeded(
                f"session {session.id} already has {session.waiting} calls waiting; "
                "send the next one after an answer",
                session_id=session.id,
                retry_after_s=1,
            )
        session.waiting += 1
        try:
            await session.lock.acquire()
        finally:
            session.waiting -= 1
        try:
            # closed while this call waited, or under a WebSocket that still holds it
            if self.sessions.get(session.id) is not session:
                raise self._closed_error(session.id)
            yield
        finally:
            session.lock.release()

    async def _make(
        self,
        worker: Worker,
        sid: str,
        spec: registry.EnvSpec,
        task: str | None,
        options: dict[str, Any],
        snapshot: bool = False,
    ) -> dict[str, Any]:
        timeout = self.settings.create_timeout_s
        try:
            return await worker.call(
                "make",
                sid,
                timeout,
                spec=spec.to_json(),
                task=task,
                options=options,
                snapshot=snapshot,
            )
        except PalaestraError as exc:
            self._scrub(exc)
            raise

    def _scrub(self, exc: PalaestraError) -> PalaestraError:
        """The operator's secrets out of an error before it is answered, logged or recorded."""
        if self._redactor:
            exc.detail = self._redactor.text(exc.detail)
            exc.args = (exc.detail,)
            exc.fields = self._redactor.data(exc.fields)
        return exc

    async def describe(self, spec: registry.EnvSpec) -> dict[str, Any]:
        """Spaces and action text of an env with default options, built once on a worker."""
        if spec.id not in self._described:
            worker = self.backend.pick()
            sid = f"describe-{secrets.token_urlsafe(6)}"
            try:
                defaults = options_model(spec)().env_kwargs(self.operator)
                self._described[spec.id] = await self._make(worker, sid, spec, None, defaults)
            finally:
                with contextlib.suppress(PalaestraError):
                    await worker.call("close", sid, 10.0)
                worker.drop(sid)
        return self._described[spec.id]

    async def _call(self, session: Session, op: str, timeout: float, **payload: Any) -> Any:
        if session.failure is not None:
            raise session.failure
        session.last_used = time.monotonic()
        try:
            return await session.worker.call(op, session.id, timeout, **payload)
        except WorkerError as exc:  # timeouts, crashes: the session is failed, others go on
            self._fail(session, self._scrub(exc))
            raise
        except PalaestraError as exc:
            self._scrub(exc)
            raise
        finally:
            session.last_used = time.monotonic()

    async def reset(self, session: Session, seed: int | None, options: Any) -> ResetReply:
        async with self._turn(session):
            result: ResetReply = await self._call(
                session, "reset", self.settings.step_timeout_s, seed=seed, options=options
            )
            if session.recorder:
                session.recorder.reset(seed, result)
            return result

    async def step(self, session: Session, action: Any) -> StepReply:
        async with self._turn(session):
            t0 = time.perf_counter()
            reply = await self._call(session, "step", self.settings.step_timeout_s, action=action)
            result, privileged = public(reply)
            elapsed = time.perf_counter() - t0
            session.steps += 1
            session.step_counter.inc()
            self.metrics.step_seconds.observe(elapsed)
            if session.recorder:
                ended = session.recorder.step(action, result, privileged, elapsed * 1000)
                if ended is not None:
                    self.episodes.add(ended)
            return result

    async def render(self, session: Session) -> str:
        async with self._turn(session):
            result = await self._call(session, "render", self.settings.step_timeout_s)
            return str(result["png"])

    async def close(self, session: Session, reason: str = "closed by its owner") -> None:
        self.sessions.pop(session.id, None)
        self._remember_closed(session.id, session.owner, reason)
        session.worker.sessions.discard(session.id)
        self.metrics.sessions_active.set(len(self.sessions))
        if session.recorder:
            session.recorder.close()
        if session.failure is None and session.worker.alive:
            with contextlib.suppress(PalaestraError):
                await session.worker.call("close", session.id, 10.0)
        session.worker.drop(session.id)

    def _remember_closed(self, sid: str, owner: str, reason: str) -> None:
        self._closed[sid] = (owner, reason)
        while len(self._closed) > _CLOSED_MEMORY:
            self._closed.popitem(last=False)

    def _fail(self, session: Session, exc: PalaestraError) -> None:
        session.failure = exc
        self.metrics.errors.labels(type=exc.type_name).inc()
        if session.recorder:
            session.recorder.note("error", error=exc.to_problem())

    def _worker_died(self, worker: Worker, reason: str) -> None:
        self.metrics.worker_restarts.labels(backend=self.backend.name).inc()
        for sid in list(worker.sessions):
            session = self.sessions.get(sid)
            if session is not None and session.failure is None:
                session.failure = WorkerCrashed(
                    f"worker {worker.name} hosting session {sid} died ({reason}); "
                    "the session is lost, close it and create a new one",
                    worker=worker.name,
                    session_id=sid,
                )
                if session.recorder:
                    session.recorder.note("error", error=session.failure.to_problem())

    async def reap_idle(self) -> int:
        now = time.monotonic()
        idle = [
            s
            for s in self.sessions.values()
            if now - s.last_used > self.settings.idle_timeout_s and not s.lock.locked()
        ]
        for session in idle:
            await self.close(session, f"idle for more than {self.settings.idle_timeout_s:g} s")
        return len(idle)

    async def run_reaper(self) -> None:
        interval = max(0.05, min(30.0, self.settings.idle_timeout_s / 4))
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await self.close(session, "the gateway shut down")
