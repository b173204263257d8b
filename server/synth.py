"""Synthesis jobs: ``POST /v1/synth/jobs`` runs ``palaestra synth`` in a subprocess.

Synthesis drives browsers and validates tasks for minutes, so it runs as a child process (the
gateway never runs env code in its event loop) and reports through ``--json-progress`` lines on
its stdout. The suite is written to a hidden ``.<name>.<job>.partial`` folder beside its final
place and renamed in only when the job succeeds: suite discovery skips hidden folders, so no
reader ever sees half a suite, and a failed job leaves nothing behind. Jobs are refused (429)
rather than queued beyond ``synth_jobs``: a queue of hour-long jobs is a queue no one watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import sys
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra import tasks
from palaestra.errors import CapacityExceeded, Conflict, JobNotFound
from palaestra.server.models import CreateSynthJob
from palaestra.server.settings import Settings

ACTIVE = ("queued", "running")
#: finished jobs remembered for their owners to read back; the oldest are forgotten first
_FINISHED_MEMORY = 1000
_STDERR_TAIL_LINES = 40
log = logging.getLogger("palaestra.server")


@dataclass
class SynthJob:
    id: str
    owner: str
    request: CreateSynthJob
    name: str
    status: str = "queued"
    progress: dict[str, Any] = field(
        default_factory=lambda: {
            "phase": "queued",
            "done": 0,
            "total": 0,
            "validated": 0,
            "dropped": 0,
        }
    )
    report: dict[str, Any] | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    runner: asyncio.Task[None] | None = None

    def public(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "status": self.status,
            "request": self.request.model_dump(),
            "progress": self.progress,
            "report": self.report,
            "suite": self.name if self.status == "succeeded" else None,
            "error": self.error,
            "created": self.created,
            "started": self.started,
            "finished": self.finished,
        }


class SynthJobManager:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.jobs: OrderedDict[str, SynthJob] = OrderedDict()

    @property
    def suites_dir(self) -> Path:
        return Path(self.settings.suites_dir)

    def active(self) -> list[SynthJob]:
        return [j for j in self.jobs.values() if j.status in ACTIVE]

    def get(self, owner: str, job_id: str) -> SynthJob:
        job = self.jobs.get(job_id)
        if job is None or job.owner != owner:  # a foreign job is indistinguishable from none
            raise JobNotFound(f"no synthesis job {job_id!r} for this API key", job_id=job_id)
        return job

    def owned(self, owner: str) -> list[SynthJob]:
        return [j for j in self.jobs.values() if j.owner == owner]

    def submit(self, owner: str, req: CreateSynthJob) -> SynthJob:
        running = self.active()
        if len(running) >= self.settings.synth_jobs:
            raise CapacityExceeded(
                f"{len(running)} of at most {self.settings.synth_jobs} synthesis jobs are "
                "running; retry when one has finished",
                limit=self.settings.synth_jobs,
                retry_after_s=30,
            )
        job_id = secrets.token_hex(6)
        name = req.name or f"synth-{job_id}"
        taken = (
            name in tasks.suite_names()
            or (self.suites_dir / name).exists()
            or any(j.name == name for j in running)
        )
        if taken:
            raise Conflict(
                f"a suite named {name!r} exists already; choose another 'name'",
                field="name",
                suite=name,
            )
        job = SynthJob(job_id, owner, req, name)
        self.jobs[job_id] = job
        self._forget_old()
        job.runner = asyncio.create_task(self._run(job), name=f"synth-{job_id}")
        return job

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if j.status not in ACTIVE]
        for job in finished[: max(0, len(finished) - _FINISHED_MEMORY)]:
            del self.jobs[job.id]

    def command(self, job: SynthJob, out: Path) -> list[str]:
        req = job.request
        cmd = [sys.executable, "-m", "palaestra.cli", "synth"]
        for domain in req.domains:
            cmd += ["--domain", domain]
        for layout in req.layouts:
            cmd += ["--layout", layout]
        cmd += ["--family", req.family]
        cmd += ["--variants", str(req.variants), "--tasks", str(req.tasks)]
        cmd += ["--seed", str(req.seed), "--name", job.name, "--out", str(out)]
        return [*cmd, "--json-progress"]

    async def _run(self, job: SynthJob) -> None:
        from palaestra.workers.local import _child_env  # the same import path as the workers

        self.suites_dir.mkdir(parents=True, exist_ok=True)
        staging = self.suites_dir / f".{job.name}.{job.id}.partial"
        final = self.suites_dir / job.name
        stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        error: str | None = None
        proc: asyncio.subprocess.Process | None = None
        job.status, job.started = "running", time.time()
        job.progress = {**job.progress, "phase": "starting"}
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.command(job, staging),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_child_env(),
                limit=1 << 20,
                start_new_session=True,  # its browsers are stopped with it, as one group
            )
            assert proc.stdout is not None and proc.stderr is not None
            _, error = await asyncio.gather(
                _drain(proc.stderr, stderr_tail), self._follow(job, proc.stdout)
            )
            code = await proc.wait()
            if code != 0:
                # its stderr (a traceback, paths) stays in the gateway's log, under an id
                tail = "\n".join(stderr_tail).strip()[-2000:]
                cid = secrets.token_hex(8)
                log.error("[%s] synthesis job %s exited with %s:\n%s", cid, job.id, code, tail)
                error = error or (
                    f"palaestra synth exited with status {code}; "
                    f"its output is in the gateway's log (correlation_id {cid})"
                )
            elif job.report is None:
                error = "palaestra synth finished without a report"
            elif not job.report.get("validated"):
                error = f"no task passed validation (dropped: {job.report.get('dropped')})"
            else:
                error = await asyncio.to_thread(self._publish, job, staging, final)
        except asyncio.CancelledError:
            error = "the gateway shut down"
            raise
        except Exception as exc:  # a job's failure is reported on the job, never raised
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if proc is not None and proc.returncode is None:
                await _stop(proc)
            with contextlib.suppress(OSError):
                shutil.rmtree(staging, ignore_errors=True)
            job.status = "failed" if error else "succeeded"
            job.error = error
            job.finished = time.time()
            job.progress = {**job.progress, "phase": job.status}

    async def _follow(self, job: SynthJob, stdout: asyncio.StreamReader) -> str | None:
        """Progress lines update the job; the report line is kept; an error line is returned.
        Anything else on stdout (a library that prints) is ignored."""
        error = None
        async for raw in stdout:
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            event = record.pop("event", None)
            if event == "progress":
                job.progress = record
            elif event == "report":
                job.report = record
            elif event == "error":
                error = str(record.get("error"))
        return error

    def _publish(self, job: SynthJob, staging: Path, final: Path) -> str | None:
        """Rename the finished suite into place and load it once, so the first session on it
        does not pay for reading thousands of task files (and a broken suite fails the job)."""
        meta = json.loads((staging / "suite.json").read_text())
        if meta.get("name") != job.name:
            return f"the pipeline named the suite {meta.get('name')!r}, not {job.name!r}"
        if final.exists():
            return f"{final} appeared while the job ran; the suite was not installed"
        staging.rename(final)
        try:
            tasks.get_suite(job.name)
        except Exception as exc:
            shutil.rmtree(final, ignore_errors=True)
            return f"the suite does not load: {type(exc).__name__}: {exc}"
        return None

    async def close_all(self) -> None:
        runners = [j.runner for j in self.jobs.values() if j.runner and not j.runner.done()]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)


async def _drain(stream: asyncio.StreamReader, tail: deque[str]) -> None:
    """Read stderr to the end (a full pipe would block the child), keeping the last lines."""
    async for raw in stream:
        tail.append(raw.decode(errors="replace").rstrip())


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Stop the job's process group (the CLI and the browsers it started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), 10)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
