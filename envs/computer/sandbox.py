"""The computer family's sandbox: a live bwrap sandbox per episode, a restorable home.

The sandbox itself (the view, the uid, seccomp, the bounded /tmp and /dev/shm, the home's quota)
is the shared one of :mod:`palaestra.envs.runtimes.sandbox`; this module adds what the desktop
needs on top:

- One long-lived sandbox per episode (``bwrap ... sleep infinity``): its namespaces (mount,
  pid, net, ipc, uts) are entered with ``nsenter`` for every process we start in it, the window
  manager, the apps, each code action, each under the seccomp filter and ``prlimit``. So an app
  launched from ``run_shell`` stays on the desktop like on a real machine, and killing the
  sandbox's pid 1 at reset kills everything in it at once (a pid namespace dies with its init),
  daemons and fork bombs included.
- Only this session's X socket is bound into ``/tmp/.X11-unix``; the session's home (a tmpfs
  with a size quota, on the host) is bound read-write at ``/home/user``.
- Reset unmounts the old home (its memory is freed at once) and mounts a fresh one filled from a
  per-session template home: a few ms.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from palaestra.envs.computer.display import Display
from palaestra.envs.computer.procs import (
    kill_uid,
    real_uid,
    session_processes,
    signal_where,
)
from palaestra.envs.runtimes.sandbox import (
    HOME,
    Limits,
    Slot,
    bwrap_argv,
    chown_tree,
    drop,
    mount_quota,
    prlimit,
    seccomp_exec,
    seccomp_fd,
    spawn,
    unmount,
)
from palaestra.errors import EnvCrashed

__all__ = ["A11Y_BUS", "HOME", "SESSION_BUS", "Limits", "Sandbox", "chown_tree", "run_isolated"]

#: the session D-Bus's socket inside the sandbox (its private /tmp): gsettings, dconf, GIO
SESSION_BUS = "/tmp/.session-bus"
#: the accessibility bus's socket (AT-SPI), when the session's observation asks for the tree
A11Y_BUS = "/tmp/.a11y-bus"
#: the most of a verifier command's stdout (and stderr) that is read back
MAX_CHECK_OUTPUT = 1 << 20


class Sandbox:
    """A session's uid, directories and (while an episode runs) its live bwrap sandbox."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._slot = Slot()
        self.uid = self._slot.uid
        self.root = self._slot.root
        self.home = self.root / "home"  # a tmpfs with the home's quota, mounted per episode
        self.home.mkdir()
        self._home_mounted = False
        self.template = self.root / "template"
        self.out = self.root / "out"  # outputs of code actions, outside the sandbox
        self.out.mkdir()
        passwd = Path("/etc/passwd").read_text()
        self.passwd = self.root / "passwd"
        self.passwd.write_text(passwd + f"user:x:{self.uid}:{self.uid}:user:{HOME}:/bin/bash\n")
        group = Path("/etc/group").read_text()
        self.group = self.root / "group"
        self.group.write_text(group + f"user:x:{self.uid}:\n")
        self.proc: subprocess.Popen | None = None
        self.pid = 0  # the sandbox's pid 1, as the host sees it
        self._sleeper = 0  # its only child, ``sleep infinity`` (the session's uid)
        self.display: Display | None = None
        self._children: list[subprocess.Popen] = []
        #: apps talk to the accessibility bus (``desktop.start_a11y``); off: GTK's bridge is off
        self.a11y = False

    # ----- home ------------------------------------------------------------------------------
    def set_template(self, build: Any) -> None:
        """(Re)build the template home with ``build(path)``, owned by this session's uid."""
        if self.template.exists():
            shutil.rmtree(self.template)
        self.template.mkdir()
        build(self.template)
        chown_tree(self.template, self.uid)

    def restore_home(self) -> None:
        """A fresh home from the template, on a fresh quota tmpfs (the old one is let go)."""
        if self._home_mounted:
            unmount(self.home)
        mount_quota(self.home, self.uid, self.limits.home_mb)
        self._home_mounted = True
        subprocess.run(
            ["cp", "-a", f"{self.template}/.", str(self.home)],
            check=True,
            capture_output=True,
        )

    # ----- the live sandbox ------------------------------------------------------------------
    def start(self, display: Display) -> None:
        """Start the episode's sandbox (its pid 1 is ``sleep infinity``)."""
        self.stop()
        self.display = display
        read, write = os.pipe()
        seccomp = seccomp_fd()
        argv = bwrap_argv(
            self.limits,
            # bwrap_argv makes the X socket's folder in the private /tmp before binding into it
            binds=[(str(display.socket), display.inside), (str(self.home), HOME)],
            ro_binds=[(str(self.passwd), "/etc/passwd"), (str(self.group), "/etc/group")],
            seccomp=seccomp,
            extra=["--info-fd", str(write)],
        )
        argv += [*drop(self.uid), "sleep", "infinity"]
        try:
            self.proc = spawn(argv, stderr=subprocess.PIPE, pass_fds=(write, seccomp))
        finally:
            os.close(write)
            os.close(seccomp)
        with os.fdopen(read, "rb") as info:
            data = info.read()
        try:
            self.pid = int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
            self.stop()
            raise EnvCrashed(f"the sandbox (bubblewrap) did not start: {err.strip()}") from None
        self._wait_ready()

    def _wait_ready(self, timeout_s: float = 10.0) -> None:
        """Wait until bwrap has set the sandbox up and run its command (``sleep infinity``
        is a child of its pid 1): bwrap names its pid 1 before the mounts are done, and a
        process entered into them earlier finds no ``/usr`` (``nsenter: failed to execute
        setpriv``)."""
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children")
        deadline = time.monotonic() + timeout_s
        while True:
            with contextlib.suppress(OSError):
                for child in children.read_text().split():
                    # comm, not exe: reading another uid's exe link needs CAP_SYS_PTRACE, which
                    # a worker in a container lacks (no agent code runs yet to forge the name)
                    if Path(f"/proc/{child}/comm").read_text().strip() == "sleep":
                        self._sleeper = int(child)  # its death ends the sandbox
                        return
            if time.monotonic() > deadline or not self.alive():
                self.stop()
                raise EnvCrashed("the sandbox (bubblewrap) did not run its init")
            time.sleep(0.002)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Kill everything in the sandbox: its pid 1 dies, so does its pid namespace."""
        if self.proc is not None:
            if self.proc.poll() is None:
                with _suppress():
                    os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            if self.proc.stderr:
                self.proc.stderr.close()
            self.proc = None
        for child in self._children:
            with _suppress():
                child.kill()
            child.wait()
        self._children = []
        self.pid = 0

    def desktop_pids(self) -> set[int]:
        """The desktop's own processes (the X server, WM, buses, apps; what runs under them is
        the desktop's too): the live processes we launched and have not reaped, so their pids
        cannot be another process's."""
        x_server = self.display.proc if self.display is not None else None
        ours = [*self._children, *([x_server] if x_server is not None else [])]
        return {c.pid for c in ours if c.poll() is None}

    def kill_strays(self) -> int:
        """Kill every process of the session's uid but the desktop's own (what code actions
        left running, a fork bomb), found by uid now, never by a remembered pid."""
        # not the sandbox's pid 1 (orphans are its children), but its own child, whose death
        # would end the sandbox
        return kill_uid(self.uid, keep_under=self.desktop_pids() | {self._sleeper})

    def processes(self) -> list[dict[str, Any]]:
        """The processes running in the sandbox, read from the host (see ``procs.py``)."""
        return session_processes(self.pid) if self.alive() else []

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Stop every process of the sandbox (SIGSTOP, until no new one appears) while a
        verifier looks, and continue them after: none can act on what is being checked. Each is
        signalled through a pidfd after checking it is still the session's (a listed pid may be
        another process's by the time it is signalled); what the check itself left running in
        the sandbox (a child still reading a FIFO) is killed after it."""
        stopped: set[int] = set()
        uid = self.uid

        def ours(pid: int) -> bool:
            return real_uid(pid) == uid

        try:
            for _ in range(20):
                fresh = {p["pid"] for p in self.processes()} - stopped
                if not fresh:
                    break
                stopped |= {pid for pid in fresh if signal_where(pid, signal.SIGSTOP, ours)}
            yield
        finally:
            for pid in {p["pid"] for p in self.processes()} - stopped:
                signal_where(pid, signal.SIGKILL, ours)
            for pid in stopped:
                signal_where(pid, signal.SIGCONT, ours)

    def user_env(self) -> list[str]:
        display = self.display.name if self.display else ":0"
        return [
            "env",
            "-i",
            f"--chdir={HOME}",
            f"HOME={HOME}",
            "USER=user",
            "LOGNAME=user",
            "SHELL=/bin/bash",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            f"DISPLAY={display}",
            "LANG=C.UTF-8",
            "TERM=xterm",
            # LibreOffice's GTK 3 plugin (its accessibility bridge), wherever it is started from
            "SAL_USE_VCLPLUGIN=gtk3",
            *(
                [f"AT_SPI_BUS_ADDRESS=unix:path={A11Y_BUS}"]
                if self.a11y
                else ["NO_AT_BRIDGE=1", "GTK_A11Y=none"]
            ),
            "XDG_RUNTIME_DIR=/tmp",
            f"DBUS_SESSION_BUS_ADDRESS=unix:path={SESSION_BUS}",
        ]

    def command(self, argv: list[str], cpu_s: float | None = None) -> list[str]:
        """The host argv that runs ``argv`` inside the live sandbox as the session's user,
        under the seccomp filter and the rlimits."""
        if not self.alive():
            raise EnvCrashed("the sandbox is not running (reset the session)")
        enter = ["nsenter", "-t", str(self.pid), "-m", "-p", "-n", "-i", "-u"]
        return [
            *seccomp_exec(),
            *prlimit(self.limits, cpu_s),
            *enter,
            *drop(self.uid),
            *self.user_env(),
            *argv,
        ]

    def launch(self, argv: list[str], log: IO | None = None) -> subprocess.Popen:
        """Start a long-lived process (window manager, app) in the sandbox, detached."""
        out = log or subprocess.DEVNULL
        proc = spawn(self.command(argv), stdout=out, stderr=out)
        self._children = [c for c in self._children if c.poll() is None] + [proc]
        return proc

    def close(self) -> None:
        """Everything of the session goes: its sandbox, every process of its uid wherever it
        runs (a verifier's leftover, a detached daemon), then its home and its uid slot."""
        self.stop()
        kill_uid(self.uid)
        self._home_mounted = False
        self._slot.close()


def run_isolated(
    home: Path, uid: int, script: str, timeout: float = 10.0, pid_ns_of: int = 0
) -> subprocess.CompletedProcess:
    """Run a verifier's shell command in a fresh sandbox over a read-only view of ``home``.

    It is not the agent's sandbox: the home is read-only so the check cannot change what it
    checks, ``bash --norc`` with a fixed PATH ignores the agent's dotfiles, and nothing the
    agent planted in its /tmp is there. With ``pid_ns_of`` (the live sandbox's pid 1) it joins
    that sandbox's pid namespace (bwrap's ``--pidns``, with a /proc mounted for it), so
    ``ps`` or ``pgrep`` see the agent's processes as they are; the caller freezes them meanwhile
    (:meth:`Sandbox.frozen`), so none can write into the check's output
    (``/proc/PID/fd/1`` of a same-uid process) or change the state under it.
    """
    limits = Limits(nproc=4096)  # the agent's own processes count against the uid's nproc
    seccomp = seccomp_fd()
    fds = [seccomp]
    try:
        argv = bwrap_argv(limits, ro_binds=[(str(home), HOME)], seccomp=seccomp)
        if pid_ns_of > 0:  # the agent's pid namespace instead of a new one
            fds.append(os.open(f"/proc/{pid_ns_of}/ns/pid", os.O_RDONLY))
            argv.remove("--unshare-pid")
            argv[1:1] = ["--pidns", str(fds[-1])]
        argv += drop(uid)
        argv += ["env", "-i", f"HOME={HOME}", "USER=user", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
        # no bus: a check reads settings from their files (dconf's database), never through a
        # service the agent's session runs, and gsettings must not wait to autolaunch one
        argv += ["DBUS_SESSION_BUS_ADDRESS=disabled:", "XDG_RUNTIME_DIR=/tmp"]
        argv += ["bash", "--norc", "--noprofile", "-c", script]
        # into unnamed files, never pipes: what the check prints may be the agent's (``cat`` of
        # its file), a pipe would be read whole, and a leftover child holding it open would
        # keep us waiting after the timeout; RLIMIT_FSIZE bounds the files, MAX_CHECK_OUTPUT
        # what is read back
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            done = subprocess.run(
                [*prlimit(limits), *argv],
                stdout=out,
                stderr=err,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                pass_fds=tuple(fds),
            )
            done.stdout, done.stderr = _head(out), _head(err)
            return done
    finally:
        for fd in fds:
            os.close(fd)


def _head(file: IO[bytes], limit: int = MAX_CHECK_OUTPUT) -> bytes:
    file.seek(0)
    return file.read(limit)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is not None and issubclass(exc[0], ProcessLookupError | OSError)
