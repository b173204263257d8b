"""Check kinds that read a computer session's files, commands and windows from outside.

The probe is built by the env on the worker and reads the session's home directory on the host.
Decisions:

- Paths are relative to the home (``~/`` and ``/home/user/`` prefixes are accepted) and are
  resolved on the host with symlinks followed *only* while they stay inside the home: an agent
  that plants ``report.txt -> /etc/shadow`` gets "escapes the home", never root's read of it.
  The resolved path is then read through ``palaestra.saferead``: every component opened without
  following a link from the home's descriptor (a folder swapped for a link after the resolve is
  an error, not a way out), regular files only, never blocking (a FIFO in place of a report is
  a failed check at once, not a hung verifier), at most ``MAX_FILE`` bytes of a file and
  ``MAX_ENTRIES`` entries of a folder.
- ``command_output`` runs the task's command through the probe's ``run``, which the env
  provides: a fresh sandbox over a read-only view of the home (the computer family's
  ``sandbox.run_isolated``), not the agent's shell: its dotfiles are ignored and the check
  cannot change what it checks. It runs in the agent's pid namespace, so a command such as
  ``pgrep`` sees the agent's processes, which are frozen meanwhile so that none can answer
  for it. So this module imports nothing from the env, as no verifier does.
- ``window`` and ``process`` identify a program by its real executable, the (device, inode) of
  the kernel's ``/proc/PID/exe`` against the system's binary of that name (found on a fixed
  system PATH on the worker, whose ``/`` the sandbox sees read-only): a window's process is the
  one the X server says created it. Titles, ``WM_CLASS``, ``_NET_WM_PID`` and ``argv[0]`` are
  the agent's to set, so they never identify anything alone; see docs/verifiers.md.
- Text comparisons strip surrounding whitespace unless ``strip: false``.
- ``agent_status`` reads whether the agent ended with ``done`` or ``fail`` (OSWorld's
  infeasible tasks expect ``fail``).
"""

from __future__ import annotations

import configparser
import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra import saferead
from palaestra.verifiers import answers
from palaestra.verifiers.base import CheckFn, CheckResult, check_kind, lookup

HOME = "/home/user"


#: run(command, timeout) -> (exit code, stdout, stderr): a command over the session's home
CommandRunner = Callable[[str, float], tuple[int, str, str]]


#: the session's windows (title, class, focused, and ``process``: the record of the process
#: the X server says created it, or None) / its processes (pid, exe, exe_id, argv, open_ids)
Lister = Callable[[], list[dict[str, Any]]]
#: where a check looks up a program by name: the worker's system folders, never a user's
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#: the most a check reads of one home file (text, JSON, CSV...), hashes, or lists of a folder
MAX_FILE = 16 * 2**20
MAX_HASHED = 2**30
MAX_ENTRIES = 100_000


class ComputerProbe:
    """Privileged read of one session: its home on the host, a way to run a command over it,
    its windows and processes as the X server and the kernel know them, the agent's end."""

    def __init__(
        self,
        home: Path,
        run: CommandRunner,
        windows: Lister | None = None,
        processes: Lister | None = None,
        agent_status: str | None = None,
        last_output: Mapping[str, Any] | None = None,
    ) -> None:
        self.home = Path(home)
        self.run = run
        self._windows = windows
        self._processes = processes
        self.agent_status = agent_status
        self.last_output = dict(last_output or {})

    def read(self) -> Mapping[str, Any]:
        return {
            "home": str(self.home),
            "agent_status": self.agent_status,
            "last_output": self.last_output,
            "run": self.run,
        }

    def path(self, rel: str, follow: bool = True) -> Path:
        """The host path of ``rel``; with ``follow=False`` a final symlink is not followed."""
        rel = str(rel).removeprefix(HOME + "/").removeprefix("~/").lstrip("/")
        if rel in ("", HOME, "~"):
            return self.home.resolve()
        root = self.home.resolve()
        if not follow:
            parent = self.path(str(Path(rel).parent)) if Path(rel).parent != Path(".") else root
            return parent / Path(rel).name
        path = (root / rel).resolve()
        if not path.is_relative_to(root):
            raise PermissionError(f"{rel} escapes the home directory")
        return path

    def data(self, rel: str) -> bytes:
        """The bytes of the home file ``rel`` (``saferead``: no link, no FIFO, ``MAX_FILE``)."""
        return saferead.read(self.path(rel), MAX_FILE, beneath=self.home.resolve())

    def text(self, rel: str) -> str:
        return self.data(rel).decode(errors="replace")

    def chunks(self, rel: str) -> Iterator[bytes]:
        """The home file ``rel`` in chunks (for a digest: up to ``MAX_HASHED`` bytes)."""
        return saferead.chunks(self.path(rel), MAX_HASHED, beneath=self.home.resolve())

    def lstat(self, rel: str, follow: bool = True) -> os.stat_result:
        """The stat of ``rel`` (of the link itself with ``follow=False``), never opening it."""
        return saferead.lstat(self.path(rel, follow), beneath=self.home.resolve())

    def tree(self, rel: str) -> list[str]:
        """The paths under the home folder ``rel`` (folders end with ``/``; links not followed)."""
        return saferead.tree(self.path(rel), MAX_ENTRIES, beneath=self.home.resolve())

    def windows(self) -> list[dict[str, Any]]:
        return self._windows() if self._windows is not None else []

    def processes(self) -> list[dict[str, Any]]:
        return self._processes() if self._processes is not None else []


def _leaf(kind: str, passed: bool, detail: str) -> CheckResult:
    return CheckResult(kind, passed, 1.0 if passed else 0.0, detail)


def _probe(probe: Any) -> ComputerProbe:
    if not isinstance(probe, ComputerProbe):
        raise TypeError("this check needs a computer session's probe")
    return probe


def _compare(actual: str, spec: Mapping[str, Any]) -> tuple[bool, str]:
    """``equals`` / ``contains`` / ``not_contains`` / ``pattern`` against text."""
    strip = spec.get("strip", True)
    text = actual.strip() if strip else actual
    if "equals" in spec:
        want = str(spec["equals"])
        want = want.strip() if strip else want
        return text == want, f"is {text[:80]!r}"
    if "pattern" in spec:
        ok = re.search(spec["pattern"], text, re.MULTILINE) is not None
        return ok, ("matches" if ok else f"does not match: {text[:80]!r}")
    ok = True
    for needle in _list(spec.get("contains")):
        ok = ok and needle in text
    for needle in _list(spec.get("not_contains")):
        ok = ok and needle not in text
    return ok, f"{'has' if ok else 'lacks'} the expected text: {text[:80]!r}"


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


#: reads what a file check judges from the file at ``rel``: its text, parsed data, a stat...
Reader = Callable[[ComputerProbe, str, dict[str, Any]], Any]
#: judges what was read: (passed, detail), the detail naming the file
Judge = Callable[[Any, str, dict[str, Any]], tuple[bool, str]]


def _file_check(
    kind: str, read: Reader, *unreadable: type[Exception], path: str | None = None
) -> Callable[[Judge], CheckFn]:
    """Register a check of one file (or folder) under the home. Whatever keeps it from being
    read (absent, unreadable, outside the home, or one of the kind's ``unreadable`` errors, e.g.
    JSON that does not parse) is the agent's doing, so it fails the check with the reason,
    never the verifier, the same way for every kind. ``path`` is the default of a kind whose
    spec may leave its path out."""
    caught: tuple[type[Exception], ...] = (OSError, PermissionError, *unreadable)

    def register(judge: Judge) -> CheckFn:
        @check_kind(kind)
        def check(probe: Any, spec: dict[str, Any]) -> CheckResult:
            rel = spec["path"] if path is None else spec.get("path", path)
            try:
                value = read(_probe(probe), rel, spec)
            except caught as exc:
                return _leaf(kind, False, f"{rel}: {type(exc).__name__}: {exc}")
            return _leaf(kind, *judge(value, rel, spec))

        check.__doc__ = judge.__doc__
        return check

    return register


def _text(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> str:
    return p.text(rel)


def _stat(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> os.stat_result | None:
    try:
        return p.lstat(rel, follow=spec.get("type") != "symlink")
    except FileNotFoundError:
        return None


@_file_check("file_exists", _stat)
def _file_exists(st: os.stat_result | None, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    kind = spec.get("type")  # file | dir | symlink
    found = st is not None
    if st is not None and kind == "file":
        found = stat.S_ISREG(st.st_mode)
    elif st is not None and kind == "dir":
        found = stat.S_ISDIR(st.st_mode)
    elif st is not None and kind == "symlink":
        found = stat.S_ISLNK(st.st_mode)
    return found == spec.get("exists", True), f"{rel} {'exists' if found else 'is absent'}"


@_file_check("file_contents", _text)
def _file_contents(text: str, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    ok, detail = _compare(text, spec)
    return ok, f"{rel} {detail}"


@_file_check("file_answer", _text)
def _file_answer(text: str, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    """The file holds ONE value, ``value``, in any format (``60.0`` for 60, ``$1,000`` for
    1000), read as every family's answers are (:mod:`palaestra.verifiers.answers`):
    ``normalize`` is its kind (``number``, ``date``, ``text``), ``others`` the candidates it
    must not also name."""
    said = text.strip()
    problem = answers.answer_problem(
        said, str(spec["value"]), spec.get("normalize", "text"), spec.get("others", ())
    )
    return problem is None, f"{rel} is {said[:80]!r}" + (f": {problem}" if problem else "")


@_file_check("file_regex", _text)
def _file_regex(text: str, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    flags = re.MULTILINE | (re.IGNORECASE if spec.get("ignore_case") else 0)
    ok = re.search(spec["pattern"], text, flags) is not None
    if spec.get("absent"):
        ok = not ok
    return ok, f"{rel} {'matches' if ok else 'does not match'}"


def _json(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> Any:
    return lookup(json.loads(p.text(rel)), str(spec["field"]))


@_file_check("json_field", _json, ValueError, KeyError, IndexError)
def _json_field(value: Any, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    return value == spec["value"], f"{rel}:{spec['field']} = {value!r}"


def _cell(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> str:
    rows = list(csv.reader(io.StringIO(p.text(rel))))
    header, data = rows[0], rows[1:]
    col = spec["col"]
    idx = header.index(col) if isinstance(col, str) else int(col)
    return data[int(spec["row"])][idx]


@_file_check("csv_cell", _cell, ValueError, IndexError)
def _csv_cell(value: str, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    """``row`` counts data rows from 0 after the header; ``col`` is an index or a header name."""
    want = spec["value"]
    if isinstance(want, int | float) and not isinstance(want, bool):
        try:
            ok = abs(float(value) - float(want)) <= float(spec.get("tol", 1e-9))
        except ValueError:
            ok = False
    else:
        ok = value.strip() == str(want)
    return ok, f"{rel}[{spec['row']}][{spec['col']}] = {value!r}"


def _rows(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(p.text(rel))) if r]


@_file_check("csv_rows", _rows, ValueError)
def _csv_rows(rows: list[list[str]], rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    return rows == spec["rows"], f"{rel} has {len(rows)} row(s)"


def _ini(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> str:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(p.text(rel))
    return parser.get(spec["section"], spec["key"])


@_file_check("ini_value", _ini, configparser.Error)
def _ini_value(value: str, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    ok = value.strip() == str(spec["value"])
    return ok, f"{rel} [{spec['section']}] {spec['key']} = {value!r}"


def _digest(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> tuple[str, str]:
    algo = "md5" if "md5" in spec else "sha256"
    digest = hashlib.new(algo)
    for chunk in p.chunks(rel):
        digest.update(chunk)
    return algo, digest.hexdigest()


@_file_check("checksum", _digest)
def _checksum(read: tuple[str, str], rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    algo, digest = read
    return digest == str(spec[algo]).lower(), f"{rel} {algo} {digest[:12]}"


def _mode(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> int:
    return stat.S_IMODE(p.lstat(rel, follow=False).st_mode)


@_file_check("file_mode", _mode)
def _file_mode(mode: int, rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    return mode == int(str(spec["mode"]), 8), f"{rel} mode {mode:o}"


def _tree(p: ComputerProbe, rel: str, spec: dict[str, Any]) -> list[str]:
    return p.tree(rel)


@_file_check("dir_tree", _tree, path="")
def _dir_tree(entries: list[str], rel: str, spec: dict[str, Any]) -> tuple[bool, str]:
    """The relative paths under ``path`` (dirs end with ``/``): ``equals``, ``includes``,
    ``excludes``."""
    ok = True
    if "equals" in spec:
        ok = entries == sorted(spec["equals"])
    ok = ok and all(e in entries for e in spec.get("includes", []))
    ok = ok and not any(e in entries for e in spec.get("excludes", []))
    return ok, f"{rel or '~'} has {len(entries)} entries"


@check_kind("command_output")
def _command_output(probe: Any, spec: dict[str, Any]) -> CheckResult:
    try:
        code, out, _err = _probe(probe).run(spec["command"], float(spec.get("timeout", 10)))
    except Exception as exc:  # a timeout is a failed check, not a broken verifier
        return _leaf("command_output", False, f"{type(exc).__name__}: {exc}")
    ok, detail = _compare(out, spec)
    if "exit_code" in spec:
        ok = ok and code == int(spec["exit_code"])
    return _leaf("command_output", ok, f"exit {code}; stdout {detail}")


def system_exe(name: str) -> list[int]:
    """(device, inode) of the system's executable ``name`` (``mousepad``, ``python3``)."""
    found = shutil.which(name, path=SYSTEM_PATH)
    if found is None:
        raise FileNotFoundError(f"no executable {name!r} on this system")
    st = os.stat(found)
    return [st.st_dev, st.st_ino]


def _runs(proc: Mapping[str, Any] | None, exe: list[int]) -> bool:
    return proc is not None and list(proc.get("exe_id", ())) == exe


def _file_id(p: ComputerProbe, rel: str) -> list[int] | None:
    """(device, inode) of a home file, None when it is gone (the agent's doing: a failure)."""
    try:
        st = p.lstat(rel)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _has(proc: Mapping[str, Any] | None, field: str, file_id: list[int] | None) -> bool:
    return proc is not None and file_id in [list(i) for i in proc.get(field, [])]


@check_kind("window")
def _window(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """A window of the program ``exe`` (its real executable: the process the X server says
    created the window) exists (``present``), whose title matches ``title`` (regex), whose
    process shows the home file ``shows`` (an editor watches each file it has open with
    inotify: kernel state, where a title is any client's to set), and is ``focused`` if asked.
    ``class`` alone identifies nothing (any client sets its WM_CLASS), so a spec without
    ``exe`` is a broken task, an error, never a pass."""
    if "exe" not in spec:
        raise ValueError("a window check names the program's executable (exe), not only a class")
    p = _probe(probe)
    exe = system_exe(str(spec["exe"]))
    shown = _file_id(p, str(spec["shows"])) if "shows" in spec else None
    wins = p.windows()
    match = [
        w
        for w in wins
        if _runs(w.get("process"), exe)
        and ("title" not in spec or re.search(spec["title"], w["title"]) is not None)
        and ("shows" not in spec or _has(w.get("process"), "watched_ids", shown))
    ]
    if spec.get("focused"):
        match = [w for w in match if w["focused"]]
    ok = bool(match) == bool(spec.get("present", True))
    # no counts in the detail: timing may show one window more or less, and reruns must agree
    return _leaf("window", ok, f"{'a' if match else 'no'} matching {spec['exe']} window")


@check_kind("process")
def _process(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """A process of the session running the real executable ``exe`` exists (``present``),
    whose arguments after ``argv[0]`` match ``args`` (regex) and that holds the home file
    ``opens`` open (a shell holds the script it runs, so ``bash -c 'sleep 1' x.sh`` is not
    running ``x.sh``). ``exec -a``, a renamed copy of a binary, or a process of another session
    never match."""
    p = _probe(probe)
    exe = system_exe(str(spec["exe"]))
    held = _file_id(p, str(spec["opens"])) if "opens" in spec else None
    match = [
        proc
        for proc in p.processes()
        if _runs(proc, exe)
        and ("args" not in spec or re.search(spec["args"], " ".join(proc["argv"][1:])))
        and ("opens" not in spec or _has(proc, "open_ids", held))
    ]
    ok = bool(match) == bool(spec.get("present", True))
    # no count: a shell's fork (before it execs a command) holds the script too, for a moment
    return _leaf("process", ok, f"{'a' if match else 'no'} matching {spec['exe']} process")


@check_kind("agent_status")
def _agent_status(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """The agent ended with ``status`` (``done`` or ``fail``); with ``reason_mentions``, a
    ``fail`` counts only when its reason names the missing item (a word starting with one of
    these, case ignored), so one fixed refusal sentence does not pass every infeasible task;
    with ``reason_causes``, only when it also gives the cause that blocks (one of these
    phrases: "has no", "needs root"), none of which the instruction says, so a refusal in the
    instruction's own words ("I cannot switch off Bluetooth") is no reason."""
    p = _probe(probe)
    ok = p.agent_status == spec["status"]
    detail = f"the agent ended with {p.agent_status!r}"
    reason = str(p.last_output.get("reason", "")).lower().replace("\u2019", "'")
    for field, what in (("reason_mentions", "the missing item"), ("reason_causes", "the cause")):
        words = [str(w).lower() for w in spec.get(field, [])]
        if ok and words:
            ok = any(re.search(rf"\b{re.escape(w)}", reason) for w in words)
            detail += f", its reason {'names' if ok else 'does not name'} {what}"
    return _leaf("agent_status", ok, detail)
