"""The one sandbox for agent code: every family that runs an agent's code builds it from here.

The computer family (``run_shell``/``run_python``/``write_file`` and the whole desktop) and the
CAD family's ``run_code`` child use the same pieces, so one fix closes a hole everywhere.

Decisions:

- **bubblewrap as root without a user namespace, then a real unprivileged uid.** bwrap sets up
  the namespaces (mount, pid, net, ipc, uts) and the view; the payload drops to the session's own
  uid with ``setpriv`` (no capabilities, no new privileges, no supplementary groups). A user
  namespace mapping the agent onto root would make root-owned host files look like its own.
- **One uid per session**: 20000 + a slot held with ``flock`` across processes, so per-uid
  ``RLIMIT_NPROC`` is per session and no two live sessions (of any family) share a uid. The slot
  lock also tells which session folders are live: :func:`sweep` deletes the folders of a worker
  that was killed (their slot is free), never a live one's.
- **The view is an allow-list**: the sandbox's ``/`` is an empty tmpfs showing, read-only, the
  system (``/usr`` and its ``/bin``, ``/lib``... links), the few ``/etc`` entries programs read
  (:data:`ETC`: libraries, fonts, X11, GTK, D-Bus and XDG configuration, terminfo...; never
  ``shadow``, ``ssh``, ``ssl``, the package manager's or other services' configuration) and
  the font cache; the rest of the host (``/var``, ``/srv``, ``/opt``, ``/home``, ``/root``,
  ``/run``, ``/sys``, the repo, the palaestra home, other sessions) is simply not there, so a
  folder added to the host later is hidden too. ``/tmp`` and ``/dev/shm`` are private tmpfs
  with a size bound (``--size``); a private ``/proc`` (its own pid namespace: no host process,
  no gateway command line) and a minimal ``/dev``; no network but an unconfigured loopback of
  its own. A family binds what its payload needs on top (the computer family its X socket and
  home, CAD the Python interpreter and its site-packages, read-only).
- **A size quota on the writable home**: the home is a tmpfs with ``size=`` mounted by the (root)
  worker on the host, so the verifier still reads it from outside and a full home is ENOSPC for
  the agent and nothing for the host. A reset unmounts it and mounts a fresh one.
- **seccomp**: a filter compiled by libseccomp (through ``pyseccomp``) refuses with EPERM the
  calls a sandboxed program never needs and an escape does: new namespaces (``unshare``, ``clone``
  with a ``CLONE_NEW*`` flag; ``clone3`` is ENOSYS so libc falls back to ``clone``), ``mount`` and
  friends, ``ptrace``, ``bpf``, ``keyctl``, ``kexec``, modules, ``perf_event_open``,
  ``userfaultfd``, ``AF_VSOCK`` sockets (not network-namespaced: a VM's way to its hypervisor),
  ... It is given to bwrap (``--seccomp FD``) for the sandbox's own processes,
  and put on every process entered later with ``nsenter`` by :func:`seccomp_exec` (a tiny
  Python that loads the compiled program and execs; nsenter's ``setns`` stays allowed, harmless
  without capabilities). Other architectures' syscall numbers are killed (libseccomp's default).
- **Limits**: rlimits on every process (``prlimit``), the per-uid process count and the tmpfs
  sizes. cgroups would bound memory and pids per session rather than per process, but only
  where the host delegates a cgroup v2 subtree with the memory and pids controllers to the
  worker (and the worker sits in a leaf of it); the machines this was built on run a hybrid
  v1/v2 hierarchy whose v2 part has no controllers and whose v1 cgroups belong to the host's
  own machinery, so no cgroup limit is applied (a TODO where delegation exists).
- Every long-lived child is started from one spawner thread with the parent-death signal armed
  (:func:`spawn`), so a worker that is killed outright leaves no sandbox behind; a payload
  without a pid namespace of its own (the computer family's X server) outlives it until its
  uid slot is taken again or swept, which first kills every process of that uid.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.processes import kill_uid
from palaestra.errors import EnvCrashed
from palaestra.seccomp import DENIED_SOCKET_FAMILIES, DENIED_SYSCALLS

BASE = Path(tempfile.gettempdir()) / "palaestra-sandbox"
UID_BASE = 20000
SLOTS = 2000
HOME = "/home/user"
MB = 2**20


@dataclass(frozen=True)
class Limits:
    """Per-session bounds. ``nproc`` counts every process of the session's uid (the kernel's
    per-uid count); ``memory_mb`` bounds each process (``RLIMIT_AS``) and, where a family
    watches its sessions (the computer family's watchdog), the sum of their private memory;
    ``cpus`` is the share of the machine a session's processes may use together, on average
    since its episode began, after a burst of ``cpu_burst_s`` CPU seconds; ``step_s`` bounds
    the wall time of one step, every tool call of a batch included (the gateway's default
    ``step_timeout_s``)."""

    memory_mb: int = 2048
    nproc: int = 256
    nofile: int = 1024
    fsize_mb: int = 512
    max_timeout_s: float = 120.0
    home_mb: int = 512
    tmp_mb: int = 256
    shm_mb: int = 64
    cpus: float = 1.0
    cpu_burst_s: float = 30.0
    step_s: float = 60.0


# ----- spawning --------------------------------------------------------------------------------
_SPAWNER = ThreadPoolExecutor(1, thread_name_prefix="palaestra-sandbox-spawner")


def spawn(
    argv: list[str],
    stdin: Any = subprocess.DEVNULL,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    pass_fds: tuple[int, ...] = (),
    text: bool = False,
) -> subprocess.Popen:
    """Popen from the spawner thread, with the parent-death signal armed (it fires when the
    *thread* that forked exits, hence the one thread that never does). Every child belongs to
    the session, not to our terminal: its own process group, so it can be killed as one."""
    argv = ["setpriv", "--pdeathsig", "KILL", "--", *argv]
    return _SPAWNER.submit(
        subprocess.Popen,
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        pass_fds=pass_fds,
        start_new_session=True,
        text=text,
    ).result()


# ----- seccomp ---------------------------------------------------------------------------------
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}


@cache
def seccomp_program() -> bytes:
    """The compiled BPF program (libseccomp through pyseccomp), built once per process."""
    try:
        import pyseccomp as sc
    except ImportError:
        raise EnvCrashed(
            "the agent-code sandbox needs pyseccomp and libseccomp2 (scripts/setup-system.sh)"
        ) from None
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    deny = sc.ERRNO(errno.EPERM)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(Exception):  # a call this kernel/libseccomp does not know
            f.add_rule(deny, name)
    for flag in CLONE_NEW.values():
        f.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")  # its flags are behind a pointer: use clone
    # vsock is not network-namespaced: on a VM it reaches the hypervisor and other guests
    for family in DENIED_SOCKET_FAMILIES:
        f.add_rule(deny, "socket", sc.Arg(0, sc.EQ, family))
    # a terminal's input queue must not be writable from the sandbox (TIOCSTI)
    f.add_rule(deny, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, 0x5412))
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()


def seccomp_fd() -> int:
    """A readable fd holding the program, for ``bwrap --seccomp FD`` (the caller closes it)."""
    read, write = os.pipe()
    os.write(write, seccomp_program())
    os.close(write)
    return read


_LOADER = r"""
import ctypes, os, sys
prog = bytes.fromhex(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
class P(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buf = ctypes.create_string_buffer(prog, len(prog))
p = P(len(prog) // 8, ctypes.addressof(buf))
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(p), 0, 0):
    sys.stderr.write("seccomp: %s\n" % os.strerror(ctypes.get_errno())); sys.exit(126)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def seccomp_exec() -> list[str]:
    """An argv prefix that runs the rest of the argv under the filter (runs on the host, before
    ``prlimit``/``nsenter``/``setpriv``, which the filter allows)."""
    return [sys.executable, "-I", "-S", "-c", _LOADER, seccomp_program().hex()]


# ----- the view --------------------------------------------------------------------------------
#: the system, read-only (on a merged-/usr system the others are links into /usr)
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: the /etc entries programs in the sandbox read (the dynamic linker, name service, locale,
#: fonts, X11, GTK, D-Bus, XDG, dconf, shells and terminfo, MIME and magic, Python, and
#: LibreOffice's defaults: its ``sofficerc`` and registry live there on Debian)
ETC = (
    "alternatives",
    "bash.bashrc",
    "dbus-1",
    "dconf",
    "debian_version",
    "dictionaries-common",
    "environment",
    "fonts",
    "gitconfig",
    "group",
    "gtk-2.0",
    "gtk-3.0",
    "host.conf",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "libreoffice",
    "locale.alias",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "papersize",
    "passwd",
    "perl",
    "profile",
    "profile.d",
    "protocols",
    "python3",
    "python3.11",
    "services",
    "sgml",
    "shells",
    "terminfo",
    "timezone",
    "vim",
    "X11",
    "xdg",
    "xml",
)
#: elsewhere on the host: the font cache (without it every app rebuilds it at start)
OTHER = ("/var/cache/fontconfig",)
#: where bwrap_argv's view puts private tmpfs (everything else is read-only or absent)
PRIVATE = ("/tmp", "/dev/shm")


def allowed() -> list[str]:
    """The host paths the sandbox shows (read-only), as they exist on this host."""
    paths = [*SYSTEM, *(f"/etc/{name}" for name in ETC), *OTHER]
    return [p for p in paths if os.path.lexists(p)]


def view_argv() -> list[str]:
    """bwrap arguments for the allow-listed view: links stay links, the rest is bound, and the
    folders on the way (``/etc``, ``/var/cache``) are made searchable (bwrap's own are 0700)."""
    argv: list[str] = []
    made: set[str] = set()
    for path in allowed():
        for parent in reversed(Path(path).parents[:-1]):
            if str(parent) not in made:
                made.add(str(parent))
                argv += ["--perms", "0755", "--dir", str(parent)]
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        else:
            argv += ["--ro-bind", path, path]
    var = [] if "/var" in made else ["--perms", "0755", "--dir", "/var"]
    return [*argv, *var, "--symlink", "/tmp", "/var/tmp"]


def bwrap_argv(
    limits: Limits,
    binds: Sequence[tuple[str, str]] = (),
    ro_binds: Sequence[tuple[str, str]] = (),
    seccomp: int | None = None,
    chdir: str = HOME,
    extra: Sequence[str] = (),
    pid_ns: bool = True,
) -> list[str]:
    """bwrap with the common view; ``binds`` are (host, inside) pairs mounted read-write on top,
    ``ro_binds`` read-only; ``seccomp`` is an fd from :func:`seccomp_fd`. ``pid_ns=False``
    keeps the host's pid namespace and mounts no ``/proc`` at all (the X server: it must see
    its clients' pids as the host numbers them, and needs no /proc)."""
    argv = ["bwrap", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-pid"] if pid_ns else []
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--hostname", "sandbox"]
    argv += view_argv()
    argv += ["--size", str(limits.tmp_mb * MB), "--perms", "1777", "--tmpfs", "/tmp"]
    argv += ["--proc", "/proc"] if pid_ns else []
    argv += ["--dev", "/dev"]
    argv += ["--size", str(limits.shm_mb * MB), "--perms", "1777", "--tmpfs", "/dev/shm"]
    shown = allowed()
    made: set[str] = set()
    for kind, pairs in (("--ro-bind", ro_binds), ("--bind", binds)):
        for host, inside in pairs:
            for parent in reversed(Path(inside).parents):  # readable folders on the way in
                text = str(parent)
                if text not in made and text not in ("/", *PRIVATE) and not _under(text, shown):
                    made.add(text)
                    argv += ["--perms", "0755", "--dir", text]
            argv += [kind, host, inside]
    if seccomp is not None:
        argv += ["--seccomp", str(seccomp)]
    return [*argv, *extra, "--chdir", chdir]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r + "/") for r in roots)


def drop(uid: int) -> list[str]:
    """setpriv to the session's uid: no capabilities, no new privileges, no groups."""
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--bounding-set=-all",
        "--inh-caps=-all",
    ]


def prlimit(limits: Limits, cpu_s: float | None = None) -> list[str]:
    argv = [
        "prlimit",
        f"--as={limits.memory_mb * MB}",
        f"--nproc={limits.nproc}",
        f"--nofile={limits.nofile}",
        f"--fsize={limits.fsize_mb * MB}",
    ]
    if cpu_s is not None:
        argv.append(f"--cpu={max(1, int(cpu_s + 1))}")
    return [*argv, "--"]


# ----- uids, session folders and the home quota -----------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
_SWEPT = threading.Lock()
_swept = False


def mount_quota(path: Path, uid: int, size_mb: int) -> None:
    """A tmpfs of ``size_mb`` owned by ``uid`` at ``path``: the home's quota."""
    path.mkdir(exist_ok=True)
    opts = f"size={size_mb * MB},mode=0700,uid={uid},gid={uid}".encode()
    if _libc.mount(b"tmpfs", bytes(path), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        code = ctypes.get_errno()
        raise EnvCrashed(f"cannot mount the sandbox home's quota tmpfs: {os.strerror(code)}")


def unmount(path: Path) -> None:
    _libc.umount2(bytes(path), MNT_DETACH)


def _mounts_under(root: Path) -> list[Path]:
    prefix = str(root) + "/"
    out = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(prefix) or point == str(root):
                out.append(Path(point))
    return sorted(out, key=lambda p: len(str(p)), reverse=True)


def remove_session_dir(root: Path) -> None:
    for point in _mounts_under(root):
        unmount(point)
    shutil.rmtree(root, ignore_errors=True)


def _slot_lock(slot: int) -> int | None:
    fd = os.open(BASE / f"slot-{slot}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _dirs_of(uid: int) -> list[Path]:
    return list(BASE.glob(f"s{uid}-*"))


def sweep() -> list[Path]:
    """Delete session folders whose uid slot no live process holds (left by a killed worker).
    A live session holds its slot's lock for as long as it exists, so it is never touched."""
    BASE.mkdir(mode=0o711, exist_ok=True)
    removed = []
    uids = {uid for p in BASE.glob("s*-*") if (uid := _uid_of(p)) is not None}
    for uid in sorted(uids):
        fd = _slot_lock(uid - UID_BASE)
        if fd is None:
            continue
        try:
            kill_uid(uid)
            for path in _dirs_of(uid):
                remove_session_dir(path)
                removed.append(path)
        finally:
            os.close(fd)
    return removed


def _uid_of(path: Path) -> int | None:
    head = path.name.split("-", 1)[0][1:]
    if not head.isdigit() or not UID_BASE <= int(head) < UID_BASE + SLOTS:
        return None
    return int(head)


def sweep_once() -> None:
    """The first sandbox of a process (a worker's start) sweeps what killed workers left."""
    global _swept
    with _SWEPT:
        if not _swept:
            _swept = True
            sweep()


TOOLS = ("bwrap", "setpriv", "nsenter", "prlimit")


def require_tools() -> None:
    """The programs the sandbox is built from (bubblewrap and util-linux), or a clear error."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise EnvCrashed(
            f"the agent-code sandbox needs {', '.join(missing)} (bubblewrap, util-linux: "
            "scripts/setup-system.sh); agent code never runs unsandboxed"
        )


class Slot:
    """A session's uid and its folder ``BASE/s<uid>-*`` (released and deleted by close)."""

    def __init__(self) -> None:
        require_tools()
        BASE.mkdir(mode=0o711, exist_ok=True)
        sweep_once()
        for slot in range(SLOTS):
            fd = _slot_lock(slot)
            if fd is None:
                continue
            self._fd: int | None = fd
            self.uid = UID_BASE + slot
            kill_uid(self.uid)  # a killed worker's (an X server has no pid namespace to die in)
            for stale in _dirs_of(self.uid):  # ours now, so whatever is there is stale
                remove_session_dir(stale)
            self.root = Path(tempfile.mkdtemp(prefix=f"s{self.uid}-", dir=BASE))
            return
        raise EnvCrashed("no free sandbox uid (too many sandboxed sessions on this machine)")

    def close(self) -> None:
        remove_session_dir(self.root)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def chown_tree(path: Path, uid: int) -> None:
    os.chown(path, uid, uid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)
