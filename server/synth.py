"""Synthesis jobs: ``POST /v1/synth/jobs`` runs the synthesis pipeline in a process of its own.

Synthesis drives browsers and validates tasks for minutes, so a job runs
:func:`~palaestra.synthesis.pipeline.synthesize` in a child process
(:class:`~palaestra.synthesis.process.SynthesisProcess`: the gateway never runs env code in its
event loop, a crash fails the job and never the gateway, a cancel stops the job's browsers with
it) and follows the structured events it sends over a pipe: its progress, then its report or
its error. The suite is written to a hidden ``.<name>.<job>.partial`` folder beside its final
place and renamed in only when the job succeeds: suite discovery skips hidden folders, so no
reader ever sees half a suite, and a failed job leaves nothing behind. Jobs are refused (429)
rather than queued beyond ``synth_jobs``: a queue of hour-long jobs is a queue no one watches.
Jobs are kept in the gateway's persistent job store (:mod:`palaestra.server.jobs`), so they
survive a restart; one interrupted by it is resumed by running it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from palaestra import tasks
from palaestra.errors import Conflict
from palaestra.server.jobs import (
    Job,
    JobFailed,
    JobManager,
    JobStore,
    scrub,
    server_paths,
)
from palaestra.server.models import CreateSynthJob
from palaestra.server.settings import Settings
from palaestra.synthesis.events import Failed, Finished, Progress
from palaestra.synthesis.process import SynthesisProcess

log = logging.getLogger("palaestra.server")


class SynthJobManager(JobManager):
    """Synthesis jobs, kept in the gateway's job store (``server/jobs.py``). Resuming an
    interrupted job runs the pipeline again from the start: the seed is fixed, so the suite it
    makes is the one the interrupted run would have made."""

    kind = "synth"
    noun = "synthesis jobs"

    def __init__(self, settings: Settings, store: JobStore) -> None:
        super().__init__(store, settings.synth_jobs, server_paths(settings))
        self.settings = settings

    @property
    def suites_dir(self) -> Path:
        return Path(self.settings.suites_dir)

    def create(self, owner: str, req: CreateSynthJob) -> Job:
        return self.submit(owner, req.model_dump(), {"name": req.name})

    def initial_progress(self) -> dict[str, Any]:
        return {"phase": "queued", "done": 0, "total": 0, "validated": 0, "dropped": 0}

    def check(self, job: Job, resuming: bool = False) -> None:
        name = job.meta["name"] = job.meta.get("name") or f"synth-{job.id}"
        taken = (
            name in tasks.suite_names()
            or (self.suites_dir / name).exists()
            or any(j.meta.get("name") == name for j in self.store.active(self.kind))
        )
        if taken:
            raise Conflict(
                f"a suite named {name!r} exists already; choose another 'name'",
                field="name",
                suite=name,
            )

    def public(self, job: Job) -> dict[str, Any]:
        """The job as its owner sees it: no server path (the report's ``out`` is dropped)."""
        shown = {
            **job.public(),
            "report": job.result,
            "suite": job.meta.get("name") if job.status == "succeeded" else None,
        }
        return dict(scrub(shown, self.paths))

    def process(self, job: Job, out: Path) -> SynthesisProcess:
        """The job's run of the pipeline (the command line's defaults for what a request does
        not set: two tasks validated at once, no LLM author)."""
        req = CreateSynthJob.model_validate(job.request)
        return SynthesisProcess(
            domains=list(req.domains),
            variants=req.variants,
            tasks=req.tasks,
            out=out,
            seed=req.seed,
            layouts=tuple(req.layouts),
            family=req.family,
            name=job.meta["name"],
        )

    async def work(self, job: Job) -> dict[str, Any] | None:
        name = job.meta["name"]
        self.suites_dir.mkdir(parents=True, exist_ok=True)
        staging = self.suites_dir / f".{name}.{job.id}.partial"
        final = self.suites_dir / name
        job.result = None
        run = self.process(job, staging)
        try:
            run.start()  # a few milliseconds; in a thread, a cancel could orphan the child
            error = await self._follow(job, run)
            code = await asyncio.to_thread(run.wait)
            if error is not None or code != 0:
                # its output (a traceback, paths) stays in the gateway's log, under an id
                cid, tail = secrets.token_hex(8), run.output_tail()
                log.error("[%s] synthesis job %s exited with %s:\n%s", cid, job.id, code, tail)
                raise JobFailed(
                    error
                    or f"the synthesis process exited with status {code}; "
                    f"its output is in the gateway's log (correlation_id {cid})"
                )
            if job.result is None:
                raise JobFailed("the synthesis process finished without a report")
            if not job.result.get("validated"):
                raise JobFailed(f"no task passed validation (dropped: {job.result.get('dropped')})")
            error = await asyncio.to_thread(self._publish, job, staging, final)
            if error:
                raise JobFailed(error)
            return job.result
        finally:
            await asyncio.to_thread(run.close)  # a running child is stopped, browsers and all
            with contextlib.suppress(OSError):
                shutil.rmtree(staging, ignore_errors=True)

    async def _follow(self, job: Job, run: SynthesisProcess) -> str | None:
        """Progress events update the job; the report is kept; an error is returned."""
        while (event := await asyncio.to_thread(run.next_event)) is not None:
            if isinstance(event, Progress):
                job.progress = asdict(event)
                self.store.save(job)
            elif isinstance(event, Finished):
                job.result = event.report
            elif isinstance(event, Failed):
                return event.error
        return None

    def _publish(self, job: Job, staging: Path, final: Path) -> str | None:
        """Rename the finished suite into place and load it once, so the first session on it
        does not pay for reading thousands of task files (and a broken suite fails the job)."""
        name = job.meta["name"]
        meta = json.loads((staging / "suite.json").read_text())
        if meta.get("name") != name:
            return f"the pipeline named the suite {meta.get('name')!r}, not {name!r}"
        if final.exists():
            return f"a suite {name!r} appeared while the job ran; this one was not installed"
        staging.rename(final)
        try:
            tasks.get_suite(name)
        except Exception as exc:
            shutil.rmtree(final, ignore_errors=True)
            return f"the suite does not load: {type(exc).__name__}: {exc}"
        return None
