"""The one set of cheap strategies execution validation plays on every dialogue task.

Each must fail every task it is played on; what each check kind proves against them is in
``docs/verifiers.md``. The strategies are the same for every dialogue family; how one is played
depends on what the family's scripted side may read (usersim's reference plan and seeded
world, tau2's gold actions), so a family writes each as a function of its
:class:`Adversary` subclass and this module checks it wrote all of them:

- ``refuse_fixed``: one fixed refusal, nothing asked or looked up (the same for every family);
- ``refuse_stuffed`` / ``refuse_keywords``: the request looked up, then a refusal citing the
  whole policy (or every rule's words);
- ``dump_facts``: everything looked up and told in one message;
- ``claim_done``: the request looked up, then "all done";
- ``hand_off``: the user handed to a human;
- ``act_on_all``: a vague proposal, then the writes made on every row like the user's;
- ``write_unconfirmed``: the writes made without asking;
- ``repeat_last``: the lookups, then the last one again instead of acting.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from palaestra.envs.runtimes.dialogue.env import end, say
from palaestra.policies import Policy, PolicyFactory, ScriptPolicy
from palaestra.tasks import Task

#: the strategies every dialogue family plays (besides ``refuse_fixed``), in declared order
STRATEGIES = (
    "refuse_stuffed",
    "refuse_keywords",
    "dump_facts",
    "claim_done",
    "hand_off",
    "act_on_all",
    "write_unconfirmed",
    "repeat_last",
)
#: the one sentence the fixed-refusal adversary answers every conversation with
FIXED_REFUSAL = "I'm sorry, but I cannot help with that request."
#: a proposal that names nothing, for strategies that want a yes without stating the facts
VAGUE_CONFIRM = "Shall I go ahead and take care of that for you now?"
#: what one message of a dump holds (the env takes 10,000 characters)
CHUNK = 9000

Moves = Iterator[dict[str, Any]]


class Adversary:
    """One strategy of :data:`STRATEGIES`, played by a family's subclass, which maps every
    strategy to its play in ``PLAYS`` (:func:`plays`; checked by :func:`table`). It keeps every tool
    answer the agent saw in ``results`` (what a dump tells)."""

    PLAYS: ClassVar[Mapping[str, Callable[[Any], Moves]]] = {}

    def __init__(self, strategy: str, seed: int = 0) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown adversary {strategy!r}; adversaries: {list(STRATEGIES)}")
        self.strategy = strategy
        self.seed = seed
        self.results: list[str] = []
        self._last: dict[str, Any] | None = None

    def reset(self, task: Task | None) -> None:
        """Start the strategy on ``task`` (the family's subclass)."""
        raise NotImplementedError

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        """The next move (the family's subclass)."""
        raise NotImplementedError

    def moves(self) -> Moves:
        """This strategy's moves, as the family plays it."""
        return self.PLAYS[self.strategy](self)

    def saw(self, observation: dict[str, Any]) -> None:
        """Keep the answer to the last move when it was a tool call."""
        if self._last is not None and self._last["name"] == "call_tool":
            self.results.append(observation.get("last_tool_result", ""))

    def did(self, move: dict[str, Any]) -> dict[str, Any]:
        self._last = move
        return move


def plays(namespace: Mapping[str, Any]) -> dict[str, Callable[[Any], Moves]]:
    """A family's ``PLAYS``: for each strategy, the function ``_<strategy>`` of ``namespace``
    (the family's module: ``plays(globals())``), which takes the adversary and yields moves."""
    missing = [name for name in STRATEGIES if f"_{name}" not in namespace]
    if missing:
        raise TypeError(f"no play of {missing} (a function _<strategy> for each)")
    return {name: namespace[f"_{name}"] for name in STRATEGIES}


def refuse_fixed(seed: int = 0) -> Policy:
    """One fixed refusal, nothing asked or looked up."""
    return ScriptPolicy(lambda task: [say(FIXED_REFUSAL), end()])


def table(kind: type[Adversary]) -> dict[str, PolicyFactory]:
    """A family's ``ADVERSARIES``: the fixed refusal and every strategy played by ``kind``."""
    if set(kind.PLAYS) != set(STRATEGIES):
        raise TypeError(f"{kind.__name__}.PLAYS must play exactly {list(STRATEGIES)}")
    return {
        "refuse_fixed": refuse_fixed,
        **{name: functools.partial(kind, name) for name in STRATEGIES},
    }
