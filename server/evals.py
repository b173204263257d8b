"""Evaluation jobs: ``POST /v1/evals`` runs :func:`palaestra.evals.run_eval` inside the gateway.

A job is a built-in agent (``oracle``, ``random``, ``noop``, or ``openai:MODEL`` on the
operator's model endpoint) over a suite's tasks. The runner works as it does for ``palaestra
eval``: it opens sessions on this very gateway over loopback, runs its episodes in a thread of
its own (with its own event loop, so it never blocks the gateway's), appends each finished
episode to ``results.jsonl`` under ``<evals_dir>/<job_id>/`` and writes the summary. Resuming an
interrupted or cancelled job calls the runner again on the same folder: it skips the episodes
already there.

Privilege: the scripted agents read the task's oracle, so they are played here, in the gateway
process, and only their actions go to the sessions; those sessions belong to an owner private to
the job (a random key the gateway accepts only while the job runs), are not recorded, and their
ids are left out of the results, so the caller never sees, steps or replays an oracle's episode.
A model agent's sessions belong to the caller (recorded into the caller's runs like any session),
since a model sees only what any agent sees. The model endpoint and its key are the operator's
(``llm_url``, ``llm_key``): a client names the model, never where it is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import secrets
import threading
from pathlib import Path
from typing import Any

from palaestra import tasks
from palaestra.errors import InvalidRequest, PalaestraError
from palaestra.server.catalog import SuiteCatalog
from palaestra.server.jobs import Job, JobFailed, JobManager, JobStore
from palaestra.server.models import CreateEval
from palaestra.server.settings import Settings

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

    def __init__(self, settings: Settings, store: JobStore, suites: SuiteCatalog) -> None:
        super().__init__(store, settings.eval_jobs)
        self.settings = settings
        self.suites = suites
        #: sha256 of a running job's private key -> the owner its sessions get
        self.internal_keys: dict[bytes, str] = {}
        #: the gateway's loopback address, learnt from the first request (see ``create``)
        self.base_url: str | None = None

    # ----- submission -----------------------------------------------------------------------
    def create(self, owner: str, body: CreateEval, base_url: str) -> Job:
        """Start a job whose body :meth:`validate` accepted (in the event loop)."""
        self.base_url = self.base_url or base_url
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
        return {
            **job.public(),
            "summary": job.result,
            "results": f"/v1/evals/{job.id}/results",
        }

    def initial_progress(self) -> dict[str, Any]:
        return {"phase": "queued", "done": 0, "total": 0, "succeeded": 0, "errors": 0}

    def config(self, job: Job, key: str) -> Any:
        """The runner's EvalConfig for this job: the client's choices plus the gateway's own."""
        from palaestra.evals import EvalConfig

        body = CreateEval.model_validate(job.request)
        options: dict[str, Any] = dict(body.agent_options)
        scripted = body.agent in SCRIPTED
        secret: dict[str, Any] = {}
        if not scripted:
            llm = self.settings.operator()
            options["base_url"] = llm.llm_url
            if llm.llm_key is not None and "model_api_key" in EvalConfig.model_fields:
                # excluded from every dump: never in config.json, results or a response
                secret["model_api_key"] = llm.llm_key.get_secret_value()
        return EvalConfig(
            **secret,
            suite=body.suite,
            tasks=body.tasks,
            agent=body.agent,
            agent_options=options,
            parallel=min(body.parallel, self.settings.max_sessions_per_key),
            attempts=body.attempts,
            seeds=body.seeds,
            max_steps=body.max_steps,
            limit=body.limit,
            record=not scripted and self.settings.record,
            url=self.base_url,
            api_key=key,
            out=self.out_dir(job),
        )

    async def work(self, job: Job) -> dict[str, Any] | None:
        from palaestra.evals import run_eval

        if self.base_url is None:
            raise JobFailed("the gateway's own address is unknown; resume the job")
        body = CreateEval.model_validate(job.request)
        key = secrets.token_urlsafe(32)
        digest = hashlib.sha256(key.encode()).digest()
        # a scripted agent's sessions are the job's own; a model agent's are the caller's
        self.internal_keys[digest] = f"eval-{job.id}" if body.agent in SCRIPTED else job.owner
        stop = threading.Event()
        loop = asyncio.get_running_loop()

        def progress(event: Any) -> None:
            figures = {
                k: getattr(event, k)
                for k in (
                    "done",
                    "total",
                    "succeeded",
                    "scored",
                    "errors",
                    "skipped",
                    "in_flight",
                    "episodes_per_min",
                    "elapsed_s",
                )
                if hasattr(event, k)
            }
            loop.call_soon_threadsafe(lambda: self.update(job, phase="running", **figures))

        try:
            config = self.config(job, key)
            runner = asyncio.ensure_future(
                asyncio.to_thread(run_eval, config, progress=progress, cancel=stop)
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
            raise JobFailed(exc.detail if hasattr(exc, "detail") else str(exc)) from None
        finally:
            self.internal_keys.pop(digest, None)
        return dict(summary.model_dump(mode="json"))

    # ----- results --------------------------------------------------------------------------
    def results(self, job: Job, offset: int, limit: int) -> dict[str, Any]:
        """The summary (None until the job ends) and a page of per-episode lines."""
        path = self.out_dir(job) / "results.jsonl"
        private = CreateEval.model_validate(job.request).agent in SCRIPTED
        lines: list[dict[str, Any]] = []
        total = 0
        with contextlib.suppress(FileNotFoundError), path.open() as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                if offset <= total < offset + limit:
                    with contextlib.suppress(ValueError):
                        lines.append(_shown(json.loads(raw), private))
                total += 1
        return {
            "job_id": job.id,
            "status": job.status,
            "summary": job.result,
            "total": total,
            "offset": offset,
            "episodes": lines,
        }


def _shown(line: dict[str, Any], private: bool) -> dict[str, Any]:
    if private:
        for name in _PRIVATE_FIELDS:
            line.pop(name, None)
    return line
