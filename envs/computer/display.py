"""The session's X server: one Xvfb per session, kept across resets, run as the session's uid.

Decisions:

- **Xvfb is the session's, not root's.** It parses every X request the agent's programs send
  (pixmaps of any size, ``XSetFontPath`` to any folder), so it runs as the session's uid in a
  sandbox of its own built from the shared pieces (``runtimes.sandbox``: the allow-listed
  read-only view, seccomp, no network, ``prlimit`` with the session's ``memory_mb``), and its
  processes count in the session's process limit and sums. A font path set by a client can
  only name what that view shows, read as that uid. The sandbox keeps the host's pid namespace
  (and mounts no ``/proc``) because the X server's record of a client's pid (from the socket's
  peer credentials, which a verifier trusts: ``procs.window_pids``) must be the host's number.
- The display number is the session's uid (``:20003``), unique on the machine for as long as the
  session holds its uid slot, so concurrent sessions in many worker processes never race for a
  number. The socket is made in the session's own folder (``<session>/x11``, bound at
  ``/tmp/.X11-unix`` in Xvfb's sandbox); the host's ``/tmp/.X11-unix/X<N>`` is a root-owned link
  to it for the host-side clients (xdotool, screenshots), whose libxcb takes no socket path.
- ``-nolisten tcp``, ``-nolisten local`` (no abstract socket) and a network namespace of its
  own: the only way in is the Unix socket, which is bound into this session's sandbox alone
  and sits in a folder only root and the session can enter. ``-ac`` turns off host-based access
  control, because the socket itself is the access control.
- Xvfb outlives resets (starting it is most of a fresh desktop's cost); a reset kills its clients
  (the whole sandbox) instead. A dead Xvfb is noticed by :meth:`Display.alive` and restarted on
  the next reset.
- Xvfb is started by the shared spawner (``runtimes.sandbox.spawn``: parent-death signal armed
  from one thread that never exits), so a worker that is killed outright leaves no Xvfb behind.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path

from palaestra.envs.runtimes.processes import real_uid, signal_where, uid_processes
from palaestra.envs.runtimes.sandbox import (
    Limits,
    bwrap_argv,
    drop,
    prlimit,
    seccomp_fd,
    spawn,
)
from palaestra.errors import EnvCrashed

XVFB_START_TIMEOUT_S = 10.0
#: where X clients on the host look for display N's socket (``/tmp/.X11-unix/X<N>``)
HOST_SOCKETS = Path("/tmp/.X11-unix")
#: the X server's socket folder inside its sandbox (and the apps')
SOCKETS = "/tmp/.X11-unix"


class Display:
    """An Xvfb at ``width`` x ``height`` x 24, run as ``uid`` with its socket in ``folder``."""

    def __init__(
        self, width: int, height: int, uid: int, folder: Path, limits: Limits | None = None
    ) -> None:
        self.width, self.height = width, height
        self.uid = uid
        self.folder = folder
        self.limits = limits or Limits()
        self.proc: subprocess.Popen | None = None
        self.number = uid

    @property
    def name(self) -> str:
        return f":{self.number}"

    @property
    def socket(self) -> Path:
        """The socket on the host (in the session's folder)."""
        return self.folder / f"X{self.number}"

    @property
    def inside(self) -> str:
        """Where the socket is in a sandbox (so ``DISPLAY`` is the same inside and out)."""
        return f"{SOCKETS}/X{self.number}"

    @property
    def link(self) -> Path:
        return HOST_SOCKETS / f"X{self.number}"

    def _argv(self, displayfd: int, seccomp: int) -> list[str]:
        folder = [(str(self.folder), SOCKETS)]
        argv = bwrap_argv(self.limits, binds=folder, seccomp=seccomp, chdir="/", pid_ns=False)
        return [
            *prlimit(self.limits),
            *argv,
            *drop(self.uid),
            "Xvfb",
            self.name,
            "-displayfd",
            str(displayfd),
            "-screen",
            "0",
            f"{self.width}x{self.height}x24",
            "-nolisten",
            "tcp",
            "-nolisten",
            "local",
            "-ac",
            "-nocursor",
            "-noreset",
        ]

    def _prepare(self) -> None:
        """The socket folder (the session's) and the host's link to the socket (root's)."""
        self.folder.mkdir(mode=0o700, exist_ok=True)
        os.chown(self.folder, self.uid, self.uid)
        if not HOST_SOCKETS.is_dir():  # X's own folder: everyone's, sticky (as Xorg makes it)
            HOST_SOCKETS.mkdir(exist_ok=True)
            HOST_SOCKETS.chmod(0o1777)
        with contextlib.suppress(FileNotFoundError):  # a killed worker's, on this uid slot
            if self.link.is_symlink() or self.link.is_socket():
                self.link.unlink()
        self.link.symlink_to(self.socket)

    def start(self) -> None:
        self._prepare()
        read, write = os.pipe()
        seccomp = seccomp_fd()
        try:
            self.proc = spawn(self._argv(write, seccomp), pass_fds=(write, seccomp))
            os.close(write)
            os.close(seccomp)
            write = seccomp = -1
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
            if int(text.strip()) != self.number:
                self.stop()
                raise EnvCrashed(
                    f"the X server took display {text.decode().strip()}, not {self.name}"
                )
        finally:
            os.close(read)
            for fd in (write, seccomp):
                if fd >= 0:
                    os.close(fd)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.socket.exists()

    def wait_exit(self, seconds: float) -> None:
        """Give a dying X server's bwrap ``seconds`` to exit (it notices its child's death
        a moment later, longer on a loaded machine), so :meth:`alive` tells the truth."""
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=seconds)

    def stop(self) -> None:
        """Kill the X server: the process we started (bwrap, not yet reaped) and the server
        itself, which has no pid namespace to die with (it outlives a killed bwrap): every
        process of the session's uid in the host's pid namespace, where no other one of the
        session runs, found now, never by a remembered pid."""
        for pid in uid_processes(self.uid):
            signal_where(pid, signal.SIGKILL, self._serves)
        if self.proc is not None:
            started = self.proc.pid
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(started, signal.SIGKILL)
            self.proc.wait()
            self.proc = None
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()

    def _serves(self, pid: int) -> bool:
        """Whether ``pid`` is this display's server: the session's uid in the host's pid
        namespace, where no other process of the session runs."""
        host = os.stat("/proc/self/ns/pid").st_ino
        return real_uid(pid) == self.uid and os.stat(f"/proc/{pid}/ns/pid").st_ino == host

    def server_pids(self) -> list[int]:
        """The X server's processes now (for measuring it: bench)."""
        out = []
        for pid in uid_processes(self.uid):
            with contextlib.suppress(OSError, KeyError, ValueError):
                if self._serves(pid):
                    out.append(pid)
        return out

    def env(self) -> dict[str, str]:
        return {"DISPLAY": self.name, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
