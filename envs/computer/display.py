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
- Xvfb is started by the shared spawner (``runtimes.sandbox.spawn``: parent-death signal armed
  from one thread that never exits), so a worker that is killed outright leaves no Xvfb behind.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

from palaestra.envs.runtimes.sandbox import spawn
from palaestra.errors import EnvCrashed

XVFB_START_TIMEOUT_S = 10.0


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
