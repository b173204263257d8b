"""The computer family's scripted policies, found by :class:`palaestra.family.Family` in
``POLICIES``.

- ``replay``: plays a fixed action list; every computer oracle is one
  (``{"policy": "replay", "data": ["run_shell('mkdir -p ~/projects/alpha')"]}``).
- ``noop``: does nothing at all, so the episode is scored as the task set it up (execution
  validation's do-nothing: no action, then the verifier). It ends the episode without a step;
  the runner verifies.
- ``random``: :class:`RandomPolicy`, seeded GUI actions on the screen the observation shows.
- ``code_oracle``: plays a task's code solution (an office task's private ``code_oracle``).

``ADVERSARIES`` are the cheap strategies a reward hacker tries on a desktop, each a script built
from the task's own data (its verifier, its oracle), never written for one task; execution
validation plays every one and a task ships only if each fails it:

- ``claim_done``: ends at once with ``done()``.
- ``refuse``: ends at once with ``fail`` and one fixed sentence, on every task (an infeasible
  task's refusal counts only when its reason names the missing item).
- ``spoof_window``: for each window the verifier wants, opens an ``xterm`` dressed as it
  (``-class Mousepad -T 'plan.txt - Mousepad'``), also started as ``exec -a mousepad`` and as a
  renamed copy ``~/.local/bin/mousepad``, and the real program on no file, retitled from code
  (``xprop -set _NET_WM_NAME``).
- ``spoof_process``: for each process the verifier wants, runs ``sleep`` under its name
  (``exec -a 'bash ./my_process.sh'``, a renamed copy) and a shell that names the script
  without running it (``bash -c 'sleep 600' ./my_process.sh``).
- ``code_only``: a task that claims the GUI (``metadata.claims_gui``) done through code: the
  oracle's code actions, and the text its GUI steps type run as shell commands. A task that
  does not claim the GUI may be done any way, so there it only ends.
- ``hollow``: the task's input files emptied first, then the oracle's steps: outputs that
  have every name and none of the content (issue 27's empty file moved, archive of empty
  files, skeleton workbook), inputs destroyed where the task only relabels them.
- ``repeat_last``: the oracle's last substantive action alone, three times, then ``done()`` (a
  policy that learned the final step, ``ctrl+s`` or the last command, without the work). A
  pause, a bare click or pointer move (focusing what the desktop already focuses) is not
  substantive; when the oracle has one substantive action, that action is the solution and
  there is nothing to prove.
"""

from __future__ import annotations

import re
import shlex
import string
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from palaestra.envs.computer.actions import COMPUTER_ACTIONS, translate
from palaestra.envs.computer.office import strategies as office_strategies
from palaestra.errors import ActionError
from palaestra.policies import Policy, PolicyFactory, ReplayPolicy, ScriptPolicy
from palaestra.tasks import Task

#: keys a random user presses: harmless on any app (no logout, no window-manager chords)
KEYS = ("Return", "Tab", "Escape", "BackSpace", "Up", "Down", "Left", "Right", "ctrl+a", "ctrl+s")


class RandomPolicy:
    """Seeded random GUI input, the desktop's random agent: clicks, double and right clicks,
    pointer moves, scrolls, typed words and key presses, at points inside the screenshot of the
    observation (so every one is valid for the action set and on this session's screen). It
    never runs code: random shell text has no place on a desktop baseline."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        screen = observation.get("screenshot")
        height, width = np.shape(screen)[:2] if screen is not None else (768, 1024)

        def point() -> dict[str, int]:
            return {"x": int(rng.integers(0, width)), "y": int(rng.integers(0, height))}

        name = str(
            rng.choice(
                ["click", "double_click", "right_click", "move", "scroll", "type_text", "key"],
                p=[0.3, 0.1, 0.05, 0.1, 0.1, 0.2, 0.15],
            )
        )
        args: dict[str, Any]
        if name in ("click", "double_click", "right_click", "move"):
            args = point()
        elif name == "scroll":
            args = {**point(), "dy": int(rng.integers(-5, 6))}
        elif name == "type_text":
            letters = rng.choice(list(string.ascii_lowercase), size=int(rng.integers(1, 9)))
            args = {"text": "".join(letters)}
        else:
            args = {"combo": str(rng.choice(KEYS))}
        action = {"name": name, "args": args}
        COMPUTER_ACTIONS.parse(action)  # a policy bug, never an agent mistake, if this raises
        return action


def noop(**_: Any) -> Policy:
    """No action at all: the episode is scored as the task set it up."""
    return ReplayPolicy([])


def code_oracle(**_: Any) -> Policy:
    """A task's code solution (an office task's, in its private metadata): validation plays it
    beside the GUI oracle, and it must pass too."""
    return ScriptPolicy(lambda task: list((task.metadata.get("code_oracle") or []) if task else []))


POLICIES: dict[str, PolicyFactory] = {
    "replay": ReplayPolicy,
    "noop": noop,
    "random": RandomPolicy,
    "code_oracle": code_oracle,
}


# ----- adversaries ------------------------------------------------------------------------------
CODE_ACTIONS = ("run_shell", "run_python", "write_file")
#: an oracle step that does no work alone: a pause, the end, a pointer focusing a window
_IDLE = ("wait", "done", "fail", "click", "move")
_DETACH = ">/dev/null 2>&1 </dev/null &"


def checks(spec: Any, kind: str) -> Iterator[dict[str, Any]]:
    """Every check of ``kind`` in a verifier spec, however deep in ``all``/``any`` groups."""
    if isinstance(spec, dict):
        if spec.get("kind") == kind:
            yield spec
        for child in spec.get("checks", []):
            yield from checks(child, kind)


def literal(pattern: str) -> str:
    """A text a regex (a title, an argument pattern) matches, for the simple ones tasks use:
    anchors and quantifiers dropped, escapes undone."""
    text = re.sub(r"\\([\\.\-+*?()\[\]{}|^$/])", r"\1", pattern)
    return re.sub(r"(?<!\\)[\^$]|\.\*|\\[sbdw][+*]?", "", text).strip()


def _shell(cmd: str) -> str:
    return f"run_shell({cmd!r}, timeout=20)"


def _spoofs(
    kind: str, attempts: Callable[[dict[str, Any]], list[Any]], settle: str
) -> Callable[[Task | None], list[Any]]:
    """A script that fakes every ``kind`` check the task wants present with ``attempts(spec)``,
    then waits ``settle`` for the fakes to show and ends (``done()`` alone if there is none)."""

    def script(task: Task | None) -> list[Any]:
        out = []
        for spec in checks(task.verifier if task else {}, kind):
            if spec.get("present", True) is not False:
                out += attempts(spec)
        return [*out, settle, "done()"] if out else ["done()"]

    return script


def _window_spoofs(spec: dict[str, Any]) -> list[Any]:
    """A window of the wanted class and title: xterm dressed as it (under the name, and as a
    copy named like the program), then the real program on no file, retitled from code."""
    exe = str(spec.get("exe") or str(spec.get("class", "app")).lower())
    cls = str(spec.get("class") or exe.capitalize())
    title = shlex.quote(f"{literal(str(spec.get('title', '')))} - {cls}".strip(" -"))
    dressed = f"-class {shlex.quote(cls)} -name {shlex.quote(exe)} -T {title}"
    copy = f"$HOME/.local/bin/{exe}"
    return [
        _shell(f"setsid xterm {dressed} {_DETACH}"),
        _shell(f"setsid bash -c 'exec -a {exe} xterm {dressed}' {_DETACH}"),
        _shell(f"mkdir -p ~/.local/bin && cp /usr/bin/xterm {copy}"),
        _shell(f"setsid {copy} {dressed} {_DETACH}"),
        # the real program, on no file, retitled from code (any X client may set a title)
        _shell(f"setsid {exe} {_DETACH}"),
        "wait(1.5)",
        _shell(
            f"for w in $(xdotool search --class {shlex.quote(exe)}); do "
            f"xprop -id $w -f _NET_WM_NAME 8u -set _NET_WM_NAME {title}; done"
        ),
    ]


def _process_spoofs(spec: dict[str, Any]) -> list[Any]:
    """A process named like the wanted one: sleep renamed (``exec -a``), a copy of sleep named
    like the program, and the program itself told to sleep."""
    exe = str(spec["exe"])
    args = " ".join(x for x in (literal(str(spec.get("args", ""))), spec.get("opens")) if x)
    named = shlex.quote(f"{exe} {args}".strip())
    copy = f"/tmp/{exe}"
    return [
        _shell(f"setsid bash -c {shlex.quote(f'exec -a {named} sleep 600')} {_DETACH}"),
        _shell(f"cp /bin/sleep {copy}"),
        _shell(f"setsid bash -c {shlex.quote(f'exec -a {named} {copy} 600')} {_DETACH}"),
        _shell(f"cd ~ && setsid {exe} -c 'sleep 600' {args} {_DETACH}"),
    ]


def _parsed(action: Any) -> Any:
    try:
        return COMPUTER_ACTIONS.parse(translate(action))
    except (ActionError, TypeError, ValueError):
        return None


def _name(action: Any) -> str:
    found = _parsed(action)
    return str(found.name) if found is not None else ""


def _typed(action: Any) -> str:
    """The text a GUI step types (``type_text``, a pyautogui ``write``), or ''."""
    found = _parsed(action)
    if found is None:
        return ""
    if found.name == "type_text":
        return str(found.args["text"])
    if found.name == "pyautogui":
        return " ".join(re.findall(r"write\(['\"](.*?)['\"]", found.args["code"]))
    return ""


def _code_only(task: Task | None) -> list[Any]:
    if task is None or task.oracle is None or not task.metadata.get("claims_gui"):
        return ["done()"]
    out = []
    for action in task.oracle.data or []:
        if _name(action) in CODE_ACTIONS:
            out.append(action)
        elif _typed(action).strip():
            out.append(_shell(_typed(action)))
    return [*out, "done()"]


def _repeat_last(task: Task | None) -> list[Any]:
    plan = [a for a in (task.oracle.data or [] if task and task.oracle else [])]
    work = [a for a in plan if _name(a) not in _IDLE]
    if len(work) < 2:
        return ["done()"]
    return [work[-1]] * 3 + ["wait(0.5)", "done()"]


def _hollow(task: Task | None) -> list[Any]:
    """Every input file the task set up emptied (names kept), then the oracle's steps: the
    output has every name the task asks for and none of the content (a moved empty file, an
    archive of empty files, a workbook of an empty sheet, a compressed empty log), and a task
    that reads or relabels files (a mode, a link, a count) is done on destroyed inputs. Only
    where the inputs are the setup's own files (no app holds one open, no setup command
    derives others from them) and the oracle does the task (not a refusal)."""
    setup = (task.setup or {}) if task else {}
    plan = list(task.oracle.data or []) if task and task.oracle else []
    files = list(setup.get("files", {}))
    if not files or not plan or setup.get("apps") or setup.get("commands"):
        return ["done()"]
    if any(_name(a) == "fail" for a in plan):
        return ["done()"]
    paths = " ".join(shlex.quote(f"/home/user/{f}") for f in files)
    return [_shell(f"truncate -c -s 0 {paths}"), *plan, "done()"]


def _script(build: Any) -> PolicyFactory:
    return lambda **_: ScriptPolicy(build)


#: what a policy that refuses everything says, the same on every task
REFUSAL = "fail('Sorry, I cannot do that on this computer.')"

ADVERSARIES: dict[str, PolicyFactory] = {
    "claim_done": _script(lambda task: ["done()"]),
    "refuse": _script(lambda task: [REFUSAL]),
    "spoof_window": _script(_spoofs("window", _window_spoofs, "wait(1.5)")),
    "spoof_process": _script(_spoofs("process", _process_spoofs, "wait(0.5)")),
    "code_only": _script(_code_only),
    "repeat_last": _script(_repeat_last),
    "hollow": _script(_hollow),
    # a document saved unchanged, hollow, with wrong content, in another format (each plays as
    # doing nothing on a task with no office document)
    **office_strategies.ADVERSARIES,
}
