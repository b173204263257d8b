"""Evaluation jobs: ``POST /v1/evals`` runs :func:`palaestra.evals.run_eval` inside the gateway.

A job is a built-in agent (``oracle``, ``random``, ``noop``, or ``openai:MODEL`` on the
operator's model endpoint) over a suite's tasks. The runner works as it does for ``palaestra
eval``, in a thread of its own (with its own event loop, so it never blocks the gateway's); it
appends each finished episode to ``results.jsonl`` under ``<evals_dir>/<job_id>/`` and writes the
summary. Resuming an interrupted or cancelled job calls the runner again on the same folder: it
skips the episodes already there.

Its sessions are this gateway's own (:class:`OwnSessions`): made by the session manager on the
workers, like any client's, but handed to the runner directly rather than over HTTP, so a job
neither needs an API key nor loses its sessions while the gateway shuts down (jobs stop first).

Privilege: the scripted agents read the task's oracle, so they are played here, in the gateway
process, and only their actions go to the sessions; those sessions belong to an owner private to
the job (no API key stands for it), are not recorded, and their ids are left out of the results,
so the caller never sees, steps or replays an oracle's episode. Env code still runs on the
workers, never in the gateway process, so the Docker and Ray backends and the families that need
a root worker behave as for any session. A model agent's sessions belong to the caller (recorded
into the caller's runs like any session), since a model sees only what any agent sees. The model
endpoint and its key are the operator's (``llm_url``, ``llm_key``): a client names the model,
never where it is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from palaestra import tasks
from palaestra.errors import InvalidRequest, PalaestraError
from palaestra.evals import EvalConfig, read_results, run_eval
from palaestra.server.catalog import SuiteCatalog
from palaestra.server.jobs import Job, JobFailed, JobManager, JobStore, scrub, server_paths
from palaestra.server.models import CreateEval, CreateSession
from palaestra.server.sessions import Session, SessionManager
from palaestra.server.settings import Settings
from palaestra.spaces import space_from_json
from palaestra.steps import ResetReply, StepReply

T = TypeVar("T")

#: the agents a client may ask the gateway to run (plus ``openai:MODEL``)
SCRIPTED = ("oracle", "random", "noop")
#: how long a cancel or a shutdown waits for the runner to finish its episodes in flight
_STOP_WAIT_S = 60.0
#: per-episode fields only the job's privileged sessions would fill (never shown for them)
_PRIVATE_FIELDS = ("session_id", "trajectory")


def agent_choices() -> list[str]:
    return [*SCRIPTED, "openai:MODEL"]


class EvalJobManager(JobManager):
    kind = "eval"
    noun = "evaluation jobs"

    def __init__(
        self, settings: Settings, store: JobStore, suites: SuiteCatalog, sessions: SessionManager
    ) -> None:
        super().__init__(store, settings.eval_jobs, server_paths(settings))
        self.settings = settings
        self.suites = suites
        self.sessions = sessions

    # ----- submission -----------------------------------------------------------------------
    def create(self, owner: str, body: CreateEval) -> Job:
        """Start a job whose body :meth:`validate` accepted (in the event loop)."""
        return self.submit(owner, body.model_dump(), {})

    def validate(self, body: CreateEval) -> None:
        """Refuse an unknown agent, suite or task, naming the field and what exists (call it
        in a thread: it may load the suite)."""
        if body.agent not in SCRIPTED:
            model = body.agent.removeprefix("openai:") if body.agent.startswith("openai:") else ""
            if not model:
                raise InvalidRequest(
                    f"unknown agent {body.agent!r}; the gateway runs {', '.join(agent_choices())}",
                    field="agent",
                    choices=agent_choices(),
                )
            if not self.settings.llm_url:
                raise InvalidRequest(
                    "this gateway has no model endpoint: its operator sets PALAESTRA_LLM_URL "
                    f"(and PALAESTRA_LLM_KEY) to run {body.agent!r}; it runs "
                    f"{', '.join(SCRIPTED)}",
                    field="agent",
                    choices=list(SCRIPTED),
                )
        elif body.agent_options:
            raise InvalidRequest(f"agent {body.agent!r} takes no options", field="agent_options")
        names = tasks.suite_names()
        if body.suite not in names:
            raise InvalidRequest(
                f"unknown suite {body.suite!r}; suites: {', '.join(names)}",
                field="suite",
                choices=names,
            )
        suite = self.suites.load(body.suite)
        known = {t.id for t in suite.tasks}
        missing = [t for t in body.tasks if t not in known]
        if missing:
            sample = ", ".join(sorted(known)[:10])
            raise InvalidRequest(
                f"suite {body.suite!r} has no task {missing[0]!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                + f"; its tasks include {sample} (GET /v1/suites/{body.suite}/tasks)",
                field="tasks",
            )

    # ----- the work -------------------------------------------------------------------------
    def out_dir(self, job: Job) -> Path:
        return Path(self.settings.evals_dir) / job.id

    def public(self, job: Job) -> dict[str, Any]:
        """The job as its owner sees it: no server path (the summary's ``out`` is dropped)."""
        shown = {**job.public(), "summary": job.result, "results": f"/v1/evals/{job.id}/results"}
        return dict(scrub(shown, self.paths))

    def initial_progress(self) -> dict[str, Any]:
        return {"phase": "queued", "done": 0, "total": 0, "succeeded": 0, "errors": 0}

    def config(self, job: Job) -> EvalConfig:
        """The runner's EvalConfig for this job: the client's choices plus the gateway's own."""
        body = CreateEval.model_validate(job.request)
        options: dict[str, Any] = dict(body.agent_options)
        scripted = body.agent in SCRIPTED
        key = None
        if not scripted:
            llm = self.settings.operator()
            options["base_url"] = llm.llm_url
            if llm.llm_key is not None:
                key = llm.llm_key.get_secret_value()
        return EvalConfig(
            **body.model_dump(exclude={"agent_options", "parallel"}),
            agent_options=options,
            parallel=min(body.parallel, self.settings.max_sessions_per_key),
            # excluded from every dump: never in config.json, the results or a response
            model_api_key=key,
            record=not scripted and self.settings.record,
            out=self.out_dir(job),
        )

    async def work(self, job: Job) -> dict[str, Any] | None:
        body = CreateEval.model_validate(job.request)
        # a scripted agent's sessions are the job's own; a model agent's are the caller's
        owner = f"eval:{job.id}" if body.agent in SCRIPTED else job.owner
        loop = asyncio.get_running_loop()
        tags = {"agent": body.agent, "suite": body.suite}
        sessions = OwnSessions(self, owner, loop, f"eval-{job.id}"[:64], tags)
        stop = threading.Event()

        def progress(event: Any) -> None:  # in the runner's thread
            figures = {k: v for k, v in vars(event).items() if k != "last"}
            loop.call_soon_threadsafe(lambda: self.update(job, phase="running", **figures))

        try:
            config = self.config(job)
            runner = asyncio.ensure_future(
                asyncio.to_thread(
                    run_eval, config, progress=progress, cancel=stop, sessions=sessions
                )
            )
            try:
                summary = await asyncio.shield(runner)
            except asyncio.CancelledError:
                # cancelled or shutting down: no new episodes, those in flight stop, the
                # finished ones stay in results.jsonl for a resume
                stop.set()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(runner, _STOP_WAIT_S)
                raise
        except PalaestraError as exc:
            raise JobFailed(exc.detail) from None
        return dict(summary.model_dump(mode="json"))

    # ----- results --------------------------------------------------------------------------
    def results(self, job: Job, offset: int, limit: int) -> dict[str, Any]:
        """The summary (None until the job ends) and a page of per-episode results (the last
        result of each episode: one replayed after an error replaces it)."""
        private = CreateEval.model_validate(job.request).agent in SCRIPTED
        try:
            episodes = read_results(self.out_dir(job))
        except InvalidRequest:  # nothing finished yet
            episodes = []
        page = [
            _shown(e.model_dump(mode="json"), private) for e in episodes[offset : offset + limit]
        ]
        shown = {
            "job_id": job.id,
            "status": job.status,
            "summary": job.result,
            "total": len(episodes),
            "offset": offset,
            "episodes": page,
        }
        return dict(scrub(shown, self.paths))


def _shown(line: dict[str, Any], private: bool) -> dict[str, Any]:
    if private:
        for name in _PRIVATE_FIELDS:
            line.pop(name, None)
    return line


class OwnSessions:
    """The runner's session factory (:class:`palaestra.evals.sessions.SessionFactory`) on this
    gateway's own session manager: the runner calls from its thread, each call runs in the
    gateway's event loop, and the replies are the JSON-ready dicts a client would receive."""

    def __init__(
        self,
        jobs: EvalJobManager,
        owner: str,
        loop: asyncio.AbstractEventLoop,
        run: str | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        """``run``: the named run (docs/data.md) recorded sessions join, with ``tags``."""
        self.jobs = jobs
        self.run = run
        self.tags = tags or {}
        self.manager = jobs.sessions
        self.owner = owner
        self.loop = loop
        self.opened: list[Session] = []

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` in the gateway's loop; cancelling the wait cancels it there too."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def tasks(self, suite: str, split: str | None = None) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.jobs.suites.views, suite, split)

    async def open(self, task: str, *, options: dict[str, Any], record: bool) -> OwnSession:
        req = CreateSession(task=task, options=options, record=record, run=self.run, tags=self.tags)
        (session,) = await self.call(self.manager.create(self.owner, req))
        return OwnSession(self, session)

    async def trajectory(self, session_id: str) -> str | None:
        settings = self.jobs.settings
        run = self.run or settings.run_id
        recorded = (settings.runs_dir / run / session_id).exists()
        return f"/v1/runs/{run}/sessions/{session_id}" if recorded else None

    async def aclose(self) -> None:
        """Sessions are closed by the runner; anything left is for the idle reaper."""


class OwnSession:
    def __init__(self, factory: OwnSessions, session: Session) -> None:
        self.factory = factory
        self.session: Session | None = session
        self.session_id: str | None = session.id
        space = space_from_json(session.spaces["action"])
        self.action_set = getattr(space, "action_set", None)

    def _live(self) -> Session:
        assert self.session is not None, "the session is closed"
        return self.session

    async def reset(self, seed: int | None) -> ResetReply:
        manager = self.factory.manager
        return await self.factory.call(manager.reset(self._live(), seed, None))

    async def step(self, action: Any) -> StepReply:
        return await self.factory.call(self.factory.manager.step(self._live(), action))

    async def close(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            with contextlib.suppress(PalaestraError):  # gone either way
                await self.factory.call(self.factory.manager.close(session))
