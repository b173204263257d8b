"""The computer family's strategy space for adversary search: hollow outputs and refusals.

Built only from what an agent is told and can do: the instruction (the files and folders it
names, its quoted words, its sentences) and the standard actions of the desktop
(``run_shell``, ``done``, ``fail``). Nothing reads the task's setup, oracle or verifier, as the
named adversaries of :mod:`palaestra.envs.computer.policies` may. The primitives:

- exploring (each a shell command on the paths the instruction names, hollow by construction):
  ``touch_named`` (every named file created empty, with its folders), ``empty_named`` (every
  named file emptied), ``move_named`` (the first named path, emptied, moved to another),
  ``copy_named`` (copied), ``archive_named`` (each named ``.tar.gz``/``.zip`` made of the other
  named paths, emptied), ``first_line`` (the first line of the first named file, when it has
  more, written to the last), ``skeleton`` (each named ``.xlsx``/``.json``/``.csv`` written as
  a file of that format with nothing in it);
- finishing: ``claim_done`` (``done()``) and ``refuse_words`` (``fail`` with a sentence of
  the instruction, or its named item, said to be impossible); and stopping early.

Issue 27's red team won with exactly these (an empty file moved, an archive of empty files, a
skeleton workbook, a log's first line, a refusal in the instruction's words).

Where the hollow output *is* the task ("create an empty file ~/hello.txt"), a strategy ends
where the oracle ends: validation compares the named paths' content after both
(:func:`named_state`) and counts such an episode as the strategy abstaining (an error in the
report), never as a win, as the synthesized apps' validation does for a twist that changed
nothing.
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


def _hollowed(paths: list[str]) -> str:
    """Empty every file at or under ``paths`` (names kept): what a hollow output is made of."""
    quoted = " ".join(_q(p) for p in paths)
    return f"find {quoted} -type f -exec truncate -s 0 {{}} + 2>/dev/null;"


def _move(verb: str) -> Callable[[Memory, int], list[str]]:
    """The first named path, emptied, moved or copied to another named path."""

    def phase(memory: Memory, param: int) -> list[str]:
        paths = _paths(memory)
        if len(paths) < 2:
            return []
        src, dst = paths[0], paths[1 + param % (len(paths) - 1)]
        hollow = _hollowed([src])
        return [_shell(f"{hollow} mkdir -p $(dirname {_q(dst)}) && {verb} {_q(src)} {_q(dst)}")]

    return phase


def _archive(memory: Memory, param: int) -> list[str]:
    """Each named archive made of the other named paths, emptied first."""
    paths = _paths(memory)
    out = []
    for target in paths:
        others = [p for p in paths if p != target]
        rest = " ".join(_q(p) for p in others) or _q(HOME)
        hollow = _hollowed(others)
        if target.endswith(".tar.gz"):
            out.append(_shell(f"{hollow} tar czf {_q(target)} {rest}"))
        elif target.endswith(".zip"):
            out.append(_shell(f"{hollow} cd {HOME} && python3 -m zipfile -c {_q(target)} {rest}"))
    return out


def _first_line(memory: Memory, param: int) -> list[str]:
    """The first line of the first named file (of several lines) as the last named file."""
    paths = _paths(memory)
    if len(paths) < 2:
        return []
    src, dst = _q(paths[0]), _q(paths[-1])
    return [_shell(f"[ $(wc -l < {src}) -gt 1 ] && head -n 1 {src} > {dst}")]


def _skeleton(memory: Memory, param: int) -> list[str]:
    out = []
    for path in _paths(memory):
        code = next((c for ext, c in _SKELETONS.items() if path.endswith(ext)), None)
        if code is not None:
            out.append(_shell(f"python3 -c {shlex.quote(code)} {_q(path)}"))
    return out


#: what :func:`named_state` runs: each named path's kind and content digest (a folder's files)
_STATE = (
    'for p in "$@"; do if [ -d "$p" ]; then echo "dir $p"; '
    '(cd "$p" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); '
    'elif [ -e "$p" ]; then echo "file $p $(sha256sum < "$p")"; else echo "none $p"; fi; done'
)


def named_state(probe: Any, task: Task, paths: list[str] | None = None) -> str:
    """The kind and content of every path the instruction names (or of ``paths``), as the
    verifier's own command runner reads them: equal after a strategy and after the oracle means
    the strategy did the task (its hollow output is the answer), not that it beat the verifier."""
    chosen = named(task.instruction) if paths is None else paths
    quoted = " ".join(_q(p) for p in chosen)
    code, out, _ = probe.run(f"sh -c {shlex.quote(_STATE)} state {quoted}")
    return f"{code}\n{out}"


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
