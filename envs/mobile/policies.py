"""The mobile family's scripted policies, behind the one ``Policy`` protocol (see ``POLICIES``).

``plan`` plays a synthesized task's planned oracle on a phone: the plan is the one the web
family plays (``palaestra.synth_apps.generate``); here each step is found in the observation's
element list, as a phone agent must: off-screen targets are brought into view by scrolling, a
choice list opens its picker sheet and then taps the option, answers go through ``answer`` and
the episode ends with ``status``. A row operation the app reaches by a gesture is played as one:
``hold`` long-presses the row (its context menu opens), ``swipe`` swipes the row to the left
(its action shows); ``ask`` asks the user, ``open_app`` switches apps mid-plan (a task spanning
two apps). It reads only the observation (and the app's title, to open it from the launcher).
``random`` taps, types and scrolls on elements of the screen, ``noop`` does nothing.
"""

from __future__ import annotations

import json
import random
from typing import Any

from palaestra.chat import ANSWER
from palaestra.envs.runtimes.axtree import OracleError, norm
from palaestra.policies import ConstantPolicy, scripted
from palaestra.synth_apps import adversaries
from palaestra.synth_apps.driver import spec_for
from palaestra.tasks import Task

MAX_SCROLLS = 12


class MobilePlanPolicy:
    """Stateful over one episode. The plan is ``task.oracle.data``, first opening the task's app
    (``task.setup["app"]``) from the launcher; or ``plan=`` (and ``app=``, its title)."""

    def __init__(self, plan: list[dict[str, Any]] | None = None, app: str | None = None) -> None:
        self.fixed = None if plan is None else (list(plan), app)
        self.plan: list[dict[str, Any]] = []
        self.index = 0
        self.scrolls = 0
        self.last_scroll_view: str | None = None

    def reset(self, task: Task | None) -> None:
        if self.fixed is not None:
            plan, app = self.fixed
        else:
            plan = scripted(task)
            ref = task.setup.get("app") if task is not None else None
            app = spec_for(ref).title if ref else None
        self.plan = ([{"op": "open_app", "name": app}] if app else []) + plan
        self.index = 0
        self.scrolls = 0
        self.last_scroll_view = None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        if self.index >= len(self.plan):
            return {"action_type": "status", "goal_status": "complete"}
        step = self.plan[self.index]
        elements = json.loads(obs["ui_elements"])
        op = step["op"]
        if op == "open_app":
            return self._next({"action_type": "open_app", "app_name": step["name"]})
        if op == "ask":
            return self._next({"action_type": "ask_user", "question": step["question"]})
        if op == "say":
            return self._next({"action_type": "answer", "text": step["text"]})
        if op == "infeasible":
            if not any(c == f"{ANSWER}{step['reason']}" for c in obs["chat"].splitlines()):
                return {"action_type": "answer", "text": step["reason"]}
            return self._next({"action_type": "status", "goal_status": "infeasible"})
        if op == "done":
            return self._next({"action_type": "status", "goal_status": "complete"})
        if op == "set":
            return self._set(step, elements)
        if op in ("click", "open", "hold", "swipe"):
            target = _find(elements, step["name"])
            if target is not None:
                return self._next(_gesture(op, target, elements))
            if op != "click" and "next" in step:  # the pager comes after the rows
                more = _find(elements, step["next"])
                if more is not None:
                    self.scrolls, self.last_scroll_view = 0, None
                    return {"action_type": "click", "index": more["index"]}
            return self._scroll(elements, step["name"])
        raise OracleError(f"unknown plan step {op!r}")

    def _next(self, action: dict[str, Any]) -> dict[str, Any]:
        self.index += 1
        self.scrolls = 0
        self.last_scroll_view = None
        return action

    def _set(self, step: dict[str, Any], elements: list[dict]) -> dict[str, Any]:
        label, value = step["label"], str(step["value"])
        sheet = [e for e in elements if e["class_name"] == "android.widget.CheckedTextView"]
        if sheet:  # the picker of a choice list is open: tap the option
            option = next((e for e in sheet if norm(e["text"]) == norm(value)), None)
            if option is None:
                raise OracleError(f"{label!r} offers no option {value!r}")
            return self._next({"action_type": "click", "index": option["index"]})
        for e in elements:
            if norm(e["content_description"]) != norm(label):
                continue
            if e["class_name"] == "android.widget.EditText":
                return self._next({"action_type": "input_text", "text": value, "index": e["index"]})
            if e["class_name"] == "android.widget.CheckBox":
                wanted = value in ("yes", "True", "true", "1", "on")
                if e["is_checked"] == wanted:
                    return self._next({"action_type": "wait", "seconds": 0})
                return self._next({"action_type": "click", "index": e["index"]})
            if e["class_name"] == "android.widget.Spinner":
                if norm(e["text"]) == norm(value):  # already chosen
                    return self._next({"action_type": "wait", "seconds": 0})
                return {"action_type": "click", "index": e["index"]}  # opens the picker
        legend = next((e for e in elements if norm(e["text"]) == norm(label)), None)
        if legend is not None:  # a radio group: its options follow the legend
            for e in elements[legend["index"] + 1 :]:
                if e["class_name"] == "android.widget.RadioButton" and norm(
                    e["content_description"]
                ) == norm(value):
                    return self._next({"action_type": "click", "index": e["index"]})
        return self._scroll(elements, label)

    def _scroll(self, elements: list[dict], what: str) -> dict[str, Any]:
        view = json.dumps([(e["text"], e["bbox_pixels"]) for e in elements])
        if self.scrolls >= MAX_SCROLLS or (view == self.last_scroll_view and self.scrolls):
            raise OracleError(f"{what!r} is not on the screen, even after scrolling")
        self.scrolls += 1
        self.last_scroll_view = view
        return {"action_type": "scroll", "direction": "down"}


def _gesture(op: str, target: dict, elements: list[dict]) -> dict[str, Any]:
    """The action a row step takes on its element: a tap; a long press (``hold``); or a swipe
    (``swipe``) from the right of the screen to its left along the row's line, far enough to
    reveal the row's action whatever the width of its text."""
    if op == "hold":
        return {"action_type": "long_press", "index": target["index"]}
    if op != "swipe":
        return {"action_type": "click", "index": target["index"]}
    width = max(e["bbox_pixels"]["x_max"] for e in elements)
    box = target["bbox_pixels"]
    y = (box["y_min"] + box["y_max"]) / 2
    return {"action_type": "swipe", "x1": 0.9 * width, "y1": y, "x2": 0.1 * width, "y2": y}


def _find(elements: list[dict], name: str) -> dict | None:
    """The first clickable element (not a text field) showing or described by ``name``."""
    for e in elements:
        if not e["is_clickable"] or e["is_editable"]:
            continue
        if norm(e["text"]) == norm(name) or norm(e["content_description"]) == norm(name):
            return e
    return None


WORDS = ("yes", "hello", "42", "submit")


class RandomPolicy:
    """Valid actions drawn from the observation, seeded: a tap on a random clickable element
    (sometimes a random word typed into a text field), now and then a scroll."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = random.Random(self.seed)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        elements = json.loads(obs.get("ui_elements") or "[]")
        targets = [e for e in elements if e["is_clickable"] or e["is_editable"]]
        roll = self.rng.random()
        if not targets or roll < 0.15:
            return {"action_type": "scroll", "direction": self.rng.choice(("down", "up"))}
        target = self.rng.choice(targets)
        if target["is_editable"] and roll < 0.6:
            text = self.rng.choice(WORDS)
            return {"action_type": "input_text", "text": text, "index": target["index"]}
        return {"action_type": "click", "index": target["index"]}


#: the do-nothing policy: it says at once that the task is complete
NOOP = {"action_type": "status", "goal_status": "complete"}
#: how an adversary that cannot play its strategy ends (never as the plain oracle would)
GAVE_UP = {"action_type": "status", "goal_status": "infeasible"}


class AdversaryPlan(MobilePlanPolicy):
    """A synthesized phone task's adversary: the plan ``build(task)`` makes (a strategy from
    :mod:`palaestra.synth_apps.adversaries`, shared with the web family), played on the phone
    after opening the task's app, like the oracle's plan."""

    def __init__(self, build: adversaries.Build) -> None:
        super().__init__()
        self.build = build

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        opening = [s for s in self.plan[:1] if s["op"] == "open_app"]
        self.plan = [*opening, *self.build(task)]


#: cheap strategies a reward hacker tries on synthesized phone tasks: execution validation
#: plays each, and a task ships only if every one fails it
ADVERSARIES = adversaries.policies(AdversaryPlan, GAVE_UP)

#: the mobile family's scripted policies (``oracle`` is generic: it plays what ``task.oracle``
#: names, ``plan`` for synthesized tasks)
POLICIES = {
    "plan": MobilePlanPolicy,
    "random": RandomPolicy,
    "noop": lambda: ConstantPolicy(NOOP),
}
