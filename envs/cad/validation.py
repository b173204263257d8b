"""How CAD tasks are validated (``Family.validation``): a plan the validation service plays.

Every episode runs in a fresh :class:`CadEnv` (the same code an agent drives), observing the
part's properties: the task's oracle (``replay`` of its action list) twice, agreeing check for
check; ``noop`` (submitting at once) must fail; the mutant, the oracle's actions for the part
with one key dimension wrong, must be rejected by the verifier; every adversary of
:data:`~palaestra.envs.cad.policies.ADVERSARIES` (the target's bounding box, outlines, visual
hull, turned profile, a right-volume box, a bare submit, reward farming) must fail with its
rewards summed at most 0.1, the farming ones playing with the dense reward on, since that is
what they farm. Then the adversary search of :mod:`palaestra.envs.cad.strategies` (those
envelopes combined) within its small budget. ``palaestra validate cad-parts --record`` records
the last full run in ``validation.json``, every adversary's result included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from palaestra.envs.cad import strategies
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.policies import DENSE_ADVERSARIES
from palaestra.envs.cad.suites import RECORD, all_tasks
from palaestra.policies import Policy, ReplayPolicy
from palaestra.tasks import Task
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import Mutator, Run, ValidationPlan, ValidationRecord, play


def run_policy(task: Task, policy: Policy, strict: bool = True, dense: bool = False) -> Run:
    """Play ``policy`` in a fresh env; the episode with its end state (shapes)."""
    with fresh_env(task, dense) as env:
        played = play(env, task, policy, strict=strict)
        played.state = dict(env.state_probe().read())
        return played


@contextmanager
def fresh_env(task: Task, dense: bool = False) -> Iterator[CadEnv]:
    env = CadEnv(task, observe=("properties",), dense_reward=dense)
    try:
        yield env
    finally:
        env.close()


def mutant_actions(task: Task) -> list[str]:
    fam = FAMILIES[task.setup["part_family"]]
    return [*fam.oracle(fam.wrong(task.setup["params"])), "submit()"]


class CadPlan(ValidationPlan):
    repeats = 2
    budget = strategies.BUDGET

    def candidates(self) -> list[Task]:
        return all_tasks()

    def record(self, tasks: list[Task]) -> ValidationRecord:
        return RECORD

    def env(self, shared: Any, task: Task, name: str) -> AbstractContextManager[Any]:
        return fresh_env(task, dense=name in DENSE_ADVERSARIES)

    def end_state(self, env: Any, task: Task, role: str, scratch: Path) -> Mapping[str, Any]:
        return dict(env.state_probe().read())

    def mutations(self, task: Task) -> Sequence[Mapping[str, Any]]:
        if "part_family" not in task.setup:
            return []
        return [{"name": "wrong-dimension", "actions": mutant_actions(task)}]

    def mutate(self, task: Task) -> Mutator:
        @contextmanager
        def mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
            end = run_policy(task, ReplayPolicy(mutation["actions"])).state
            yield {"part": end["part"], "target": state["target"]}

        return mutate

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search | None:
        return strategies.search_for(task, play, budget)


PLAN = CadPlan()
