"""The session's X server: one Xvfb per session, kept across resets.

Decisions:

- Xvfb picks its own free display number (``-displayfd``), so concurrent sessions in many worker
  processes never race for ``:N`` and we never parse lock files.
- ``-nolisten tcp`` and no abstract socket reachable from the sandbox (it has its own network
  namespace): the only way in is the Unix socket ``/tmp/.X11-unix/XN``, which is bound into this
  session's sandbox alone. ``-ac`` turns off host-based access control, because the sandbox user
  is another uid in another network namespace and the socket itself is the access control.
- Xvfb outlives resets (starting it is most of a fresh desktop's cost); a reset kills its clients
  (the whole sandbox) instead. A dead Xvfb is noticed by :meth:`Display.alive` and restarted on
  the next reset.
- Every long-lived child is started with ``setpriv --pdeathsig KILL`` from one process-wide
  spawner thread, so a worker that is killed outright leaves no Xvfb behind (the parent-death
  signal fires when the *thread* that forked exits, hence the one thread that never does).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from palaestra.errors import EnvCrashed

_SPAWNER = ThreadPoolExecutor(1, thread_name_prefix="palaestra-computer-spawner")
XVFB_START_TIMEOUT_S = 10.0


def spawn(
    argv: list[str],
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen:
    """Popen from the spawner thread, with the parent-death signal armed. Every child is
    long-lived and belongs to the session, not to our terminal: no stdin, its own process
    group (so it can be killed as one), output dropped unless asked for."""
    argv = ["setpriv", "--pdeathsig", "KILL", "--", *argv]
    return _SPAWNER.submit(
        subprocess.Popen,
        argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        pass_fds=pass_fds,
        start_new_session=True,
    ).result()


class Display:
    """An Xvfb at ``width`` x ``height`` x 24."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.proc: subprocess.Popen | None = None
        self.number = -1

    @property
    def name(self) -> str:
        return f":{self.number}"

    @property
    def socket(self) -> Path:
        return Path(f"/tmp/.X11-unix/X{self.number}")

    def start(self) -> None:
        read, write = os.pipe()
        try:
            self.proc = spawn(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write),
                    "-screen",
                    "0",
                    f"{self.width}x{self.height}x24",
                    "-nolisten",
                    "tcp",
                    "-ac",
                    "-nocursor",
                    "-noreset",
                ],
                pass_fds=(write,),
            )
            os.close(write)
            write = -1
            text = b""
            deadline = time.monotonic() + XVFB_START_TIMEOUT_S
            while not text.endswith(b"\n"):
                left = deadline - time.monotonic()
                ready, _, _ = select.select([read], [], [], max(left, 0))
                chunk = os.read(read, 32) if ready else b""
                if not chunk:
                    self.stop()
                    raise EnvCrashed("the X server (Xvfb) did not start")
                text += chunk
            self.number = int(text.strip())
        finally:
            os.close(read)
            if write >= 0:
                os.close(write)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.socket.exists()

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def env(self) -> dict[str, str]:
        return {"DISPLAY": self.name, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
