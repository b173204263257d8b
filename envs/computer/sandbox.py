"""The session's sandbox: bubblewrap namespaces, an unprivileged uid, rlimits, a restorable home.

Decisions:

- bwrap runs as root *without* a user namespace and the payload drops to a real, unprivileged
  host uid with ``setpriv`` (no capabilities, no new privileges, no supplementary groups). A user
  namespace mapping uid 1000 onto root would make every root-owned file on the host look like
  the agent's own (``/etc/shadow`` is ``root:shadow 0640``); a real uid has none of that.
- Each session gets its own uid (20000 + a slot held with ``flock`` across processes), so the
  per-uid ``RLIMIT_NPROC`` is per session: one session's fork bomb cannot starve another's.
- One long-lived sandbox per episode (``bwrap ... sleep infinity``): its namespaces (mount,
  pid, net, ipc, uts) are entered with ``nsenter`` for every process we start in it, the window
  manager, the apps, each code action. So an app launched from ``run_shell`` stays on the desktop
  like on a real machine, and killing the sandbox's pid 1 at reset kills everything in it at
  once (a pid namespace dies with its init), daemons and fork bombs included.
- The view: ``/`` read-only; ``/home``, ``/root``, ``/tmp``, ``/run``, ``/work``, the repo and
  the palaestra home are empty tmpfs; the session's home is bound read-write at
  ``/home/user``; only this session's X socket is bound into ``/tmp/.X11-unix``; a private
  ``/proc`` and a minimal ``/dev``; no network but an unconfigured loopback of its own.
- Limits are rlimits set by ``prlimit`` on every process we start (inherited by its children):
  address space, process count (per uid), file size, open files, and CPU seconds for code
  actions; wall-clock timeouts kill the action's process group. cgroups would bound memory per
  session rather than per process, but this machine has cgroup v1 without delegation.
- Reset moves the old home aside (deleted in the background) and copies a per-session template
  home with ``cp -a --reflink=auto`` (copy-on-write where the filesystem can): a few ms.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from palaestra.envs.computer.display import Display, spawn
from palaestra.errors import EnvCrashed

BASE = Path(tempfile.gettempdir()) / "palaestra-computer"
UID_BASE = 20000
SLOTS = 2000
HOME = "/home/user"
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Limits:
    """Per-process limits inside the sandbox (``nproc`` counts every process of the session)."""

    memory_mb: int = 2048
    nproc: int = 256
    nofile: int = 1024
    fsize_mb: int = 512
    max_timeout_s: float = 120.0


def _hidden() -> list[str]:
    """Folders the sandbox must not see: other users, the repo, the platform's own state."""
    out = ["/root", "/home", "/tmp", "/run", "/work", "/srv", "/mnt", "/media", "/opt"]
    for extra in (REPO, Path(os.environ.get("PALAESTRA_HOME", "/nonexistent")), BASE):
        text = str(extra)
        if Path(text).exists() and not any(text == h or text.startswith(h + "/") for h in out):
            out.append(text)
    return out


class Sandbox:
    """A session's uid, directories and (while an episode runs) its live bwrap sandbox."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        BASE.mkdir(mode=0o711, exist_ok=True)
        self._slot_fd, self.uid = _claim_uid()
        self.root = Path(tempfile.mkdtemp(prefix=f"s{self.uid}-", dir=BASE))
        self.home = self.root / "home"
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
        self.display: Display | None = None
        self._children: list[subprocess.Popen] = []

    # ----- home ------------------------------------------------------------------------------
    def set_template(self, build: Any) -> None:
        """(Re)build the template home with ``build(path)``, owned by this session's uid."""
        if self.template.exists():
            shutil.rmtree(self.template)
        self.template.mkdir()
        build(self.template)
        chown_tree(self.template, self.uid)

    def restore_home(self) -> None:
        if self.home.exists():
            trash = self.root / f"trash-{time.monotonic_ns()}"
            self.home.rename(trash)
            threading.Thread(target=shutil.rmtree, args=(trash, True), daemon=True).start()
        subprocess.run(
            ["cp", "-a", "--reflink=auto", str(self.template), str(self.home)],
            check=True,
            capture_output=True,
        )

    # ----- the live sandbox ------------------------------------------------------------------
    def start(self, display: Display) -> None:
        """Start the episode's sandbox (its pid 1 is ``sleep infinity``)."""
        self.stop()
        self.display = display
        read, write = os.pipe()
        argv = [
            "bwrap",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--hostname",
            "sandbox",
            "--info-fd",
            str(write),
            "--ro-bind",
            "/",
            "/",
        ]
        for hidden in _hidden():
            argv += (
                ["--perms", "1777", "--tmpfs", hidden] if hidden == "/tmp" else ["--tmpfs", hidden]
            )
        argv += [
            "--dir",
            "/tmp/.X11-unix",
            "--bind",
            str(display.socket),
            str(display.socket),
            "--bind",
            str(self.home),
            HOME,
            "--ro-bind",
            str(self.passwd),
            "/etc/passwd",
            "--ro-bind",
            str(self.group),
            "/etc/group",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--chdir",
            HOME,
            *self._drop(),
            "sleep",
            "infinity",
        ]
        self.proc = spawn(argv, stderr=subprocess.PIPE, pass_fds=(write,))
        os.close(write)
        with os.fdopen(read, "rb") as info:
            data = info.read()
        try:
            self.pid = int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
            self.stop()
            raise EnvCrashed(f"the sandbox (bubblewrap) did not start: {err.strip()}") from None

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

    def _drop(self) -> list[str]:
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--bounding-set=-all",
            "--inh-caps=-all",
        ]

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
            "NO_AT_BRIDGE=1",
            "GTK_A11Y=none",
            "XDG_RUNTIME_DIR=/tmp",
        ]

    def command(self, argv: list[str], cpu_s: float | None = None) -> list[str]:
        """The host argv that runs ``argv`` inside the live sandbox as the session's user."""
        if not self.alive():
            raise EnvCrashed("the sandbox is not running (reset the session)")
        lim = self.limits
        limits = [
            "prlimit",
            f"--as={lim.memory_mb * 2**20}",
            f"--nproc={lim.nproc}",
            f"--nofile={lim.nofile}",
            f"--fsize={lim.fsize_mb * 2**20}",
        ]
        if cpu_s is not None:
            limits.append(f"--cpu={max(1, int(cpu_s + 1))}")
        enter = ["nsenter", "-t", str(self.pid), "-m", "-p", "-n", "-i", "-u"]
        return [*limits, "--", *enter, *self._drop(), *self.user_env(), *argv]

    def launch(self, argv: list[str], log: IO | None = None) -> subprocess.Popen:
        """Start a long-lived process (window manager, app) in the sandbox, detached."""
        out = log or subprocess.DEVNULL
        proc = spawn(self.command(argv), stdout=out, stderr=out)
        self._children = [c for c in self._children if c.poll() is None] + [proc]
        return proc

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        if self._slot_fd is not None:
            os.close(self._slot_fd)
            self._slot_fd = None


def run_isolated(
    home: Path, uid: int, script: str, timeout: float = 10.0
) -> subprocess.CompletedProcess:
    """Run a verifier's shell command in a fresh sandbox over a read-only view of ``home``.

    It is not the agent's sandbox: no process the agent left running can answer in its place,
    the home is read-only so the check cannot change what it checks, and ``bash --norc`` with a
    fixed PATH ignores the agent's dotfiles.
    """
    argv = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    argv += ["--die-with-parent", "--ro-bind", "/", "/"]
    for hidden in _hidden():
        argv += ["--tmpfs", hidden]
    argv += ["--ro-bind", str(home), HOME, "--proc", "/proc", "--dev", "/dev", "--chdir", HOME]
    argv += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs"]
    argv += ["--bounding-set=-all", "--inh-caps=-all"]
    argv += ["env", "-i", f"HOME={HOME}", "USER=user", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
    argv += ["bash", "--norc", "--noprofile", "-c", script]
    return subprocess.run(
        ["prlimit", "--as=2147483648", "--nproc=4096", "--", *argv],
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def chown_tree(path: Path, uid: int) -> None:
    os.chown(path, uid, uid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def _claim_uid() -> tuple[int, int]:
    """A uid no other live session holds (an flock'ed slot file; released when we exit)."""
    BASE.mkdir(mode=0o711, exist_ok=True)
    for slot in range(SLOTS):
        fd = os.open(BASE / f"slot-{slot}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return fd, UID_BASE + slot
    raise EnvCrashed("no free sandbox uid (too many computer sessions on this machine)")


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is not None and issubclass(exc[0], ProcessLookupError | OSError)
