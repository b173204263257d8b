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
the worker process is never touched.

Nothing the script makes is read or parsed by the (root) worker:

- **Its output** is read in bounded pieces (:class:`_Pipe`): the one reply line the worker
  wants is at most ``MAX_LINE`` bytes; a script that prints more (1 GB without a newline) gets a
  sentence, and the worker holds no more than that cap.
- **Its result file** (``result.brep``) is parsed by a *reader*: a lean child (OpenCascade
  only) in its own sandbox as the session's uid, with the same limits and no agent code. The
  script's child (and so every process of the script) is killed first; the worker then renames
  the file (a rename never follows a link) into the reader's folder, and the reader opens it
  with ``O_NOFOLLOW | O_NONBLOCK``, checks with ``fstat`` that it is a regular file of at most
  ``MAX_BREP_BYTES``, parses it under its rlimits and the wall clock, checks that it is valid
  and has at most ``MAX_FACES`` faces, and writes its solids again with the kernel's own
  writer. What crosses back is that canonical BREP, length-prefixed and capped. A crafted file
  that crashes or hangs the parser kills the reader: that ``run_code`` step fails with a
  sentence, the worker and its other sessions go on, and a new reader replaces it. A file
  swapped for a link to a root-only file is never opened by root (and the reader, as the
  session's uid in its sandbox, can neither follow the link nor see the host's files).
- The reader is started for the session's first result (not beside the script, whose CPU
  and wall-clock budget it would eat) and kept for the next ones, like the warm child; it
  serves this session only, so a reader the agent subverted through its own result reaches
  nothing the agent's script does not.

The residual trust: the worker parses the reader's canonical BREP. A reader subverted through a
memory-corruption bug in the kernel's parser (beyond a crash) could hand the worker crafted
bytes; that needs a working exploit of OpenCascade from inside the sandbox, and is listed in
docs/security.md as a known gap.

Importing build123d costs about two seconds, so a child is started ahead of need and waits on
its stdin with the kernel loaded ("warm"), in its own sandbox with its own empty folder; each
script consumes its child and its folder (no state leaks from one script to the next) and a
fresh one is started behind it. Sessions that never call
``run_code`` never start a child.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from build123d import Compound, Shape
from OCP.BRep import BRep_Builder
from OCP.BRepTools import BRepTools
from OCP.TopoDS import TopoDS_Shape

from palaestra.envs.cad.ops import MAX_FACES  # a script's result keeps the actions' bound
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
#: the longest line the worker reads from a child (its reply); the rest is never read
MAX_LINE = 64 * 1024
#: the largest result file the reader parses, and the largest canonical BREP it sends back
MAX_BREP_BYTES = 32 * 2**20

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


_READER = r"""
import io, json, os, resource, stat, sys
from OCP.BRep import BRep_Builder
from OCP.BRepCheck import BRepCheck_Analyzer
from OCP.BRepTools import BRepTools
from OCP.TopAbs import TopAbs_FACE, TopAbs_SOLID
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_Compound, TopoDS_Shape
limits = json.loads(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limits["mem"], limits["mem"]))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
out = sys.stdout.buffer
def answer(reply, data=b""):
    out.write(json.dumps(reply).encode() + b"\n" + data); out.flush()
def parse(name):
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return "the script's result file is missing"
    except OSError:
        return "the script's result must be a regular file (not a link, folder or pipe)"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "the script's result must be a regular file (not a link, folder or pipe)"
        cap = limits["max_bytes"]
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            return f"the script's result is over {cap} bytes"
    finally:
        os.close(fd)
    shape = TopoDS_Shape()
    try:
        BRepTools.Read_s(shape, io.BytesIO(b"".join(chunks)), BRep_Builder())
    except Exception as exc:
        return f"the script's result is not a readable BREP file ({type(exc).__name__})"
    if shape.IsNull():
        return "the script's result is not a readable BREP file"
    builder, part, solids = BRep_Builder(), TopoDS_Compound(), 0
    builder.MakeCompound(part)
    found = TopExp_Explorer(shape, TopAbs_SOLID)
    while found.More():
        builder.Add(part, found.Current())
        solids += 1
        found.Next()
    if not solids:
        return "the script's result has no solid"
    faces, found = 0, TopExp_Explorer(part, TopAbs_FACE)
    while found.More() and faces <= limits["max_faces"]:
        faces += 1
        found.Next()
    if faces > limits["max_faces"]:
        return f"the script's result has more than {limits['max_faces']} faces"
    if not BRepCheck_Analyzer(part).IsValid():
        return "the script's result is not a valid solid"
    buf = io.BytesIO()
    BRepTools.Write_s(part, buf)
    return buf.getvalue()
out.write(b"ready\n"); out.flush()
for line in sys.stdin.buffer:
    job = json.loads(line)
    used = int(sum(resource.getrusage(resource.RUSAGE_SELF)[:2])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (used + limits["cpu"], resource.RLIM_INFINITY))
    got = parse(job["read"])
    if isinstance(got, str):
        answer({"error": got})
    elif len(got) > limits["max_bytes"]:
        answer({"error": f"the script's result is {len(got)} bytes as BREP, over the limit"})
    else:
        answer({"ok": True, "bytes": len(got)}, got)
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


class _TooLong(Exception):
    """A child wrote more than the worker reads."""


class _Pipe:
    """A child's stdout read in bounded pieces: the worker never holds more than it asked for
    (``readline`` would take a 1 GB line whole, and twice over as text)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.buf = b""

    def line(self, cap: int = MAX_LINE) -> bytes:
        """The next line without its newline; b"" at EOF; _TooLong past ``cap`` bytes."""
        while b"\n" not in self.buf:
            if len(self.buf) > cap:
                raise _TooLong
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return b""
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        if len(line) > cap:
            raise _TooLong
        return line

    def exactly(self, n: int) -> bytes:
        """``n`` bytes (the caller has bounded ``n``); fewer at EOF."""
        parts, have = [self.buf[:n]], min(len(self.buf), n)
        self.buf = self.buf[n:]
        while have < n:
            chunk = os.read(self.fd, min(1 << 20, n - have))
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        return b"".join(parts)


@dataclass
class _Child:
    proc: subprocess.Popen[bytes]
    folder: Path  # its home, on the host
    ready: bool = False  # its "ready" line has been read
    pipe: _Pipe = field(init=False)

    def __post_init__(self) -> None:
        self.pipe = _Pipe(self.proc)


def _interpreter_binds() -> list[tuple[str, str]]:
    """The Python the child runs (the venv and the interpreter it points to), read-only."""
    paths = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parents[1])}
    return [(p, p) for p in sorted(paths) if p and Path(p).is_dir()]


def from_brep(data: bytes) -> Shape:
    """The reader's canonical BREP as a kernel shape (bytes the kernel itself wrote)."""
    shape = TopoDS_Shape()
    BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
    if shape.IsNull():
        raise ValueError("empty shape")
    return Compound.cast(shape)


class Sandbox:
    """One session's script runner: its uid, a home with a quota, one warm child and a reader."""

    def __init__(self, cpu_seconds: int = CPU_SECONDS, wall_seconds: float = WALL_SECONDS) -> None:
        self.cpu_seconds = cpu_seconds
        self.wall_seconds = wall_seconds
        self.limits = LIMITS
        self._warm: _Child | None = None
        self._reader: _Child | None = None
        self._lock = threading.Lock()
        self._slot: Slot | None = None
        self._count = 0

    def _home(self) -> Path:
        if self._slot is None:
            self._slot = Slot()
            mount_quota(self._slot.root / "home", self._slot.uid, self.limits.home_mb)
        return self._slot.root / "home"

    def _spawn(self, program: str = _CHILD, *args: str) -> _Child:
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
            argv += [sys.executable, "-I", "-c", program, *args]
            proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(seccomp,))
        finally:
            os.close(seccomp)
        return _Child(proc, folder)

    def _spawn_reader(self) -> _Child:
        limits = {
            "mem": MEMORY_BYTES,
            "cpu": self.cpu_seconds,
            "max_bytes": MAX_BREP_BYTES,
            "max_faces": MAX_FACES,
        }
        return self._spawn(_READER, json.dumps(limits))

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
            reader, self._reader = self._reader, None
        reader_ok = True
        try:
            outcome = self._run_in(child, script, checked)
            _kill(child.proc)  # no process of the script is left when its result is read
            if outcome is None:
                if reader is None or reader.proc.poll() is not None:
                    if reader is not None:
                        _discard(reader)
                    with self._lock:  # the first result (or one after a crash) waits for it
                        reader = self._spawn_reader()
                outcome, reader_ok = self._read_back(child, reader)
            return outcome
        finally:
            _discard(child)
            with self._lock:
                if reader_ok and self._reader is None and self._slot is not None:
                    self._reader, reader = reader, None  # kept for the next script
                if self._warm is None and self._slot is not None:
                    self._warm = self._spawn()
            if reader is not None:
                _discard(reader)

    def _exchange(self, child: _Child, job: dict[str, object]) -> dict[str, object] | str:
        """Wait for the child's ``ready`` (once), hand it the job and read its one-line JSON
        reply (bounded, under the wall clock); a sentence instead of a reply when there is
        none. The wall clock also runs while the caller reads what follows the reply."""
        proc, pipe = child.proc, child.pipe
        timer = threading.Timer(self.wall_seconds + 15, _kill, (proc,))
        timer.start()  # the import on a cold child counts outside the script's own limit
        try:
            if not child.ready and pipe.line().strip() != b"ready":
                return _death(proc, "while loading the CAD kernel")
            child.ready = True
            timer.cancel()
            timer = threading.Timer(self.wall_seconds, _kill, (proc,))
            timer.start()
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(job).encode() + b"\n")
            proc.stdin.flush()
            line = pipe.line()
        except _TooLong:
            return (
                f"the script printed more than {MAX_LINE // 1024} KiB to stdout [truncated, "
                "not read]; remove print() calls"
            )
        except (BrokenPipeError, OSError):
            line = b""
        finally:
            timer.cancel()
        if not line.strip():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            return _death(proc, "while running the script", self.wall_seconds)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            return "the script printed to stdout; remove print() calls"
        return reply

    def _run_in(self, child: _Child, script: str, checked: bool) -> Outcome | None:
        """Run the script; None when it says it wrote its result (not yet read)."""
        job = {
            "script": script,
            "cwd": HOME,
            "out": f"{HOME}/result.brep",
            "cpu": self.cpu_seconds,
            "mem": MEMORY_BYTES,
            "check": checked,
            "forbidden": sorted(FORBIDDEN_NAMES),
        }
        reply = self._exchange(child, job)
        if isinstance(reply, str):
            return Outcome(None, reply)
        if "error" in reply:
            return Outcome(None, f"the script failed: {str(reply['error'])[:500]}")
        return None

    def _read_back(self, child: _Child, reader: _Child) -> tuple[Outcome, bool]:
        """The script's result, parsed by the reader (see the module docstring), and whether
        the reader is still fit for the next one."""
        name = f"r{self._count}.brep"
        taken = reader.folder / name
        try:  # a rename moves a link or a folder as it is, never what it points to
            os.rename(child.folder / "result.brep", taken)
        except FileNotFoundError:
            return Outcome(None, "the script's result file is missing"), True
        except OSError as exc:
            return Outcome(None, f"the script's result cannot be taken: {exc.strerror}"), True
        try:
            reply = self._exchange(reader, {"read": name})
            if isinstance(reply, str):
                return Outcome(None, _reader_death(reader.proc)), False
            if "error" in reply:
                return Outcome(None, str(reply["error"])[:500]), True
            size = reply.get("bytes")
            if type(size) is not int or not 0 < size <= MAX_BREP_BYTES:
                return Outcome(None, "the script's result could not be read back"), False
            timer = threading.Timer(self.wall_seconds, _kill, (reader.proc,))
            timer.start()
            try:
                data = reader.pipe.exactly(size)
            finally:
                timer.cancel()
            if len(data) != size:
                return Outcome(None, _reader_death(reader.proc)), False
            try:
                return Outcome(from_brep(data)), True
            except Exception as exc:
                return Outcome(None, f"the script's result could not be read back: {exc}"), False
        finally:
            try:  # unlink removes a link itself; a folder is removed without following links
                taken.unlink()
            except IsADirectoryError:
                shutil.rmtree(taken, ignore_errors=True)
            except OSError:
                pass

    def close(self) -> None:
        with self._lock:
            child, self._warm = self._warm, None
            reader, self._reader = self._reader, None
            slot, self._slot = self._slot, None
        for one in (child, reader):
            if one is not None:
                _discard(one)
        if slot is not None:
            slot.close()


def _reader_death(proc: subprocess.Popen[bytes]) -> str:
    """How the reader died on a script's result, as a sentence for the agent."""
    _kill(proc)
    code = proc.poll()
    if code is not None and code > 128 and code - 128 in signal.valid_signals():
        code = 128 - code  # bubblewrap reports its payload's death by a signal as 128 + signal
    how = f" ({signal.Signals(-code).name})" if code is not None and code < 0 else ""
    return (
        f"the script's result could not be read: the kernel's reader stopped{how} on it (a "
        "malformed, oversized or too slow BREP file); the model is unchanged"
    )


def _discard(child: _Child) -> None:
    _kill(child.proc)
    shutil.rmtree(child.folder, ignore_errors=True)


def _kill(child: subprocess.Popen[bytes]) -> None:
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


def _death(child: subprocess.Popen[bytes], when: str, wall: float | None = None) -> str:
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
