"""Code actions: ``run_shell``, ``run_python``, ``write_file``, inside the live sandbox.

Decisions:

- They run as the session's user in the session's namespaces (see ``sandbox.py``), with the
  same home and display as the GUI, so code and GUI act on one world: a file written by code is
  the one the editor opens, an app started by ``run_shell`` appears on the screen.
- Output goes to files outside the sandbox (never a pipe), read after the command exits and cut
  to ``MAX_OUTPUT`` (the cwd report to ``MAX_CWD``) through ``palaestra.saferead``: an app
  started in the background may keep its stdout open forever, and a pipe would either block us
  or kill it with SIGPIPE. ``RLIMIT_FSIZE`` bounds what a runaway ``yes`` can write.
- A timeout kills the action's process group (repeatedly, so a fork bomb's late children go
  too); CPU time is also capped by ``RLIMIT_CPU``. Processes an action deliberately detaches
  (``setsid``) live on until the next reset, as on a real machine.
- The shell keeps no state between actions except the working directory, reported as ``cwd``.
- ``write_file`` writes through ``cat`` inside the sandbox, never from the host: a symlink the
  agent planted (``notes -> /etc/passwd``) must not turn into a root write outside.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from palaestra import saferead
from palaestra.envs.computer.procs import uid_processes
from palaestra.envs.computer.sandbox import HOME, Sandbox

MAX_OUTPUT = 16_000
#: a working directory is a path (PATH_MAX); a longer report is not one
MAX_CWD = 4096


@dataclass
class CodeResult:
    action: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


#: $1 = cwd, $2 = the command, $3 = the fd that receives the final working directory
_SHELL = (
    'cd -- "$1" 2>/dev/null || cd; __fd=$3; __cmd=$2; set --; '
    'eval "$__cmd"; __rc=$?; pwd >&"$__fd"; exit $__rc'
)


class CodeRunner:
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.cwd = HOME

    def reset(self) -> None:
        self.cwd = HOME

    def _recover(self) -> str:
        """Near the process limit (a fork bomb left in the background), kill what earlier code
        actions left running, so the session can act again; the desktop's apps stay. They are
        found by the session's uid now, never by pids remembered from earlier actions (such a
        pid may be any process's by now)."""
        if len(uid_processes(self.sandbox.uid)) < self.sandbox.limits.nproc - 16:
            return ""
        self.sandbox.kill_strays()
        return "[the session hit its process limit: killed what earlier actions left running]\n"

    def _run(
        self, name: str, argv: list[str], timeout: float, stdin: bytes = b""
    ) -> tuple[CodeResult, str]:
        timeout = max(0.1, min(float(timeout), self.sandbox.limits.max_timeout_s))
        out_dir = self.sandbox.out
        paths = [out_dir / n for n in ("stdout", "stderr", "cwd", "stdin")]
        paths[3].write_bytes(stdin)
        note = self._recover()
        files = [open(p, "wb") for p in paths[:3]]  # noqa: SIM115 (closed in finally)
        started = time.perf_counter()
        timed_out = False
        try:
            with open(paths[3], "rb") as fin:
                proc = subprocess.Popen(
                    self.sandbox.command([*argv, str(files[2].fileno())], cpu_s=timeout),
                    stdin=fin,
                    stdout=files[0],
                    stderr=files[1],
                    pass_fds=(files[2].fileno(),),
                    start_new_session=True,
                )
            try:
                code: int | None = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc.pid)  # not reaped yet: the group id is still this action's
                proc.wait()
                code = None
        finally:
            for f in files:
                f.close()
        result = CodeResult(
            name,
            code,
            _read(paths[0]),
            note + _read(paths[1]) + (f"\n[killed after {timeout:g} s]" if timed_out else ""),
            timed_out,
            round(time.perf_counter() - started, 3),
        )
        return result, _cwd(paths[2])

    def shell(self, cmd: str, timeout: float) -> CodeResult:
        result, cwd = self._run("run_shell", ["bash", "-c", _SHELL, "bash", self.cwd, cmd], timeout)
        if cwd.startswith("/"):
            self.cwd = cwd
        return result

    def python(self, code: str, timeout: float) -> CodeResult:
        argv = ["bash", "-c", 'cd -- "$1" 2>/dev/null || cd; exec python3 -', "bash", self.cwd]
        return self._run("run_python", argv, timeout, stdin=code.encode())[0]

    def write_file(self, path: str, content: str) -> CodeResult:
        script = 'cd -- "$1" 2>/dev/null || cd; mkdir -p -- "$(dirname -- "$2")" && cat > "$2"'
        argv = ["bash", "-c", script, "bash", self.cwd, path]
        result = self._run("write_file", argv, 10.0, stdin=content.encode())[0]
        if result.exit_code == 0:
            result.stdout = f"wrote {len(content.encode())} bytes to {path}"
        return result


def _kill_group(pgid: int, tries: int = 5) -> None:
    for _ in range(tries):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def _read(path: Path, limit: int = MAX_OUTPUT, mark: str = "\n[output cut]") -> str:
    """The first ``limit`` bytes of what the action wrote to ``path`` (the agent's bytes: read
    bounded, see ``palaestra.saferead``), marked when cut."""
    with contextlib.suppress(OSError):
        data, more = saferead.head(path, limit)
        return data.decode(errors="replace") + (mark if more else "")
    return ""


def _cwd(path: Path) -> str:
    """The shell's report of its working directory: written through an fd the agent's code
    holds, so it may be anything; longer than a path can be, it is no report."""
    with contextlib.suppress(OSError):
        data, more = saferead.head(path, MAX_CWD)
        return "" if more else data.decode(errors="replace").strip()
    return ""
