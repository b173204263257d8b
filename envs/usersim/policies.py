"""The usersim family's scripted policies: the competent assistant (the oracle), three bad ones
for the fidelity test, ``random`` and ``noop``, all behind the one Policy protocol.

The competent assistant follows a task's reference plan but learns every value it needs from the
user, as a real agent must: it asks for a slot, reads the value out of the user's reply with the
domain's slot reader, and uses that value in its tool calls and confirmations. So when the
simulated user fails to give a fact (or gives a wrong one), the competent assistant fails too:
that is what makes "the competent assistant solves >= 95%" a measurement of the user.

The bad assistants stress the user the ways tau-bench saw users break:

- ``irrelevant`` asks about things the goal does not contain (a good user says it does not
  know, and never invents one), and never asks what it needs;
- ``early`` says goodbye after the first reply and ends (a good user protests, never closes);
- ``wrong`` offers a wrong option (a decoy value) and acts on it (a good user says no).

A usersim task's oracle is ``{"policy": "competent", "data": <the reference plan>}``; every
scripted assistant reads the plan from ``task.oracle.data``. ``random`` draws valid actions from
the action set (seeded); ``noop`` ends the conversation at once, as execution validation's
do-nothing run does.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any

from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.usersim.domain import Domain
from palaestra.envs.usersim.env import ACTIONS
from palaestra.envs.usersim.world import bind, domain
from palaestra.policies import ConstantPolicy, Policy, PolicyFactory, SpacePolicy, scripted
from palaestra.tasks import Task

KINDS = ("competent", "irrelevant", "early", "wrong")
CLOSING = "Is there anything else I can help you with today?"


class ScriptedAssistant:
    """One of the scripted assistants (``kind``); :meth:`reset` sets it up for a task."""

    def __init__(self, kind: str = "competent", seed: int = 0) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown assistant {kind!r}; kinds: {list(KINDS)}")
        self.kind = kind
        self.seed = seed
        self._steps: Iterator[dict[str, Any]] | None = None

    def reset(self, task: Task | None) -> None:
        if task is None or "domain" not in task.setup:
            raise ValueError("a scripted assistant plays a usersim task (setup['domain'])")
        self.setup = task.setup
        self.dom: Domain = domain(task.setup["domain"])
        self.plan: list[dict[str, Any]] = scripted(task)
        self.decoys: dict[str, str] = dict(task.setup.get("decoys", {}))
        self.heard: dict[str, str] = {}
        self.rng = random.Random(self.seed)
        self._steps = self._script()
        self._pending: str | None = None  # the slot the last question asked for
        self._disagreed = False  # the user's last reply said no

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        assert self._steps is not None, "reset(task) first"
        reply = observation.get("user_message", "")
        if self._pending:
            found = self.dom.slots[self._pending].find(reply)
            if found:
                self.heard[self._pending] = found[0]
            self._pending = None
        self._disagreed = A.user_agrees(reply) is False
        if self._disagreed:  # corrected: learn the values the user insists on
            for slot, found in self.dom.slot_values(reply).items():
                self.heard[slot] = found[0]
        try:
            return next(self._steps)
        except StopIteration:
            return _end()

    # ----- the scripts --------------------------------------------------------------------
    def _script(self) -> Iterator[dict[str, Any]]:
        if self.kind == "early":
            yield _say("I think that's sorted now. Have a nice day, goodbye!")
            yield _end()
            return
        if self.kind == "irrelevant":
            yield from self._irrelevant()
            return
        for step in self.plan:
            if "ask" in step:
                self._pending = step["ask"]
                label = self.dom.slots[step["ask"]].label
                yield _say(f"Could you please tell me the {label}?")
            elif "call" in step:
                yield {
                    "name": "call_tool",
                    "args": {"name": step["call"], "arguments": bind(step["args"], self._value)},
                }
            elif "confirm" in step or "offer" in step:
                text = self._fill(step.get("confirm") or step["offer"])
                yield _say(text)
                if self.kind == "competent" and self._disagreed:
                    # the correction was learned in act(): ask once more with it
                    yield _say(self._fill(step.get("confirm") or step["offer"]))
            elif "tell" in step:
                yield _say(self._tell(step))
        yield _say(CLOSING)

    def _irrelevant(self) -> Iterator[dict[str, Any]]:
        goal_slots = set(self.setup["goal"].get("facts", {}))
        others = [s for s in self.dom.slots.values() if s.name not in goal_slots]
        for slot in self.rng.sample(others, min(3, len(others))):
            yield _say(f"Before we start, could you tell me your {slot.label}?")
        yield _say("Thanks. Is there anything else you need?")
        for step in self.plan:
            if "call" in step:
                yield {"name": "call_tool", "args": {"name": step["call"], "arguments": {}}}
        yield _end()

    def _tell(self, step: dict[str, Any]) -> str:
        """The wrong assistant misreports: other figures, and success instead of a refusal."""
        text = self._fill(step["tell"])
        if self.kind != "wrong":
            return text
        if not self.setup["goal"].get("grantable", True):
            return "Done: your request has been processed."
        for fact in step.get("facts", []):
            text = text.replace(fact, _wrong(fact))
        return text

    def _value(self, slot: str) -> str:
        if self.kind == "wrong" and slot in self.decoys:
            return self.decoys[slot]
        return self.heard.get(slot, "")

    def _fill(self, text: str) -> str:
        slots = {name: self._value(name) for name in self.dom.slots}
        return text.format(**slots)


def _wrong(fact: str) -> str:
    """A plausible wrong version of a fact: another amount, time or code."""
    try:
        return f"{float(fact) + 7:.2f}"
    except ValueError:
        pass
    if len(fact) == 5 and fact[2] == ":":
        return f"{(int(fact[:2]) + 1) % 24:02d}{fact[2:]}"
    return fact[:-1] + ("0" if fact[-1] != "0" else "1")


def _say(text: str) -> dict[str, Any]:
    return {"name": "send_message", "args": {"text": text}}


def _end() -> dict[str, Any]:
    return {"name": "end_conversation", "args": {}}


def _random(seed: int = 0) -> Policy:
    return SpacePolicy(ACTIONS.space(), seed)


def _noop(seed: int = 0) -> Policy:
    return ConstantPolicy(_end())


POLICIES: dict[str, PolicyFactory] = {
    **{kind: functools.partial(ScriptedAssistant, kind) for kind in KINDS},
    "random": _random,
    "noop": _noop,
}
