"""``palaestra/usersim-v0``: the policy is the assistant, between a simulated user and tools.

The moves, the OpenAI/tau2 message forms and the observation are every dialogue env's
(the dialogue runtime's, :mod:`palaestra.envs.runtimes.dialogue.env`); this env brings the
family's own seeded worlds (one SQLite copy per episode) and the agenda-driven simulated user.
A call the domain's rules forbid returns the domain's error and is recorded as a violation, as
is any write without the user's explicit yes to the assistant's previous message, or whose
text arguments that message did not name (a yes to "shall I go ahead?" consents to nothing in
particular); the gold world to compare with is rebuilt from the task's reference calls.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from palaestra.envs.runtimes.dialogue.env import (
    ACTIONS,
    DEFAULT_PARTS,
    MAX_CONVERSATION,
    MAX_MESSAGE,
    PARTS,
    Dialogue,
    DialogueEnv,
    DialogueProbe,
)
from palaestra.envs.runtimes.simuser.user import Goal, SimulatedUser
from palaestra.envs.runtimes.simuser.wording import PERSONAS
from palaestra.envs.usersim import world
from palaestra.envs.usersim.domain import dump
from palaestra.envs.usersim.tools import DomainError, RuleBroken
from palaestra.errors import ActionError
from palaestra.synth_apps.llm import LLMAuthor
from palaestra.tasks import Task

__all__ = ["ACTIONS", "DEFAULT_PARTS", "MAX_CONVERSATION", "MAX_MESSAGE", "PARTS", "UserSimEnv"]

DEFAULT_DOMAIN = "airline"


@dataclass(kw_only=True)
class Episode(Dialogue):
    domain: str
    seed: int
    conn: sqlite3.Connection
    user: SimulatedUser


class UserSimEnv(DialogueEnv[Episode]):
    family = "usersim"
    llm_client = LLMAuthor

    # ----- lifecycle hooks ----------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        setup = task.setup if task else {}
        name = setup.get("domain", DEFAULT_DOMAIN)
        dom = world.domain(name)
        seed = int(setup.get("seed", 0))
        goal = Goal.from_json(setup["goal"]) if "goal" in setup else _default_goal()
        rng = self.np_random
        persona = self.persona or setup.get("persona") or PERSONAS[int(rng.integers(4))]
        user = SimulatedUser(
            dom, goal, persona, int(rng.integers(2**31)), self._llm, self.llm_fallback
        )
        self.episode = Episode(domain=name, seed=seed, conn=world.fresh(name, seed), user=user)
        self._say("user", user.opening())

    def _tool_names(self) -> Collection[str]:
        return world.domain(self._episode().domain).tools

    def _tools_json(self) -> str:
        return world.domain(self._episode().domain).tools_json

    def _policy(self) -> str:
        return world.domain(self._episode().domain).policy

    def _user_reply(self, text: str) -> tuple[str, bool, bool]:
        turn = self._episode().user.reply(text)
        agreed = any(kind in ("affirm", "choose") for kind, _ in turn.acts)
        return turn.text, agreed, turn.closed

    def _call(self, name: str, arguments: Any, call_id: str | None = None) -> None:
        ep = self._episode()
        dom = world.domain(ep.domain)
        tool = dom.tools.get(name)
        if tool is None:
            raise ActionError(
                f"call_tool(): unknown tool {name!r}; tools: {', '.join(dom.tools)}",
                action="call_tool",
            )
        try:
            args = tool.check(arguments)
        except DomainError as exc:
            raise ActionError(f"call_tool(): {exc}", action="call_tool") from None
        if tool.writes and not ep.consent:
            ep.violations.append(f"{name} called without the user's explicit confirmation")
        elif tool.writes and not _stated(ep.messages, args):
            # a yes to "shall I go ahead?" is no consent to a write it never named
            ep.violations.append(f"{name} called after a confirmation that did not state it")
        try:
            result: Any = dom.call(ep.conn, name, args)
        except RuleBroken as exc:
            ep.violations.append(f"{name}: {exc}")
            result = {"error": str(exc)}
        except DomainError as exc:
            result = {"error": str(exc)}
        ok = not (isinstance(result, dict) and "error" in result)
        self._record(name, args, json.dumps(result, default=str), ok, call_id)

    def state_probe(self) -> UserSimProbe:
        return UserSimProbe(self._episode())

    def close(self) -> None:
        if self.episode is not None:
            self.episode.conn.close()
        super().close()


class UserSimProbe(DialogueProbe[Episode]):
    """The verifier's view: the live database (one copy per moment of the episode, shared by
    the checks of one verification), the gold replay, what each side said, and the tool-call
    log. No reader of the user's: the checks judge messages on their own, so an agent's score
    never depends on how the simulated user understood it."""

    def _state(self) -> dict[str, Any]:
        ep = self.ep
        return {
            "db": dump(ep.conn),
            # a partial, not a lambda: an end-state snapshot records it (module, function,
            # arguments) so a re-grade rebuilds the same gold (palaestra.workers.snapshot)
            "gold": functools.partial(world.gold, ep.domain, ep.seed),
            "said": [m["content"] for m in ep.messages if m["role"] == "assistant"],
            "heard": [m["content"] for m in ep.messages if m["role"] == "user"],
            # what the world's tools answered: a count the world stated is a true count
            "told": [m["content"] for m in ep.messages if m["role"] == "tool"],
            "calls": [dict(c) for c in ep.calls],
            "violations": list(ep.violations),
            "user_outcome": ep.user.state.outcome,
        }


def _default_goal() -> Goal:
    """With no task, a user who only wants to know the rules: an env to explore the tools."""
    return Goal("explore", "ask a few questions about my options", {}, (), True)


def _stated(messages: list[dict[str, Any]], args: dict[str, Any]) -> bool:
    """The assistant's last message (the one the user said yes to) names a text argument of
    the write (the reservation, the train), if it has any: the policy's "state what you will
    do". (Not every one: a booking's confirmation names the train, not the user's id.)"""
    said = next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), "")
    said = said.casefold()
    texts = [v.casefold() for v in args.values() if isinstance(v, str) and v]
    return not texts or any(v in said for v in texts)
