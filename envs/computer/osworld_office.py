"""OSWorld's office domains (``libreoffice_calc``, ``_writer``, ``_impress``) for the loader.

What :func:`osworld.convert` asks of this module: the config steps those domains use
(``download``, ``open``, ``launch``; ``execute`` and ``sleep`` are the loader's own) and their
evaluators (a ``vm_file`` the agent saved, compared with a gold ``cloud_file``).

Decisions:

- ``download``: the file comes from the download cache (``osworld_cache.py``), never the
  network; it is written into the fresh home as the setup's ``binary`` file (base64, written
  from the host before the sandbox starts). An absent file makes the task not runnable, with the
  URL it needs in the reason and in :attr:`Files.missing`.
- ``open``: the document opens in its app at reset (the setup's ``apps`` entry
  ``["calc", path]``, ``["writer", path]``, ``["impress", path]``, by the file's extension);
  ``launch`` of ``libreoffice --calc|--writer|--impress`` starts the app with no document.
- Metrics: ``compare_table``, ``compare_docx_files`` and ``compare_pptx_files`` become the check
  kinds of the same names (``verifiers/office_osworld.py``, with OSWorld's semantics and
  options): the agent's file (``path``, read in the session's isolated runner) against the gold
  file's bytes (``expected``, from the cache: trusted, parsed in-process). A list of metrics is
  ``all`` (or ``any`` for OSWorld's ``conj: "or"``) of them, and runs only if each does. Every
  other metric those domains use is named in the reason (each is used by one task of the
  examples), as is a ``compare_table`` rule the kind does not compute (``pivot_table``...).
- OSWorld's postconfig saves the document before scoring (activate its window, Ctrl+S). Here the
  verifier reads the file as the agent left it, so the agent must save: stricter than OSWorld
  for an agent that edits and never saves, identical otherwise (the metric sees the same file).
  A postconfig that does more than save (converting the file to CSV, opening another) makes the
  task unsupported.
"""

from __future__ import annotations

import base64
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from palaestra.envs.computer.actions import parse_pyautogui
from palaestra.envs.computer.osworld_cache import Cache, as_list
from palaestra.errors import ActionError
from palaestra.verifiers.office_osworld import UNSUPPORTED as UNSUPPORTED_RULES

DOMAINS = ("libreoffice_calc", "libreoffice_writer", "libreoffice_impress")
HOME = "/home/user"
#: the app that opens a document, by its extension
APP_OF = {
    **dict.fromkeys((".xlsx", ".xls", ".ods", ".csv"), "calc"),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), "writer"),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "impress"),
}
#: OSWorld's metrics that compare the agent's document with a gold one: our kinds of those names
METRICS = ("compare_table", "compare_docx_files", "compare_pptx_files")
_LAUNCH = re.compile(r"^(?:libreoffice|soffice)\s+--(calc|writer|impress)$")


@dataclass
class Files:
    """The download cache as one task sees it: what it holds, the URLs it lacks, and the home
    paths the task's downloads write (whether or not the cache had them)."""

    cache: Cache
    missing: list[str] = field(default_factory=list)
    planned: set[str] = field(default_factory=set)

    def get(self, url: str) -> bytes | None:
        data = self.cache.read(url)
        if data is None and url not in self.missing:
            self.missing.append(url)
        return data

    def reason(self) -> str:
        """Why the task cannot run while :attr:`missing` is not empty."""
        n = len(self.missing)
        return (
            f"needs {n} file{'s' if n > 1 else ''} that the download cache "
            f"({self.cache.folder}) does not hold: no network here; `palaestra osworld cache "
            f"DIR` fetches {'them' if n > 1 else 'it'} where the internet is reachable "
            f"({', '.join(self.missing)})"
        )


def _home_path(path: str) -> str | None:
    """``path`` in the home (OSWorld's ``/home/user``; a relative path is the home's, as for
    OSWorld's VM server), or None when it lies outside."""
    path = path if path.startswith("/") else f"{HOME}/{path}"
    inside = path.startswith(HOME + "/") and ".." not in PurePosixPath(path).parts
    return path if inside else None


def download(step: dict[str, Any], files: Files, setup: dict[str, Any]) -> list[str]:
    """A ``download`` step: its files from the cache into the setup's ``binary`` files (a file
    the cache lacks is in ``files.missing``, which the loader reports)."""
    reasons = []
    for f in (step.get("parameters") or {}).get("files", []):
        url, path = str(f.get("url", "")), _home_path(str(f.get("path", "")))
        if path is None:
            reasons.append(f"config downloads to {f.get('path')!r}, outside the home")
            continue
        files.planned.add(path)
        data = files.get(url)
        if data is not None:
            setup.setdefault("binary", {})[path] = base64.b64encode(data).decode()
    return reasons


def open_document(step: dict[str, Any], files: Files, setup: dict[str, Any]) -> list[str]:
    """An ``open`` step: the document's app, started with it at reset."""
    given = str((step.get("parameters") or {}).get("path", ""))
    path = _home_path(given)
    app = APP_OF.get(PurePosixPath(given).suffix.lower())
    if path is None or app is None:
        return [f"config opens {given!r}, which is not an office document in the home"]
    if path not in setup.get("binary", {}):  # a download the cache lacks is reported as such
        return [] if path in files.planned else [f"config opens {path}, which no download wrote"]
    setup.setdefault("apps", []).append([app, path])
    return []


def launch(step: dict[str, Any], files: Files, setup: dict[str, Any]) -> list[str]:
    """A ``launch`` step: ``libreoffice --impress`` (or calc, writer) with no document."""
    cmd = (step.get("parameters") or {}).get("command", "")
    text = shlex.join(map(str, cmd)) if isinstance(cmd, list) else str(cmd)
    found = _LAUNCH.match(text.strip())
    if found is None:
        return [f"config launches {text!r}, which is not an office app"]
    setup.setdefault("apps", []).append([found.group(1)])
    return []


#: the config steps of the office domains, by type: each adds to the setup or says why not
STEPS = {"download": download, "open": open_document, "launch": launch}


def reads_documents(ev: dict[str, Any]) -> bool:
    """Whether an evaluator is this module's: it reads a file the agent saved (``vm_file``),
    names a document metric, or combines several metrics."""
    func = ev.get("func")
    return (
        isinstance(func, list)
        or func in METRICS
        or any(
            isinstance(r, dict) and r.get("type") == "vm_file" for r in as_list(ev.get("result"))
        )
    )


def _saves_only(step: dict[str, Any]) -> bool:
    """Whether a postconfig step only waits, focuses the window or presses Ctrl+S."""
    kind = step.get("type")
    if kind in ("sleep", "activate_window"):
        return True
    cmd = (step.get("parameters") or {}).get("command")
    if kind != "execute" or not isinstance(cmd, list) or len(cmd) < 3 or cmd[1] != "-c":
        return False
    try:
        actions = parse_pyautogui(str(cmd[2]))
    except ActionError:
        return False
    return all(
        a["name"] == "wait" or (a["name"] == "key" and a["args"].get("combo") == "ctrl+s")
        for a in actions
    )


def _nth(value: Any, i: int, n: int) -> Any:
    """The i-th of OSWorld's parallel lists (a single value serves a single metric)."""
    if n == 1:
        return value[0] if isinstance(value, list) and len(value) == 1 else value
    return value[i] if isinstance(value, list) and i < len(value) else None


def evaluator(ev: dict[str, Any], files: Files) -> tuple[dict[str, Any] | None, list[str]]:
    """The verifier for an office evaluator, or None and the reasons it cannot be one."""
    funcs = as_list(ev.get("func"))
    reasons = [
        f"evaluator metric {f!r} is not implemented (ours: {', '.join(METRICS)})"
        for f in funcs
        if f not in METRICS
    ]
    post = [s for s in ev.get("postconfig") or [] if not _saves_only(s)]
    if post:
        step = post[0]
        what = (step.get("parameters") or {}).get("command", step.get("type"))
        what = shlex.join(map(str, what)) if isinstance(what, list) else str(what)
        reasons.append(
            f"evaluator postconfig does more than save the document before scoring "
            f"({step.get('type')}: {what[:80]})"
        )
    checks = []
    for i, func in enumerate(funcs):
        result = _nth(ev.get("result"), i, len(funcs)) or {}
        expected = _nth(ev.get("expected"), i, len(funcs)) or {}
        options = _nth(ev.get("options"), i, len(funcs)) or {}
        check, why = _metric(str(func), result, expected, options, files)
        reasons += [r for r in why if r not in reasons]
        if check is not None:
            checks.append(check)
    if reasons or len(checks) < len(funcs):
        return None, reasons
    conj = "any" if ev.get("conj") == "or" else "all"
    return {"kind": conj, "checks": checks}, []


def _metric(
    func: str,
    result: dict[str, Any],
    expected: dict[str, Any],
    options: dict[str, Any],
    files: Files,
) -> tuple[dict[str, Any] | None, list[str]]:
    """One document metric as our check kind, or the reasons it cannot be (a metric not ours
    is named by :func:`evaluator`; its getters are not judged here)."""
    if func not in METRICS:
        return None, []
    reasons: list[str] = []
    data, given = None, result.get("path")
    path = _home_path(given) if isinstance(given, str) else None
    if result.get("type") != "vm_file":
        reasons.append(f"evaluator getter {result.get('type')!r} is not supported")
    elif result.get("multi") or not isinstance(given, str):
        reasons.append("evaluator compares several files at once (multi), not supported")
    elif path is None:
        reasons.append(f"evaluator reads {given!r}, outside the home")
    if expected.get("type") == "cloud_file" and isinstance(expected.get("path"), str):
        url = expected["path"]
        data = files.get(url)  # None: in files.missing, which the loader reports
    elif expected.get("multi") or isinstance(expected.get("path"), list):
        reasons.append("evaluator's gold is several files (multi), not supported")
    else:
        reasons.append(f"evaluator's expected getter {expected.get('type')!r} is not supported")
    rules = options.get("rules") if func == "compare_table" else None
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict) and rule.get("type") in UNSUPPORTED_RULES:
            reasons.append(f"compare_table rule {rule['type']!r} is not implemented")
    if reasons or data is None or path is None:
        return None, reasons
    name = str(expected.get("dest") or PurePosixPath(path).name)
    gold = {"name": name, "base64": base64.b64encode(data).decode()}
    return {"kind": func, "path": path, "expected": gold, "options": dict(options)}, []
