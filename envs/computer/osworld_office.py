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
- OSWorld's postconfig saves the document before scoring (activate its window, Ctrl+S): it
  becomes the task's ``before_scoring`` steps, which the env plays after the agent's last step
  and before the verifier reads the file (``before_scoring.py``), so an agent that edits and
  never saves scores as on OSWorld. Each Ctrl+S is followed by an answer to LibreOffice's
  "Confirm File Format" question (use the document's own format) when it asks. A postconfig
  that re-downloads and re-opens the gold file only to save it again keeps the gold as
  downloaded; one that does more (converting the file to CSV) makes the task unsupported. An
  agent that leaves a dialog open or closes the document gets no save: its file is scored as
  it left it.
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


#: the longest wait a postconfig ``sleep`` becomes (OSWorld's VM is slower to settle than ours)
MAX_WAIT = 3.0
#: LibreOffice's question on saving in a non-ODF format (xlsx, docx, pptx; its "Confirm File
#: Format" dialog, waited for: it opens a moment after the keys) answered "use that format"
#: (Return), the save OSWorld's Ctrl+S makes, then time to write the file. Optional: an ODF
#: document, or a profile that does not ask, raises no such window.
KEEP_FORMAT: list[dict[str, Any]] = [
    {
        "activate_window": {
            "title": "Confirm File Format",
            **{"strict": True, "optional": True, "timeout": 3},
        }
    },
    {"name": "key", "args": {"combo": "Return"}},
    {"name": "wait", "args": {"seconds": 2.0}},
]


def postconfig(ev: dict[str, Any], files: Files, setup: dict[str, Any]) -> list[str]:
    """OSWorld's ``evaluator.postconfig`` as the task's ``before_scoring`` steps (the env plays
    them after the agent's last step, before the verifier reads the files): ``activate_window``
    focuses the window by the window manager, ``sleep`` is a short wait, a ``pyautogui`` script
    becomes GUI actions (each Ctrl+S answered "keep current format" when LibreOffice asks), and
    a ``download`` + ``open`` of the gold file the evaluator compares with only re-saves that
    gold: the gold comes from the cache and those steps are dropped (:func:`_regold`). Anything
    else is a reason the task cannot run."""
    steps: list[dict[str, Any]] = []
    reasons: list[str] = []
    focus: dict[str, Any] | None = None  # the last window activated: what later keys are for
    post = _regold(ev, files, list(ev.get("postconfig") or []))
    for step in post:
        kind, params = step.get("type"), step.get("parameters") or {}
        if kind == "sleep":
            seconds = min(float(params.get("seconds", 0.5) or 0), MAX_WAIT)
            steps.append({"name": "wait", "args": {"seconds": seconds}})
        elif kind == "activate_window":
            key = "class" if params.get("by_class") else "title"
            window = {key: str(params.get("window_name", "")), "strict": bool(params.get("strict"))}
            steps.append(focus := {"activate_window": window})
        elif kind == "execute" and _script(params.get("command")) is not None:
            try:
                actions = parse_pyautogui(str(_script(params.get("command"))))
            except ActionError as exc:
                reasons.append(f"evaluator postconfig script is not plain pyautogui: {exc.detail}")
                continue
            for action in actions:
                steps.append(action)
                if action["name"] == "key" and action["args"].get("combo") == "ctrl+s":
                    steps += KEEP_FORMAT + ([focus] if focus else [])  # back to the document
        else:
            what = params.get("command", kind)
            what = shlex.join(map(str, what)) if isinstance(what, list) else str(what)
            reasons.append(
                f"evaluator postconfig does more than save the document before scoring "
                f"({kind}: {what[:80]})"
            )
    if steps and not reasons:
        setup["before_scoring"] = steps
    return reasons


def _script(cmd: Any) -> str | None:
    """The code of a ``python -c`` command (OSWorld's pyautogui steps), else None."""
    if isinstance(cmd, list) and len(cmd) >= 3 and str(cmd[0]).startswith("python"):
        return str(cmd[2]) if cmd[1] == "-c" else None
    return None


def _regold(ev: dict[str, Any], files: Files, post: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``post`` without the steps that download the gold file the evaluator reads from the VM
    (``expected`` a ``vm_file``), open it and save it again: the gold is the download's bytes
    from the cache instead (``ev["expected"]`` becomes its ``cloud_file``). The re-save is not
    replayed: the gold is compared as downloaded (saved by an office app already)."""
    expected = ev.get("expected")
    if not isinstance(expected, dict) or expected.get("type") != "vm_file":
        return post
    gold = _home_path(str(expected.get("path", "")))
    url = next(
        (
            str(f.get("url", ""))
            for s in post
            if s.get("type") == "download"
            for f in (s.get("parameters") or {}).get("files", [])
            if _home_path(str(f.get("path", ""))) == gold
        ),
        None,
    )
    if gold is None or url is None:
        return post
    start = next(i for i, s in enumerate(post) if s.get("type") == "download")
    rest = post[start:]
    name = PurePosixPath(gold).name
    opens_gold = all(
        s.get("type") in ("download", "sleep", "execute")
        or (s.get("type") == "open" and _home_path(str(s["parameters"].get("path"))) == gold)
        or (
            s.get("type") == "activate_window"
            and name in str((s.get("parameters") or {}).get("window_name", ""))
        )
        for s in rest
    )
    if not opens_gold or any(
        s.get("type") == "execute" and _script((s.get("parameters") or {}).get("command")) is None
        for s in rest
    ):
        return post
    ev["expected"] = {"type": "cloud_file", "path": url, "dest": expected.get("dest")}
    return post[:start]


def _nth(value: Any, i: int, n: int) -> Any:
    """The i-th of OSWorld's parallel lists (a single value serves a single metric)."""
    if n == 1:
        return value[0] if isinstance(value, list) and len(value) == 1 else value
    return value[i] if isinstance(value, list) and i < len(value) else None


def evaluator(
    ev: dict[str, Any], files: Files, setup: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The verifier for an office evaluator, or None and the reasons it cannot be one; its
    postconfig goes into ``setup`` (:func:`postconfig`)."""
    ev = dict(ev)  # _regold may replace its expected gold
    funcs = as_list(ev.get("func"))
    reasons = [
        f"evaluator metric {f!r} is not implemented (ours: {', '.join(METRICS)})"
        for f in funcs
        if f not in METRICS
    ]
    reasons += postconfig(ev, files, setup)
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
