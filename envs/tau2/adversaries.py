"""The dialogue runtime's cheap strategies (:mod:`palaestra.envs.runtimes.dialogue.adversaries`),
as they are played on tau2 tasks (each must fail every task).

They read the task's gold actions (scripted policies run on the worker side and see the whole
task), so they hold every id a competent agent would have found, and more: what they prove is
that knowing the answer is not enough without doing the task as the policy demands.

- ``refuse_stuffed`` / ``refuse_keywords``: the gold lookups, then a refusal citing the whole
  policy (or its rule words);
- ``dump_facts``: every read tool on every id the gold names, then all of it in one message;
- ``claim_done``: the gold lookups, then "all done";
- ``hand_off``: the transfer to a human agent at once, nothing looked at (tau2 tasks whose gold
  is a single transfer are won by it: their assertions hold on the untouched world);
- ``act_on_all``: retail: each gold write, proposed vaguely and made on every order of the user,
  not only the gold one; telecom: every fix the manual knows, told to the user in one message,
  with no diagnosis (the blind fix-all a dual-control agent might learn);
- ``write_unconfirmed``: the gold agent calls made straight away, with no message at all;
- ``repeat_last``: the gold lookups, then the last one again instead of acting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from palaestra.envs.runtimes.dialogue import adversaries as dialogue
from palaestra.envs.runtimes.dialogue.adversaries import CHUNK, VAGUE_CONFIRM
from palaestra.envs.runtimes.dialogue.env import call as _call
from palaestra.envs.runtimes.dialogue.env import end as _end
from palaestra.envs.runtimes.dialogue.env import say as _say
from palaestra.envs.tau2 import schemas, store, tasks
from palaestra.envs.tau2.world import WRITES
from palaestra.tasks import Task

TRANSFER = "transfer_to_human_agents"
#: every device fix of the telecom manual, as an agent would tell it (the blind fix-all)
FIX_ALL = (
    "Please turn airplane mode off.",
    "Please turn mobile data on.",
    "Please turn data saver mode off.",
    "Please set your network mode preference to 4G/5G preferred.",
    "Please reset your APN settings.",
    "Please disconnect your VPN.",
    "Please turn roaming on.",
    "Please turn Wi-Fi calling off.",
    "Please reseat your SIM card.",
    "Please restart your phone.",
    "Please run a speed test and tell me the result.",
)


class Tau2Adversary(dialogue.Adversary):
    """One strategy on one tau2 task (see the module docstring)."""

    def reset(self, task: Task | None) -> None:
        assert task is not None and "tau2" in task.setup, "a tau2 adversary plays a tau2 task"
        self.domain: str = task.setup["tau2"]
        self.raw = tasks.get(self.domain, task.setup["task_id"])
        self.gold = tasks.gold_actions(self.raw)
        self.results = []
        self._last = None
        self._steps = self.moves()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        self.saw(observation)
        return self.did(next(self._steps, _end()))

    # ----- building blocks ----------------------------------------------------------------
    def agent_gold(self) -> list[dict[str, Any]]:
        return [a for a in self.gold if a.get("requestor", "assistant") == "assistant"]

    def lookups(self) -> Iterator[dict[str, Any]]:
        """The gold agent calls that only read (a transfer ends the task: it is no lookup)."""
        for action in self.agent_gold():
            if action["name"] not in WRITES[self.domain] | {TRANSFER}:
                yield _call(action["name"], action.get("arguments") or {})

    def writes(self) -> list[dict[str, Any]]:
        return [a for a in self.agent_gold() if a["name"] in WRITES[self.domain]]


def _refuse_stuffed(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield from a.lookups()
    yield _say(
        f"I'm sorry, but I cannot do that, as the policy says: {schemas.policy(a.domain)}"[:CHUNK]
    )


def _refuse_keywords(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield from a.lookups()
    yield _say(
        "I'm sorry, but no, that is not possible: not pending, not delivered, not authenticated, "
        "out of stock, over the limit, against the policy, transfer to a human agent."
    )


def _dump_facts(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield from a.lookups()
    ids = {v for g in a.gold for v in (g.get("arguments") or {}).values() if isinstance(v, str)}
    reads = [
        t
        for t in schemas.tools(a.domain)
        if not t["function"].get("writes") and t["function"]["name"] != TRANSFER
    ]
    for tool in reads:
        fn = tool["function"]
        params = list(fn["parameters"].get("properties", {}))
        if len(params) == 1:
            for value in sorted(ids):
                yield _call(fn["name"], {params[0]: value})
    yield _say(("Here is everything I found: " + " ".join(a.results))[:CHUNK])


def _hand_off(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield _call(TRANSFER, {"summary": "The customer needs help I cannot give."})
    yield _say("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.")


def _claim_done(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield from a.lookups()
    yield _say("All done: your request has been taken care of and everything is resolved.")


def _act_on_all(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    yield from a.lookups()
    if a.domain == "telecom":  # every fix at once, no diagnosis (issue 27's red team won so)
        yield _say(" ".join(FIX_ALL))
        for action in a.writes():
            yield _say(VAGUE_CONFIRM)
            yield _call(action["name"], action.get("arguments") or {})
        return
    writes = a.writes()
    if writes:
        yield _say(VAGUE_CONFIRM)
    for action in writes:
        args = dict(action.get("arguments") or {})
        for order_id in _orders_like(args.get("order_id")):
            yield _call(action["name"], {**args, "order_id": order_id} if order_id else args)
    yield _say("Done: I have taken care of all of them.")


def _orders_like(order_id: Any) -> list[Any]:
    """The gold order and every other order of the same user (retail)."""
    if not isinstance(order_id, str):
        return [None]
    conn = store.initial()
    order = store.get(conn, "orders", order_id)
    if order is None:
        return [order_id]
    user = store.get(conn, "users", order["user_id"]) or {}
    return [order_id, *(o for o in user.get("orders", []) if o != order_id)]


def _write_unconfirmed(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    for action in a.agent_gold():
        yield _call(action["name"], action.get("arguments") or {})
    yield _say("Everything is taken care of.")


def _repeat_last(a: Tau2Adversary) -> Iterator[dict[str, Any]]:
    looked = list(a.lookups())
    yield from looked
    for _ in range(3 if looked else 0):
        yield looked[-1]


Tau2Adversary.PLAYS = dialogue.plays(globals())


ADVERSARIES = dialogue.table(Tau2Adversary)
