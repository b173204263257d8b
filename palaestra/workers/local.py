"""The embedded backend: workers are subprocesses of the gateway on this machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from palaestra.workers.base import Backend, SocketWorker, Worker

START_TIMEOUT_S = 60.0


def _child_env() -> dict[str, str]:
    """The worker sees the gateway's import path, so plugins found here are found there."""
    env = dict(os.environ)
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class LocalWorker(SocketWorker):
    def __init__(self, name: str, socket_path: str, heartbeat_s: float) -> None:
        super().__init__(name, socket_path, heartbeat_s)
        self.process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "palaestra.workers.host",
            "--socket",
            self.socket_path,
            "--name",
            self.name,
            env=_child_env(),
            stdin=asyncio.subprocess.DEVNULL,
        )
        await self.connect(asyncio.get_running_loop().time() + START_TIMEOUT_S)

    def _process_running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def _exit_description(self) -> str:
        code = self.process.returncode if self.process else None
        if code is None:
            return "it did not open its socket in time"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    async def _death_reason(self) -> str:
        if self.process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 2.0)
        return f"pid {self.pid} {self._exit_description()}"

    async def stop(self) -> None:
        await self.close_connection()
        proc = self.process
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "pid": self.pid}


class LocalBackend(Backend):
    name = "local"

    def __init__(self) -> None:
        super().__init__()
        self.socket_dir = tempfile.mkdtemp(prefix="palaestra-workers-")
        os.chmod(self.socket_dir, 0o700)
        self._generation = 0

    async def new_worker(self, index: int) -> Worker:
        self._generation += 1
        name = f"local-{index}"
        socket_path = f"{self.socket_dir}/w{index}-{self._generation}.sock"
        worker = LocalWorker(name, socket_path, self.heartbeat_s)
        await worker.start()
        return worker

    async def stop(self) -> None:
        await super().stop()
        shutil.rmtree(self.socket_dir, ignore_errors=True)
