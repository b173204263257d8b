"""The task's own steps between the agent's last step and the verifier's read
(``setup.before_scoring``).

Why: a benchmark may score what an app *would* write rather than what the agent left on disk:
OSWorld's office evaluators focus the document's window and press Ctrl+S before reading the
file, so an agent that edits and never saves still passes there. A task that says so carries
those steps; the env plays them, the verifier then reads the end state as usual.

Decisions:

- They are task data (trusted), not the agent's: not a step, not in the trajectory, outside the
  agent's step budget (their own budget is one step's time, ``limits.step_s``). They are played
  once per end state, right before the verifier reads it: when the episode ends (``done``,
  ``fail``, the step budget) or on an explicit ``verify()``; a dense reward's verification in
  the middle of an episode reads the state as it is (playing them then would change the
  agent's world mid-episode).
- An entry is one of the env's own actions, limited to GUI actions and ``wait``, or
  ``{"activate_window": {"title"|"class": str, "strict": bool, "optional": bool, "timeout": s}}``:
  the window manager focuses that window, waiting up to ``timeout`` seconds for it to appear
  (``wmctrl``, EWMH, as OSWorld's ``activate_window``: a title is a case-insensitive
  substring, or the exact title with ``strict``; a class is the WM_CLASS).
  The actions after an activation are meant for that window: when it is not there they are
  skipped, up to the next activation, so keys never land in whatever else has the focus.
  ``optional`` marks a window that may rightly be absent (a format question that only some
  saves raise): its absence is no failure.
- Entries are checked at reset (a malformed one is the task's error, naming the field); a step
  that fails while played is recorded (:attr:`BeforeScoring.errors`, and a ``before_scoring``
  leaf in the verifier's private report that does not count in the score), never raised out of
  the verifier.
- Reward hacking: the agent cannot change what these steps do, but it can leave a modal dialog
  open, close the document's window, or kill the app. Then the activation or the keys miss and
  the file is scored as the agent left it: the steps only ever help an agent that left the
  document open and ready to save.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

from palaestra.actions import Action, ActionSet
from palaestra.envs.computer.actions import GUI_ACTIONS, parse_pyautogui, translate
from palaestra.envs.computer.display import Display
from palaestra.errors import ActionError, EnvCrashed, InvalidRequest
from palaestra.verifiers import VerifierResult
from palaestra.verifiers.base import CheckResult

FIELD = "task.setup.before_scoring"
#: the env's actions a task may play before scoring: input to the screen and waiting, no code
ALLOWED = GUI_ACTIONS | {"wait"}
_WINDOW_KEYS = {"title", "class", "strict", "optional", "timeout"}
#: the longest an activation waits for its window to appear
MAX_TIMEOUT_S = 5.0


class BeforeScoring:
    """One episode's steps, checked at reset, and what playing them went through."""

    def __init__(self, steps: Any = (), action_set: ActionSet | None = None) -> None:
        self.steps = [_parse(i, s, action_set) for i, s in enumerate(_as_list(steps))]
        #: the env's step count when they were last played (once per end state)
        self.played_at: int | None = None
        self.errors: list[str] = []

    def due(self, steps: int, at_end: bool) -> bool:
        """Whether to play them now: there are some, the state is an end state, and this end
        state has not had them yet."""
        return bool(self.steps) and at_end and self.played_at != steps

    def play(self, apply: Callable[[Action], Any], display: Display, steps: int) -> None:
        """Play every step (``apply``: the env's own action runner); record, never raise."""
        self.played_at, self.errors = steps, []
        skipping = False
        for i, step in enumerate(self.steps):
            if isinstance(step, dict):
                window = step["activate_window"]
                skipping = not activate(display, window)
                if skipping and not window.get("optional"):
                    self.errors.append(
                        f"[{i}] activate_window {_describe(window)}: no such window; the "
                        "actions meant for it were skipped"
                    )
                continue
            if skipping:
                continue
            try:
                apply(step)
            except ActionError as exc:
                self.errors.append(f"[{i}] {step.name}: {exc.detail}")
            except EnvCrashed as exc:  # the session is gone: nothing further can play
                self.errors.append(f"[{i}] {step.name}: {exc}; the rest was not played")
                return

    def report(self, result: VerifierResult) -> VerifierResult:
        """The verifier's result with the steps that failed as one leaf of its private report
        (informative: the score was computed without it)."""
        if self.errors:
            detail = "before scoring (not scored): " + "; ".join(self.errors)
            result.checks.append(CheckResult("before_scoring", False, 0.0, detail[:2000]))
        return result


def activate(display: Display, window: dict[str, Any]) -> bool:
    """Focus a window by the window manager (``wmctrl -a``; ``-F`` exact, ``-x`` by class),
    waiting up to its ``timeout`` for it to appear (a dialog an app is still opening)."""
    by_class = "class" in window
    flags = "-" + ("x" if by_class else "") + ("F" if window.get("strict") else "") + "a"
    name = str(window["class"] if by_class else window["title"])
    deadline = time.monotonic() + float(window.get("timeout", 0))
    while True:
        try:
            done = subprocess.run(
                ["wmctrl", flags, name], env=display.env(), capture_output=True, timeout=5
            )
        except subprocess.TimeoutExpired:
            return False
        if done.returncode == 0 or time.monotonic() >= deadline:
            return done.returncode == 0
        time.sleep(0.1)


def _as_list(steps: Any) -> list[Any]:
    if not isinstance(steps, list | tuple):
        raise InvalidRequest("setup.before_scoring must be a list of actions", field=FIELD)
    return list(steps)


def _parse(i: int, step: Any, action_set: ActionSet | None) -> Action | dict[str, Any]:
    if isinstance(step, dict) and "activate_window" in step:
        window = step["activate_window"]
        ok = (
            isinstance(window, dict)
            and len(step) == 1
            and set(window) <= _WINDOW_KEYS
            and ("title" in window) != ("class" in window)
            and isinstance(window.get("title", window.get("class")), str)
            and isinstance(window.get("timeout", 0), int | float)
            and 0 <= window.get("timeout", 0) <= MAX_TIMEOUT_S
        )
        if not ok:
            raise InvalidRequest(
                f"setup.before_scoring[{i}]: activate_window takes one of 'title' or 'class' "
                f"(text), and optionally 'strict', 'optional' and 'timeout' (0..{MAX_TIMEOUT_S:g} "
                f"s to wait for the window), got {window!r}",
                field=FIELD,
            )
        return {"activate_window": dict(window)}
    if action_set is None:
        raise InvalidRequest(f"setup.before_scoring[{i}]: no action set to read it", field=FIELD)
    try:
        action = action_set.parse(translate(step))
    except ActionError as exc:
        raise InvalidRequest(f"setup.before_scoring[{i}]: {exc.detail}", field=FIELD) from None
    names = [action.name]
    if action.name == "pyautogui":  # what a script does counts, not that it is one
        try:
            names = [a["name"] for a in parse_pyautogui(action.args["code"])]
        except ActionError as exc:
            raise InvalidRequest(f"setup.before_scoring[{i}]: {exc.detail}", field=FIELD) from None
    for name in names:
        if name not in ALLOWED:
            raise InvalidRequest(
                f"setup.before_scoring[{i}]: {name!r} is not played before scoring "
                f"(only {', '.join(sorted(ALLOWED))} and activate_window)",
                field=FIELD,
            )
    return action


def _describe(window: dict[str, Any]) -> str:
    key = "class" if "class" in window else "title"
    return f"{key} {window[key]!r}" + (" (strict)" if window.get("strict") else "")
