"""The embedded backend: workers are subprocesses of the gateway on this machine."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pwd
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from palaestra.workers.base import Backend, SocketWorker, Worker

START_TIMEOUT_S = 60.0
log = logging.getLogger("palaestra.workers")


#: the gateway's secrets: never handed to a worker or a job (env code must not read them)
SECRET_VARS = ("PALAESTRA_API_KEYS", "PALAESTRA_API_KEYS_FILE")


def _child_env(python: str | None = None) -> dict[str, str]:
    """The worker sees the gateway's import path, so plugins found here are found there; it
    does not see the gateway's API keys. A worker on an interpreter of its own (``python``,
    one its unprivileged user can read) imports from that interpreter's environment only."""
    env = {k: v for k, v in os.environ.items() if k.upper() not in SECRET_VARS}
    if python is None:
        paths = [p for p in sys.path if p and Path(p).is_dir()]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    else:
        env.pop("PYTHONPATH", None)
    return env


@dataclass(frozen=True)
class RunAs:
    """The unprivileged account a root gateway starts its workers as."""

    uid: int
    gid: int
    home: str

    @classmethod
    def resolve(cls, user: str) -> RunAs:
        try:
            entry = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
        except (KeyError, ValueError):
            raise ValueError(f"worker_user {user!r}: no such user on this machine") from None
        if entry.pw_uid == 0:
            raise ValueError("worker_user must not be root: it is there to drop root")
        if os.geteuid() not in (0, entry.pw_uid):
            raise ValueError(
                f"worker_user {user!r}: only a gateway running as root can start workers as "
                "another user"
            )
        return cls(entry.pw_uid, entry.pw_gid, entry.pw_dir)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        return {**env, "HOME": self.home if os.path.isdir(self.home) else "/tmp"}

    def command(self) -> list[str]:
        """The prefix that execs a command as this account: util-linux's ``setpriv`` sets the
        real, effective and saved ids and clears root's groups before the worker's first
        instruction. (Not the ``user=``/``group=`` of ``subprocess``: the gateway's event
        loop, uvloop, refuses them, and a ``preexec_fn`` runs Python in a forked copy of a
        threaded process.)"""
        return [
            shutil.which("setpriv") or "/usr/bin/setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--",
        ]


class LocalWorker(SocketWorker):
    def __init__(
        self,
        name: str,
        socket_path: str,
        heartbeat_s: float,
        run_as: RunAs | None = None,
        python: str | None = None,
    ) -> None:
        super().__init__(name, socket_path, heartbeat_s)
        self.process: asyncio.subprocess.Process | None = None
        self.run_as = run_as
        self.python = python

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    async def start(self) -> None:
        env = _child_env(self.python)
        drop: list[str] = []
        if self.run_as is not None and self.run_as.uid != os.geteuid():
            env = self.run_as.env(env)
            drop = self.run_as.command()
        self.process = await asyncio.create_subprocess_exec(
            *drop,
            self.python or sys.executable,
            "-m",
            "palaestra.workers.host",
            "--socket",
            self.socket_path,
            "--name",
            self.name,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            # a session of its own: a Ctrl-C in the terminal reaches the gateway (which stops
            # its workers in order), never the workers and their browsers mid-episode
            start_new_session=True,
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

    def __init__(self, worker_user: str | None = None, worker_python: str | None = None) -> None:
        """``worker_user``: run workers as this account when the gateway runs as root (the
        ``worker_user`` setting); their socket folder is then theirs, still closed to others.
        ``worker_python``: the interpreter they run on (the ``worker_python`` setting), for a
        gateway whose own interpreter that account cannot read (one under root's home)."""
        super().__init__()
        self.run_as = RunAs.resolve(worker_user) if worker_user else None
        self.python = worker_python
        self.socket_dir = tempfile.mkdtemp(prefix="palaestra-workers-")
        os.chmod(self.socket_dir, 0o700)
        if self.run_as is not None and self.run_as.uid != os.geteuid():
            os.chown(self.socket_dir, self.run_as.uid, self.run_as.gid)
        elif os.geteuid() == 0:
            log.warning(
                "local workers run as root: set worker_user to run them unprivileged "
                "(the computer and cad families still need a root worker)"
            )
        self._generation = 0

    async def new_worker(self, index: int) -> Worker:
        self._generation += 1
        name = f"local-{index}"
        socket_path = f"{self.socket_dir}/w{index}-{self._generation}.sock"
        worker = LocalWorker(name, socket_path, self.heartbeat_s, self.run_as, self.python)
        await worker.start()
        return worker

    async def stop(self) -> None:
        await super().stop()
        shutil.rmtree(self.socket_dir, ignore_errors=True)
