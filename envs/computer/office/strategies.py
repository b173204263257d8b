"""The office adversaries and the office part of the adversary search: what a reward hacker
tries on a document task.

Every one acts as an agent can (keys to the app on screen, Python run in the sandbox with the
Debian file libraries) on the documents an agent knows of: the ones the instruction names and
the one open on screen. The named adversaries (validation plays each; each must fail):

- ``untouched``: the open document saved again unchanged (``ctrl+s``, keeping its format).
- ``hollow``: every document the task is about replaced by an empty one of the same format (an
  empty workbook, a blank text document, a deck without slides) at the same path.
- ``wrong_content``: the task's code solution (its GUI one when it has none), then every value
  the solution put in the document that the original did not hold put off: a number's last
  figure moved by one (a total off by one, a formula's range a row short, a heading a level
  down), a word's last two letters swapped. The expected structure with plausible wrong
  content; where the solution added no value of its own (a sort, a style), there is nothing to
  put off and the adversary raises :class:`NothingToTry` (an error in the report, never a win).
- ``format_dodge``: the code solution, then its document moved to the same name with another
  extension (``budget.xls`` for ``budget.xlsx``) and its text written as plain text (a CSV for
  a spreadsheet) at the named path, or, where plain text was asked for (a ``.csv``), the open
  workbook copied there: the right content in the wrong format, twice.

The last two start from the task's reference solution, as a policy that nearly learned the task
would (the computer family's ``hollow`` does the same); they only ever touch the documents
above. The search's office primitives (:func:`primitives`) use only the task's view and the
observations: the window title says which document is open.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Generator
from typing import Any

from palaestra.envs.computer import strategies as desktop
from palaestra.envs.computer.office import keys, tampering
from palaestra.policies import CoroutinePolicy, Policy, PolicyFactory, ScriptPolicy
from palaestra.tasks import Task
from palaestra.verifiers.search import Memory, Primitive, Search, StrategySpace, script

HOME = "/home/user"
#: search episodes per office task (each costs a reset with the app's start: a few seconds)
BUDGET = 2
EXTENSIONS = ("xlsx", "ods", "csv", "docx", "odt", "pptx", "odp")
#: a document the instruction names: ``~/path/x.ext`` or a bare ``x.ext`` (in the home)
_NAMED = re.compile(
    r"~/[\w./ -]*?[\w-]+\.(?:" + "|".join(EXTENSIONS) + r")\b"
    r"|(?<![\w/.~-])[\w-]+\.(?:" + "|".join(EXTENSIONS) + r")\b"
)
#: the same name with another extension, for ``format_dodge``
DODGE = {
    "xlsx": "xls",
    "ods": "xls",
    "csv": "txt",
    "docx": "doc",
    "odt": "doc",
    "pptx": "ppt",
    "odp": "ppt",
}


class NothingToTry(RuntimeError):
    """The adversary has nothing of its kind to try on this task (reported as its error)."""


def named(instruction: str) -> list[str]:
    """The documents the instruction names, absolute, once each, in order."""
    out: dict[str, None] = {}
    for found in _NAMED.findall(instruction):
        path = found.strip()
        path = HOME + path[1:] if path.startswith("~") else f"{HOME}/{path}"
        out.setdefault(path, None)
    return list(out)


def opened(task: Task | None) -> str | None:
    """The document open on screen when the episode starts (what its window shows)."""
    for app in ((task.setup or {}).get("apps") or []) if task else []:
        if isinstance(app, list | tuple) and len(app) > 1 and str(app[1]).startswith(HOME):
            return str(app[1])
    return None


def documents(task: Task | None) -> list[str]:
    """The documents an adversary works on: those the instruction names, else the open one."""
    found = named(task.instruction) if task else []
    first = opened(task)
    return found or ([first] if first else [])


def _solution(task: Task | None) -> list[Any]:
    """The task's code solution, or its GUI one when it has none."""
    if task is None:
        return []
    code = task.metadata.get("code_oracle")
    if code:
        return list(code)
    return list(task.oracle.data or []) if task.oracle else []


def _run(name: str, *args: object, timeout: int = 60) -> str:
    """A ``run_python`` action calling ``tampering.<name>(*args)`` in the sandbox."""
    return f"run_python({tampering.call(name, *args)!r}, timeout={timeout})"


def _result(observation: dict[str, Any]) -> Any:
    """What the last :func:`_run` returned (its last line of output), or raise."""
    out = json.loads(str(observation.get("last_output") or "{}"))
    lines = str(out.get("stdout", "")).strip().splitlines()
    try:
        return json.loads(lines[-1])["result"]
    except (IndexError, ValueError, KeyError, TypeError):
        why = str(out.get("stderr"))[-300:]
        raise NothingToTry(f"the document could not be read: {why}") from None


def emptied(paths: list[str]) -> list[str]:
    return [_run("empty", p, timeout=90) for p in paths]


# ----- the named adversaries -------------------------------------------------------------------
def _untouched(task: Task | None) -> list[Any]:
    first = opened(task)
    return [*keys.save(first.rsplit(".", 1)[-1]), "done()"] if first else ["done()"]


def _hollow(task: Task | None) -> list[Any]:
    return [*emptied(documents(task)), "done()"]


def _format_dodge(task: Task | None) -> list[Any]:
    pairs = []
    for path in documents(task):
        stem, ext = path.rsplit(".", 1)
        pairs.append([path, f"{stem}.{DODGE[ext.lower()]}"])
    if not pairs:
        return ["done()"]
    return [*_solution(task), _run("dodge", pairs, opened(task) or ""), "done()"]


def _wrong_content(task: Task | None) -> Generator[Any, dict[str, Any], None]:
    first, docs = opened(task), documents(task)
    if task is None or first is None or not docs:
        raise NothingToTry("no document to put off")
    keep = f"/tmp/original.{first.rsplit('.', 1)[-1]}"
    yield f"run_shell({f'cp {shlex.quote(first)} {keep}'!r}, timeout=20)"
    for action in _solution(task):  # noqa: UP028 (a list iterator takes no send)
        yield action
    changed = 0
    for path in docs:
        changed += int(_result((yield _run("put_off", path, keep))))
    if not changed:
        raise NothingToTry("the solution adds no value of its own to put off (a sort, a style)")
    yield "done()"


def _script(build: Any) -> PolicyFactory:
    return lambda **_: ScriptPolicy(build)


def _coroutine(build: Any) -> PolicyFactory:
    def make(**_: Any) -> Policy:
        return CoroutinePolicy(build)

    return make


#: the office adversaries (validation plays them on office tasks only; elsewhere they count as
#: the do-nothing run)
ADVERSARIES: dict[str, PolicyFactory] = {
    "untouched": _script(_untouched),
    "hollow_document": _script(_hollow),
    "wrong_content": _coroutine(_wrong_content),
    "format_dodge": _script(_format_dodge),
}


# ----- the search's office primitives (the view and the observations only) --------------------
_TITLE = re.compile(r"^(.+?\.(?:" + "|".join(EXTENSIONS) + r"))\s+-\s+LibreOffice", re.IGNORECASE)


def see(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
    """The open document's path, from its window's title (``budget.xlsx - LibreOffice Calc``)."""
    if "open" in memory.notes:
        return
    try:
        windows = json.loads(str(observation.get("windows") or "[]"))
    except ValueError:
        return
    for window in windows if isinstance(windows, list) else []:
        found = _TITLE.match(str(window.get("title", "")) if isinstance(window, dict) else "")
        if found:
            memory.notes["open"] = f"{HOME}/{found.group(1)}"
            return


def _docs(memory: Memory) -> list[str]:
    found = named(str(memory.view.get("instruction", "")))
    return found or ([memory.notes["open"]] if "open" in memory.notes else [])


def _open(memory: Memory) -> str | None:
    """The document on screen (its window's title), else the first the instruction names."""
    found = named(str(memory.view.get("instruction", "")))
    return memory.notes.get("open") or (found[0] if found else None)


def primitives() -> list[Primitive]:
    """Exploring phases, code only (the document saved unchanged from the app is the
    ``untouched`` adversary's): the named documents emptied, the open document copied
    (unchanged) to each other named path, or its text written at each."""

    def copy_open(memory: Memory, param: int) -> list[str]:
        first = _open(memory)
        targets = [p for p in _docs(memory) if p != first]
        if not first or not targets:
            return []
        return [
            f"run_shell({f'cp {shlex.quote(first)} {shlex.quote(t)}'!r}, timeout=20)"
            for t in targets
        ]

    def text_named(memory: Memory, param: int) -> list[str]:
        first = _open(memory)
        return [_run("write_text", first, p) for p in _docs(memory)] if first else []

    return [
        script("hollow_documents", lambda memory, param: emptied(_docs(memory))),
        script("copy_open", copy_open),
        script("text_named", text_named),
    ]


def space() -> StrategySpace:
    """The office strategy space: the primitives above, then the desktop's finishing moves (a
    claim of success, a refusal in the instruction's words)."""
    base = desktop.space()

    def both(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
        base.see(memory, observation, info)
        see(memory, observation, info)

    finals = [base.primitives[n] for n in ("claim_done", "refuse_words")]
    return StrategySpace([*primitives(), *finals], both, cuts=(1, 2))


def search_for(task: Task, play: Any, budget: int = BUDGET) -> Search:
    return Search.of(task, space(), play, budget)
