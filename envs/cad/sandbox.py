"""``run_code``: a build123d script in a contained child process, the coding-harness baseline.

Three layers, because any one of them alone is easy to get around:

1. A static check (``ast``) refuses imports other than build123d and math, names such as
   ``open``/``exec``/``eval``/``__import__``/``getattr``, and any dunder attribute; a script
   that never assigns ``result`` is refused before a process is spent on it.
   It is a first filter only: ``build123d`` re-exports ``os``, ``sys`` and more, so the boundary
   is the next layer.
2. The child runs in the one agent-code sandbox (:mod:`palaestra.envs.runtimes.sandbox`):
   bubblewrap, the session's own unprivileged uid, no network, a read-only root with the repo,
   the worker's files, other sessions and the host's processes out of view, a seccomp filter,
   bounded private ``/tmp`` and ``/dev/shm``, and a home with a size quota. Only the Python
   interpreter and its site-packages are bound in (read-only). Inside, ``python -I`` sets
   resource limits after build123d is imported and before the script runs (CPU seconds, address
   space, file size, no new processes), and build123d's importers (``import_stl``,
   ``import_step``, ...) read only files inside the script's own folder.
3. The parent keeps a wall-clock limit and kills the child when it is exceeded.

A child that segfaults in the kernel, runs out of memory or is killed yields a clear sentence;
the worker process is never touched. The result travels back as a BREP file, the kernel's own
lossless format.

Importing build123d costs about two seconds, so a child is started ahead of need and waits on
its stdin with the kernel loaded ("warm"), in its own sandbox with its own empty folder; each
script consumes its child and its folder (no state leaks from one script to the next) and a
fresh one is started behind it. Sessions that never call
``run_code`` never start a child.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from build123d import Shape, import_brep

from palaestra.envs.runtimes.sandbox import (
    HOME,
    Limits,
    Slot,
    bwrap_argv,
    drop,
    mount_quota,
    seccomp_fd,
    spawn,
)

ALLOWED_IMPORTS = {"build123d", "math"}
FORBIDDEN_NAMES = {
    "open",
    "exec",
    "eval",
    "compile",
    "__import__",
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "input",
    "breakpoint",
    "exit",
    "quit",
    "help",
    "memoryview",
    "__builtins__",
}
CPU_SECONDS = 20
WALL_SECONDS = 30.0
MEMORY_BYTES = 3 * 1024**3
# the sandbox around the child: a 128 MB home, 64 MB /tmp, 16 MB /dev/shm
LIMITS = Limits(memory_mb=MEMORY_BYTES // 2**20, home_mb=128, tmp_mb=64, shm_mb=16)

_CHILD = r"""
import json, os, resource, sys
from build123d import *  # noqa: the kernel loads before any limit or script
import math
from build123d import Compound as _Compound, Shape as _Shape, export_brep as _export_brep
_w = Box(2, 2, 2) - Cylinder(0.5, 3)  # first kernel calls pay one-off set-up costs
_w.is_valid
from inspect import signature as _signature
def _folder_only(fn, name, at=0):
    param = list(_signature(fn).parameters)[at]  # the path, by position or by its keyword
    def guarded(*args, **kwargs):
        path = args[at] if len(args) > at else kwargs.get(param)
        if not isinstance(path, (str, bytes, os.PathLike)):  # an open file could be any file
            raise PermissionError(f"{name} reads only files in the script's folder, by name")
        real = os.path.realpath(os.fsdecode(path))
        if not real.startswith(_folder + "/"):  # the job's folder, whatever the cwd is now
            raise PermissionError(f"{name} reads only files in the script's folder, not {path}")
        return fn(*args, **kwargs)
    return guarded
import build123d as _b, build123d.importers as _bi
for _n in [n for n in dir(_b) if n.startswith("import_")]:
    _g = _folder_only(getattr(_b, _n), _n)
    setattr(_b, _n, _g); globals()[_n] = _g
    if hasattr(_bi, _n):
        setattr(_bi, _n, _g)
_b.Mesher.read = _folder_only(_b.Mesher.read, "Mesher.read", 1)
sys.stdout.write("ready\n"); sys.stdout.flush()
job = json.loads(sys.stdin.readline())
os.chdir(job["cwd"])
_folder = os.path.realpath(job["cwd"])
used = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime) + 1
resource.setrlimit(resource.RLIMIT_CPU, (used + job["cpu"], used + job["cpu"] + 1))
resource.setrlimit(resource.RLIMIT_AS, (job["mem"], job["mem"]))
resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024**2, 256 * 1024**2))
resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
out_path = job["out"]
env = {k: v for k, v in globals().items() if not k.startswith("_") and k not in
       ("json", "os", "resource", "sys", "job", "used", "out_path")}
if job["check"]:
    import builtins
    safe = {k: getattr(builtins, k) for k in dir(builtins) if k not in set(job["forbidden"])}
    def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name.split(".")[0] not in ("build123d", "math"):
            raise ImportError(f"import {name} is not allowed")
        return __import__(name, globals, locals, fromlist, level)
    safe["__import__"] = _guarded_import
    env["__builtins__"] = safe
real_stdout, sys.stdout = sys.stdout, sys.stderr
def print(*args, **kwargs):
    real_stdout.write(" ".join(map(str, args)) + "\n")
    real_stdout.flush()
try:
    exec(compile(job["script"], "<script>", "exec"), env)
except BaseException as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]})); sys.exit(0)
res = env.get("result")
if res is None:
    print(json.dumps({"error": "the script finished without assigning `result`"})); sys.exit(0)
if isinstance(res, (list, tuple)):
    res = _Compound(list(res))
if not isinstance(res, _Shape) or not res.solids():
    kind = type(res).__name__
    print(json.dumps({"error": f"`result` must be a solid (Part, Solid or Compound), not {kind}"}))
    sys.exit(0)
_export_brep(res, out_path)
print(json.dumps({"ok": True}))
"""


class ScriptRefused(Exception):
    """The static check refused the script (a sentence for the agent)."""


def check(script: str) -> None:
    """Refuse what the sandbox should never have to contain."""
    try:
        tree = ast.parse(script)
    except SyntaxError as exc:
        raise ScriptRefused(
            f"the script has a syntax error on line {exc.lineno}: {exc.msg}"
        ) from None
    assigns_result = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for name in names:
                if name.split(".")[0] not in ALLOWED_IMPORTS:
                    raise ScriptRefused(
                        f"import {name} is not allowed: scripts may import only build123d and math"
                    )
        elif isinstance(node, ast.Name) and (
            node.id in FORBIDDEN_NAMES or node.id.startswith("__")
        ):
            raise ScriptRefused(f"{node.id} is not available in CAD scripts")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ScriptRefused(f"private attribute .{node.attr} is not allowed in CAD scripts")
        elif isinstance(node, ast.Name) and node.id == "result" and isinstance(node.ctx, ast.Store):
            assigns_result = True
    if not assigns_result:
        raise ScriptRefused("the script must assign the finished part to a variable named `result`")


@dataclass
class Outcome:
    shape: Shape | None
    error: str = ""


@dataclass
class _Child:
    proc: subprocess.Popen[str]
    folder: Path  # its home, on the host


def _interpreter_binds() -> list[tuple[str, str]]:
    """The Python the child runs (the venv and the interpreter it points to), read-only."""
    paths = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parents[1])}
    return [(p, p) for p in sorted(paths) if p and Path(p).is_dir()]


class Sandbox:
    """One session's script runner: its uid, a home with a quota, and one warm child."""

    def __init__(self, cpu_seconds: int = CPU_SECONDS, wall_seconds: float = WALL_SECONDS) -> None:
        self.cpu_seconds = cpu_seconds
        self.wall_seconds = wall_seconds
        self.limits = LIMITS
        self._warm: _Child | None = None
        self._lock = threading.Lock()
        self._slot: Slot | None = None
        self._count = 0

    def _home(self) -> Path:
        if self._slot is None:
            self._slot = Slot()
            mount_quota(self._slot.root / "home", self._slot.uid, self.limits.home_mb)
        return self._slot.root / "home"

    def _spawn(self) -> _Child:
        home = self._home()
        assert self._slot is not None
        self._count += 1
        folder = home / f"c{self._count}"
        folder.mkdir(mode=0o700)
        os.chown(folder, self._slot.uid, self._slot.uid)
        seccomp = seccomp_fd()
        try:
            argv = bwrap_argv(
                self.limits,
                binds=[(str(folder), HOME)],
                ro_binds=_interpreter_binds(),
                seccomp=seccomp,
            )
            argv += drop(self._slot.uid)
            argv += ["env", "-i", f"HOME={HOME}", "PATH=/usr/bin:/bin", "OMP_NUM_THREADS=1"]
            argv += [sys.executable, "-I", "-c", _CHILD]
            proc = spawn(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                pass_fds=(seccomp,),
                text=True,
            )
        finally:
            os.close(seccomp)
        return _Child(proc, folder)

    def run(self, script: str, *, checked: bool = True) -> Outcome:
        """Run a script; ``checked=False`` skips the static check (trusted callers, tests)."""
        if checked:
            try:
                check(script)
            except ScriptRefused as exc:
                return Outcome(None, str(exc))
        with self._lock:
            child, self._warm = self._warm, None
            if child is None or child.proc.poll() is not None:
                if child is not None:
                    _discard(child)
                child = self._spawn()
        try:
            return self._run_in(child, script, checked)
        finally:
            _discard(child)
            with self._lock:
                if self._warm is None and self._slot is not None:
                    self._warm = self._spawn()

    def _run_in(self, child: _Child, script: str, checked: bool) -> Outcome:
        proc = child.proc
        job = {
            "script": script,
            "cwd": HOME,
            "out": f"{HOME}/result.brep",
            "cpu": self.cpu_seconds,
            "mem": MEMORY_BYTES,
            "check": checked,
            "forbidden": sorted(FORBIDDEN_NAMES),
        }
        timer = threading.Timer(self.wall_seconds + 15, _kill, (proc,))
        timer.start()  # the import on a cold child counts outside the script's own limit
        try:
            ready = proc.stdout.readline() if proc.stdout else ""
            if ready.strip() != "ready":
                return Outcome(None, _death(proc, "while loading the CAD kernel"))
            timer.cancel()
            timer = threading.Timer(self.wall_seconds, _kill, (proc,))
            timer.start()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(job) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        finally:
            timer.cancel()
        if not line.strip():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            return Outcome(None, _death(proc, "while running the script", self.wall_seconds))
        try:
            reply = json.loads(line)
        except ValueError:
            return Outcome(None, "the script printed to stdout; remove print() calls")
        if "error" in reply:
            return Outcome(None, f"the script failed: {reply['error']}")
        out = child.folder / "result.brep"
        if out.is_symlink() or not out.is_file():
            return Outcome(None, "the script's result file is missing")
        try:
            return Outcome(import_brep(str(out)))
        except Exception as exc:
            return Outcome(None, f"the script's result could not be read back: {exc}")

    def close(self) -> None:
        with self._lock:
            child, self._warm = self._warm, None
            slot, self._slot = self._slot, None
        if child is not None:
            _discard(child)
        if slot is not None:
            slot.close()


def _discard(child: _Child) -> None:
    _kill(child.proc)
    shutil.rmtree(child.folder, ignore_errors=True)


def _kill(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=5)
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _death(child: subprocess.Popen[str], when: str, wall: float | None = None) -> str:
    code = child.poll()
    if code is None:
        return f"the script process stopped answering {when}"
    if code > 128 and code - 128 in signal.valid_signals():
        code = 128 - code  # bubblewrap reports its payload's death by a signal as 128 + signal
    if code < 0:
        sig = signal.Signals(-code).name
        if sig == "SIGKILL" and wall is not None:
            return (
                f"the script was stopped {when}: it ran longer than {wall:g} s or used more than "
                f"{MEMORY_BYTES // 1024**3} GB (the model is unchanged)"
            )
        if sig == "SIGXCPU":
            return f"the script used more than its CPU time limit {when} (the model is unchanged)"
        return f"the script crashed the CAD kernel ({sig}) {when}; the model is unchanged"
    return f"the script process exited with code {code} {when} (the model is unchanged)"
