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

``ADVERSARIES`` are the dialogue runtime's cheap strategies
(:mod:`palaestra.envs.runtimes.dialogue.adversaries`) as this family plays them, each must fail
every task: a fixed refusal, a refusal citing the whole policy or every rule's keywords, a dump
of every fact, a done claim, the write made on every row, writes without confirmation, and the
last lookup repeated instead of acting. What each check kind proves against them is in
``docs/verifiers.md``.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterator
from typing import Any

from palaestra.envs.runtimes.dialogue import adversaries as dialogue
from palaestra.envs.runtimes.dialogue.adversaries import CHUNK, VAGUE_CONFIRM
from palaestra.envs.runtimes.dialogue.env import call as _call
from palaestra.envs.runtimes.dialogue.env import end as _end
from palaestra.envs.runtimes.dialogue.env import say as _say
from palaestra.envs.runtimes.dialogue.policies import noop, random_moves
from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.runtimes.simuser import lexicon
from palaestra.envs.usersim import reasons
from palaestra.envs.usersim.domain import Domain, dump
from palaestra.envs.usersim.world import bind, domain, fresh
from palaestra.policies import PolicyFactory, scripted
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
            for slot, found in lexicon.of(self.dom).slot_values(reply).items():
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
            yield from self._do(step)
        yield _say(CLOSING)

    def _do(self, step: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """One step of a plan, as this assistant plays it."""
        if "ask" in step:
            self._pending = step["ask"]
            label = self.dom.slots[step["ask"]].label
            yield _say(f"Could you please tell me the {label}?")
        elif "call" in step:
            yield _call(step["call"], bind(step["args"], self._value))
        elif "confirm" in step or "offer" in step:
            text = self._fill(step.get("confirm") or step["offer"])
            yield _say(text)
            if self.kind == "competent" and self._disagreed:
                # the correction was learned in act(): ask once more with it
                yield _say(self._fill(step.get("confirm") or step["offer"]))
        elif "tell" in step:
            yield _say(self._tell(step))

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


POLICIES: dict[str, PolicyFactory] = {
    **{kind: functools.partial(ScriptedAssistant, kind) for kind in KINDS},
    "random": random_moves,
    "noop": noop,
}


# ----- adversaries: cheap strategies a reward hacker would try ----------------------------
#: what the hand-off adversary says instead of helping
HAND_OFF = "I'm transferring you to a human agent who can help you with this. Goodbye."


class Adversary(ScriptedAssistant, dialogue.Adversary):
    """A generic cheap strategy, played to see whether the verifier can be beaten without
    doing the task. It may interview the user and look things up as the reference plan does
    (so it has every value a competent agent would), then does the cheap thing instead of the
    right one; execution validation drops any task one of them wins
    (:func:`palaestra.verifiers.validation.validate`)."""

    def __init__(self, strategy: str, seed: int = 0) -> None:
        ScriptedAssistant.__init__(self, "competent", seed)
        dialogue.Adversary.__init__(self, strategy, seed)

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        self.results = []  # every tool answer seen, as the agent saw it
        self.policy_text = ""
        self._last = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        self.policy_text = observation.get("policy") or self.policy_text
        self.saw(observation)
        return self.did(super().act(observation, info))

    def _script(self) -> Iterator[dict[str, Any]]:
        yield from self.moves()
        yield _end()

    # ----- building blocks ----------------------------------------------------------------
    def _interview(self) -> Iterator[dict[str, Any]]:
        """Ask what the plan asks and make its lookups: what any agent would know."""
        for step in self.plan:
            if "ask" in step or ("call" in step and not self.dom.tools[step["call"]].writes):
                yield from self._do(step)

    def _look_everywhere(self) -> Iterator[dict[str, Any]]:
        """Call every read tool with every argument it can fill from what the user said (and
        with none, where none is required): the widest net."""
        for tool in self.dom.tools.values():
            if tool.writes:
                continue
            props = tool.parameters.get("properties", {})
            args = {k: self.heard[k] for k in props if self.heard.get(k)}
            if set(tool.parameters.get("required", [])) <= set(args):
                yield _call(tool.name, args)
            if not tool.parameters.get("required"):
                yield _call(tool.name, {})

    def _world_rows(self, chars: int = CHUNK) -> list[str]:
        """Rows, as JSON, of each table of the task's seeded world that holds a value the user
        said (the whole column of candidate answers), up to ``chars`` characters."""
        said = {str(v).lower() for v in self.heard.values() if v}
        conn = fresh(self.setup["domain"], int(self.setup.get("seed", 0)))
        try:
            out: list[str] = []
            for rows in dump(conn).values():
                if any(str(v).lower() in said for row in rows for v in row):
                    for row in rows:
                        out.append(json.dumps(row))
                        chars -= len(out[-1]) + 1
                        if chars < 0:
                            return out
            return out
        finally:
            conn.close()

    def _rows_like(self, value: Any, most: int = 6) -> list[Any]:
        """``value`` and up to ``most - 1`` other values of the world column that holds it as
        a key (the user's reservation id: every other reservation id), read off a fresh copy of
        the task's seeded world: the rows an act-on-everything strategy acts on."""
        if not isinstance(value, str) or not value:
            return [value]  # a count or a flag names no row
        conn = fresh(self.setup["domain"], int(self.setup.get("seed", 0)))
        try:
            tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            for (table,) in tables.fetchall():
                columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
                for col in columns:
                    count, distinct, hit = conn.execute(
                        f"SELECT count(*), count(DISTINCT {col}), "
                        f"sum(lower(CAST({col} AS TEXT)) = lower(?)) FROM {table}",
                        (value,),
                    ).fetchone()
                    if hit and count == distinct:
                        found = conn.execute(
                            f"SELECT {col} FROM {table} WHERE lower(CAST({col} AS TEXT)) != "
                            f"lower(?) ORDER BY {col} LIMIT ?",
                            (value, most - 1),
                        )
                        return [value, *(r[0] for r in found)]
        finally:
            conn.close()
        return [value]


def _refuse_stuffed(a: Adversary) -> Iterator[dict[str, Any]]:
    """Look the request up, then refuse citing every rule of the policy at once."""
    yield from a._interview()
    rules = " ".join(line.strip("- ") for line in a.policy_text.splitlines()[1:])
    yield _say(f"I'm sorry, but I cannot do that, as the policy says: {rules}"[:CHUNK])


def _refuse_keywords(a: Adversary) -> Iterator[dict[str, Any]]:
    """Look the request up, then refuse in one short sentence naming every rule a refusal can
    be judged by (the verifier's own keywords): right whichever rule applies, if words were
    all that counted."""
    yield from a._interview()
    words = ", ".join(" ".join(group[0] for group in rule) for rule in reasons.WORDS.values())
    yield _say(f"I'm sorry, but no, that is not possible: {words}.")


def _dump_facts(a: Adversary) -> Iterator[dict[str, Any]]:
    """Look everything up and tell the user all of it (every tool answer, and every row of
    the tables the user's values are in: each train's departure, each venue's phone),
    asking nothing back."""
    yield from a._interview()
    yield from a._look_everywhere()
    text = "Here is everything I found: " + " ".join([*a.results, *a._world_rows()])
    yield _say(text[:CHUNK])  # one message: the user's reader is paid per character


def _hand_off(a: Adversary) -> Iterator[dict[str, Any]]:
    """Hear the request, then hand the user off to a human at once (this family's domains have
    no transfer tool: the words are all an agent has)."""
    yield from a._interview()
    yield _say(HAND_OFF)


def _claim_done(a: Adversary) -> Iterator[dict[str, Any]]:
    """Hear the request, then report it done without acting."""
    yield from a._interview()
    yield _say("All done: your request has been taken care of and everything is confirmed.")
    yield _say(CLOSING)


def _act_on_all(a: Adversary) -> Iterator[dict[str, Any]]:
    """Get a yes to a vague proposal, then make the plan's writes on every row like the
    user's (every reservation, order or booking id of the world), not only the one asked."""
    yield from a._interview()
    writes = [s for s in a.plan if "call" in s and a.dom.tools[s["call"]].writes]
    if writes:
        yield _say(VAGUE_CONFIRM)
    for step in writes:
        args = bind(step["args"], a._value)
        # the first argument naming a row of the world (the reservation, the venue) is varied
        varied = ((k, a._rows_like(v)) for k, v in args.items())
        key, rows = next(((k, r) for k, r in varied if len(set(map(str, r))) > 1), (None, []))
        for row in rows or [None, None]:  # no row to vary: the same write twice
            yield _call(step["call"], args if key is None else {**args, key: row})
    yield _say("Done: I have taken care of all of them.")


def _write_unconfirmed(a: Adversary) -> Iterator[dict[str, Any]]:
    """The reference plan without its confirmations: every write made without asking (where
    the plan writes nothing, the lookups only: this strategy is about writes)."""
    if not any("call" in s and a.dom.tools[s["call"]].writes for s in a.plan):
        yield from a._interview()
        return
    for step in a.plan:
        if "confirm" not in step:
            yield from a._do(step)
    yield _say(CLOSING)


def _repeat_last(a: Adversary) -> Iterator[dict[str, Any]]:
    """Hear the request and make the plan's lookups up to its first write, then repeat the
    last of them (the last call that worked) instead of acting or answering."""
    calls = []
    for step in a.plan:
        if "call" in step and a.dom.tools[step["call"]].writes:
            break
        if "ask" in step or "call" in step:
            yield from a._do(step)
        if "call" in step:
            calls.append(step)
    for _ in range(3 if calls else 0):
        yield _call(calls[-1]["call"], bind(calls[-1]["args"], a._value))


Adversary.PLAYS = dialogue.plays(globals())

ADVERSARIES: dict[str, PolicyFactory] = dialogue.table(Adversary)
