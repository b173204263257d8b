"""Synthesis jobs: ``POST /v1/synth/jobs`` runs ``palaestra synth`` in a subprocess.

Synthesis drives browsers and validates tasks for minutes, so it runs as a child process (the
gateway never runs env code in its event loop) and reports through ``--json-progress`` lines on
its stdout. The suite is written to a hidden ``.<name>.<job>.partial`` folder beside its final
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
import os
import secrets
import shutil
import signal
import sys
from collections import deque
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

_STDERR_TAIL_LINES = 40
log = logging.getLogger("palaestra.server")


class SynthJobManager(JobManager):
    """Synthesis jobs, kept in the gateway's job store (``server/jobs.py``). Resuming an
    interrupted job runs the CLI again from the start: the seed is fixed, so the suite it
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

    def command(self, job: Job, out: Path) -> list[str]:
        req = CreateSynthJob.model_validate(job.request)
        cmd = [sys.executable, "-m", "palaestra.cli", "synth"]
        for domain in req.domains:
            cmd += ["--domain", domain]
        for layout in req.layouts:
            cmd += ["--layout", layout]
        cmd += ["--family", req.family]
        cmd += ["--variants", str(req.variants), "--tasks", str(req.tasks)]
        cmd += ["--seed", str(req.seed), "--name", job.meta["name"], "--out", str(out)]
        return [*cmd, "--json-progress"]

    async def work(self, job: Job) -> dict[str, Any] | None:
        from palaestra.workers.local import _child_env  # the same import path as the workers

        name = job.meta["name"]
        self.suites_dir.mkdir(parents=True, exist_ok=True)
        staging = self.suites_dir / f".{name}.{job.id}.partial"
        final = self.suites_dir / name
        stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        proc: asyncio.subprocess.Process | None = None
        job.result = None
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
                raise JobFailed(
                    error
                    or f"palaestra synth exited with status {code}; "
                    f"its output is in the gateway's log (correlation_id {cid})"
                )
            if error:
                raise JobFailed(error)
            if job.result is None:
                raise JobFailed("palaestra synth finished without a report")
            if not job.result.get("validated"):
                raise JobFailed(f"no task passed validation (dropped: {job.result.get('dropped')})")
            error = await asyncio.to_thread(self._publish, job, staging, final)
            if error:
                raise JobFailed(error)
            return job.result
        finally:
            if proc is not None and proc.returncode is None:
                await _stop(proc)
            with contextlib.suppress(OSError):
                shutil.rmtree(staging, ignore_errors=True)

    async def _follow(self, job: Job, stdout: asyncio.StreamReader) -> str | None:
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
                self.store.save(job)
            elif event == "report":
                job.result = record
            elif event == "error":
                error = str(record.get("error"))
        return error

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
