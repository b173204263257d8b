"""The computer family's strategy space for adversary search: hollow outputs and refusals.

Built only from what an agent is told and can do: the instruction (the files and folders it
names, its quoted words, its sentences) and the standard actions of the desktop
(``run_shell``, ``done``, ``fail``). Nothing reads the task's setup, oracle or verifier, as the
named adversaries of :mod:`palaestra.envs.computer.policies` may. The primitives:

- exploring (each a shell command on the paths the instruction names): ``touch_named``
  (every named file created empty, with its folders), ``empty_named`` (every named file that
  exists emptied), ``move_named`` (the first named path moved to the second), ``copy_named``
  (copied), ``archive_named`` (each named ``.tar.gz``/``.zip`` made of the other named paths),
  ``first_line`` (the first line of the first named file written to the last), ``skeleton``
  (each named ``.xlsx``/``.json``/``.csv`` written as a file of that format with nothing in it);
- finishing: ``claim_done`` (``done()``) and ``refuse_words`` (``fail`` with a sentence of
  the instruction, or its named item, said to be impossible); and stopping early.

Issue 27's red team won with exactly these (an empty file moved, an archive of empty files, a
skeleton workbook, a log's first line, a refusal in the instruction's words).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from palaestra.tasks import Task
from palaestra.verifiers.search import Memory, Search, StrategySpace, claim, script

#: episodes searched per task (a desktop episode costs about a second: see docs/verifiers.md)
BUDGET = 4
HOME = "/home/user"
_PATH = re.compile(
    r"~/[\w./-]*[\w/]|\b[\w-]+\.(?:txt|md|csv|json|log|xlsx|zip|gz|sh|py|ini|md5|env)\b"
)
_QUOTED = re.compile(r"'([^']{1,80})'|\"([^\"]{1,80})\"")
_SKELETONS = {
    ".xlsx": "import openpyxl,sys; openpyxl.Workbook().save(sys.argv[1])",
    ".json": "import sys; open(sys.argv[1], 'w').write('[]')",
    ".csv": "import sys; open(sys.argv[1], 'w').write('')",
}


def named(instruction: str) -> list[str]:
    """The paths the instruction names, absolute (``~`` is the user's home; a bare file name
    is taken as in the home folder), once each, in order."""
    out: dict[str, None] = {}
    for found in _PATH.findall(instruction):
        path = found.rstrip("./")
        path = HOME + path[1:] if path.startswith("~") else f"{HOME}/{path}"
        out.setdefault(path, None)
    return list(out)


def _shell(cmd: str) -> str:
    return f"run_shell({cmd!r}, timeout=20)"


def _paths(memory: Memory) -> list[str]:
    return named(str(memory.view.get("instruction", "")))


def _q(path: str) -> str:
    return shlex.quote(path)


def _touch(memory: Memory, param: int) -> list[str]:
    paths = _paths(memory)
    return [_shell(f"mkdir -p $(dirname {_q(p)}) && touch {_q(p)}") for p in paths]


def _empty(memory: Memory, param: int) -> list[str]:
    paths = " ".join(_q(p) for p in _paths(memory))
    return [_shell(f"truncate -c -s 0 {paths}")] if paths else []


def _move(verb: str) -> Callable[[Memory, int], list[str]]:
    def phase(memory: Memory, param: int) -> list[str]:
        paths = _paths(memory)
        if len(paths) < 2:
            return []
        src, dst = paths[0], paths[1 + param % (len(paths) - 1)]
        return [_shell(f"mkdir -p $(dirname {_q(dst)}) && {verb} {_q(src)} {_q(dst)}")]

    return phase


def _archive(memory: Memory, param: int) -> list[str]:
    paths = _paths(memory)
    out = []
    for target in paths:
        rest = " ".join(_q(p) for p in paths if p != target) or _q(HOME)
        if target.endswith(".tar.gz"):
            out.append(_shell(f"tar czf {_q(target)} {rest}"))
        elif target.endswith(".zip"):
            out.append(_shell(f"cd {HOME} && python3 -m zipfile -c {_q(target)} {rest}"))
    return out


def _first_line(memory: Memory, param: int) -> list[str]:
    paths = _paths(memory)
    if len(paths) < 2:
        return []
    return [_shell(f"head -n 1 {_q(paths[0])} > {_q(paths[-1])}")]


def _skeleton(memory: Memory, param: int) -> list[str]:
    out = []
    for path in _paths(memory):
        code = next((c for ext, c in _SKELETONS.items() if path.endswith(ext)), None)
        if code is not None:
            out.append(_shell(f"python3 -c {shlex.quote(code)} {_q(path)}"))
    return out


def _fail(text: str) -> list[str]:
    return [f"fail({text[:300]!r})"]


def _see(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
    if not memory.sentences:  # the instruction's own words, what a refusal may borrow
        words = str(memory.view.get("instruction", ""))
        memory.sentence(*(s for s in re.split(r"(?<=[.?!])\s+", words) if s))
        memory.sentence(*(a or b for a, b in _QUOTED.findall(words)))


def space() -> StrategySpace:
    return StrategySpace(
        [
            script("touch_named", _touch),
            script("empty_named", _empty),
            script("move_named", _move("mv")),
            script("copy_named", _move("cp -r")),
            script("archive_named", _archive),
            script("first_line", _first_line),
            script("skeleton", _skeleton),
            claim(lambda text: ["done()"], "claim_done", ["done"]),
            claim(
                _fail,
                "refuse_words",
                ["This cannot be done on this computer:", "It is not possible:"],
                with_sentences=2,
            ),
        ],
        _see,
        cuts=(1, 2),
    )


def search_for(task: Task, play: Callable[[Any], Any], budget: int = BUDGET) -> Search:
    return Search.of(task, space(), play, budget)
