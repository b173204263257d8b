"""Check kinds that read a computer session's files, commands and windows from outside.

The probe is built by the env on the worker and reads the session's home directory on the host.
Decisions:

- Paths are relative to the home (``~/`` and ``/home/user/`` prefixes are accepted) and are
  resolved on the host with symlinks followed *only* while they stay inside the home: an agent
  that plants ``report.txt -> /etc/shadow`` gets "escapes the home", never root's read of it.
- ``command_output`` runs the task's command through the probe's ``run``, which the env
  provides: a fresh sandbox over a read-only view of the home (the computer family's
  ``sandbox.run_isolated``), not the agent's sandbox: nothing the agent left running can answer
  for it, its dotfiles are ignored, and the check cannot change what it checks. So this module
  imports nothing from the env, as no verifier does.
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
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from palaestra.verifiers.base import CheckResult, check_kind, lookup

HOME = "/home/user"


#: run(command, timeout) -> (exit code, stdout, stderr): a command over the session's home
CommandRunner = Callable[[str, float], tuple[int, str, str]]


class ComputerProbe:
    """Privileged read of one session: its home on the host, a way to run a command over it,
    its display, the agent's end."""

    def __init__(
        self,
        home: Path,
        run: CommandRunner,
        gui: Any = None,
        agent_status: str | None = None,
        last_output: Mapping[str, Any] | None = None,
    ) -> None:
        self.home = Path(home)
        self.run = run
        self.gui = gui
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
            return self.home
        root = self.home.resolve()
        if not follow:
            parent = self.path(str(Path(rel).parent)) if Path(rel).parent != Path(".") else root
            return parent / Path(rel).name
        path = (root / rel).resolve()
        if not path.is_relative_to(root):
            raise PermissionError(f"{rel} escapes the home directory")
        return path

    def text(self, rel: str) -> str:
        return self.path(rel).read_text(errors="replace")

    def windows(self) -> list[dict[str, Any]]:
        return self.gui.windows() if self.gui is not None else []


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


def _missing(kind: str, rel: str, exc: Exception) -> CheckResult:
    return _leaf(kind, False, f"{rel}: {type(exc).__name__}: {exc}")


@check_kind("file_exists")
def _file_exists(probe: Any, spec: dict[str, Any]) -> CheckResult:
    p = _probe(probe)
    rel = spec["path"]
    want = spec.get("exists", True)
    try:
        path = p.path(rel, follow=spec.get("type") != "symlink")
        st = path.lstat() if path.exists() or path.is_symlink() else None
    except (OSError, PermissionError) as exc:
        return _missing("file_exists", rel, exc)
    kind = spec.get("type")  # file | dir | symlink
    found = st is not None
    if st is not None and kind == "file":
        found = stat.S_ISREG(st.st_mode)
    elif st is not None and kind == "dir":
        found = stat.S_ISDIR(st.st_mode)
    elif st is not None and kind == "symlink":
        found = stat.S_ISLNK(st.st_mode)
    return _leaf("file_exists", found == want, f"{rel} {'exists' if found else 'is absent'}")


@check_kind("file_contents")
def _file_contents(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    try:
        text = _probe(probe).text(rel)
    except (OSError, PermissionError) as exc:
        return _missing("file_contents", rel, exc)
    ok, detail = _compare(text, spec)
    return _leaf("file_contents", ok, f"{rel} {detail}")


@check_kind("file_regex")
def _file_regex(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    try:
        text = _probe(probe).text(rel)
    except (OSError, PermissionError) as exc:
        return _missing("file_regex", rel, exc)
    flags = re.MULTILINE | (re.IGNORECASE if spec.get("ignore_case") else 0)
    ok = re.search(spec["pattern"], text, flags) is not None
    if spec.get("absent"):
        ok = not ok
    return _leaf("file_regex", ok, f"{rel} {'matches' if ok else 'does not match'}")


@check_kind("json_field")
def _json_field(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    try:
        data = json.loads(_probe(probe).text(rel))
        value = lookup(data, str(spec["field"]))
    except (OSError, PermissionError, ValueError, KeyError, IndexError) as exc:
        return _missing("json_field", rel, exc)
    ok = value == spec["value"]
    return _leaf("json_field", ok, f"{rel}:{spec['field']} = {value!r}")


@check_kind("csv_cell")
def _csv_cell(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """``row`` counts data rows from 0 after the header; ``col`` is an index or a header name."""
    rel = spec["path"]
    try:
        rows = list(csv.reader(io.StringIO(_probe(probe).text(rel))))
        header, data = rows[0], rows[1:]
        col = spec["col"]
        idx = header.index(col) if isinstance(col, str) else int(col)
        value = data[int(spec["row"])][idx]
    except (OSError, PermissionError, ValueError, IndexError) as exc:
        return _missing("csv_cell", rel, exc)
    want = spec["value"]
    if isinstance(want, int | float) and not isinstance(want, bool):
        try:
            ok = abs(float(value) - float(want)) <= float(spec.get("tol", 1e-9))
        except ValueError:
            ok = False
    else:
        ok = value.strip() == str(want)
    return _leaf("csv_cell", ok, f"{rel}[{spec['row']}][{col}] = {value!r}")


@check_kind("csv_rows")
def _csv_rows(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    try:
        rows = [r for r in csv.reader(io.StringIO(_probe(probe).text(rel))) if r]
    except (OSError, PermissionError, ValueError) as exc:
        return _missing("csv_rows", rel, exc)
    ok = rows == spec["rows"]
    return _leaf("csv_rows", ok, f"{rel} has {len(rows)} row(s)")


@check_kind("ini_value")
def _ini_value(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_probe(probe).text(rel))
        value = parser.get(spec["section"], spec["key"])
    except (OSError, PermissionError, configparser.Error) as exc:
        return _missing("ini_value", rel, exc)
    ok = value.strip() == str(spec["value"])
    return _leaf("ini_value", ok, f"{rel} [{spec['section']}] {spec['key']} = {value!r}")


@check_kind("checksum")
def _checksum(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    algo = "md5" if "md5" in spec else "sha256"
    try:
        digest = hashlib.new(algo, _probe(probe).path(rel).read_bytes()).hexdigest()
    except (OSError, PermissionError) as exc:
        return _missing("checksum", rel, exc)
    ok = digest == str(spec[algo]).lower()
    return _leaf("checksum", ok, f"{rel} {algo} {digest[:12]}")


@check_kind("file_mode")
def _file_mode(probe: Any, spec: dict[str, Any]) -> CheckResult:
    rel = spec["path"]
    try:
        mode = stat.S_IMODE(_probe(probe).path(rel, follow=False).lstat().st_mode)
    except (OSError, PermissionError) as exc:
        return _missing("file_mode", rel, exc)
    ok = mode == int(str(spec["mode"]), 8)
    return _leaf("file_mode", ok, f"{rel} mode {mode:o}")


@check_kind("dir_tree")
def _dir_tree(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """The relative paths under ``path`` (dirs end with ``/``): ``equals``, ``includes``,
    ``excludes``."""
    rel = spec.get("path", "")
    try:
        root = _probe(probe).path(rel)
        entries = sorted(
            str(p.relative_to(root)) + ("/" if p.is_dir() and not p.is_symlink() else "")
            for p in root.rglob("*")
        )
    except (OSError, PermissionError) as exc:
        return _missing("dir_tree", rel, exc)
    ok = True
    if "equals" in spec:
        ok = entries == sorted(spec["equals"])
    ok = ok and all(e in entries for e in spec.get("includes", []))
    ok = ok and not any(e in entries for e in spec.get("excludes", []))
    return _leaf("dir_tree", ok, f"{rel or '~'} has {len(entries)} entries")


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


@check_kind("window")
def _window(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """A window whose ``class`` equals and ``title`` matches (regex) exists (``present``), and
    is ``focused`` if asked."""
    wins = _probe(probe).windows()
    match = [
        w
        for w in wins
        if ("class" not in spec or w["class"].lower() == str(spec["class"]).lower())
        and ("title" not in spec or re.search(spec["title"], w["title"]) is not None)
    ]
    if spec.get("focused"):
        match = [w for w in match if w["focused"]]
    ok = bool(match) == bool(spec.get("present", True))
    return _leaf("window", ok, f"{len(match)} matching window(s) of {len(wins)}")


@check_kind("agent_status")
def _agent_status(probe: Any, spec: dict[str, Any]) -> CheckResult:
    status = _probe(probe).agent_status
    return _leaf("agent_status", status == spec["status"], f"the agent ended with {status!r}")
