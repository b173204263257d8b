"""Execution validation of CAD tasks with the generic ``verifiers.validation.validate``.

Runs are real episodes of :class:`CadEnv` (the same code an agent drives), each played by a
policy of :mod:`palaestra.envs.cad.policies`: the task's oracle (``replay`` of its action list)
must succeed (twice, agreeing check for check), ``noop`` (submitting at once) must fail, the
mutant, the oracle's actions for the part with one key dimension wrong, must be rejected by the
verifier, and every adversary of :data:`~palaestra.envs.cad.policies.ADVERSARIES` (the target's
bounding box, outlines, visual hull, turned profile, a right-volume box, a bare submit, reward
farming) must fail with its rewards summed at most 0.1; the farming ones play with the dense
reward on, since that is what they farm. Then the adversary search of
:mod:`palaestra.envs.cad.strategies` (those envelopes combined) within its small budget. The
suite records the last full run (:func:`write_validation`) in ``validation.json``, every
adversary's result included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from palaestra.envs.cad import strategies
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.policies import ADVERSARIES, DENSE_ADVERSARIES, POLICIES
from palaestra.envs.cad.suites import RECORD, all_tasks
from palaestra.policies import Policy, PolicyFactory, ReplayPolicy
from palaestra.tasks import Task
from palaestra.verifiers.validation import Run, ValidationReport, play, validate


def run_policy(task: Task, policy: Policy, strict: bool = True, dense: bool = False) -> Run:
    """Play ``policy`` in a fresh env; the episode with its end state (shapes)."""
    env = CadEnv(task, observe=("properties",), dense_reward=dense)
    try:
        played = play(env, task, policy, strict=strict)
        played.state = dict(env.state_probe().read())
        return played
    finally:
        env.close()


def mutant_actions(task: Task) -> list[str]:
    fam = FAMILIES[task.setup["part_family"]]
    return [*fam.oracle(fam.wrong(task.setup["params"])), "submit()"]


def validate_task(
    task: Task,
    repeats: int = 2,
    adversaries: bool = True,
    table: Mapping[str, PolicyFactory] = ADVERSARIES,
    search: int = strategies.BUDGET,
) -> ValidationReport:
    """One task's report; ``table`` is which adversaries to play (all of the family's), then
    (with them) ``search`` episodes of adversary search over
    :mod:`palaestra.envs.cad.strategies` (0: none)."""

    def run(name: str) -> Run:
        if name in table:  # an adversary: its mistakes are scored, never raised
            return run_policy(task, table[name](), strict=False, dense=name in DENSE_ADVERSARIES)
        if name == "oracle":  # the policy the task's oracle names, fed its data
            name = task.oracle.policy if task.oracle is not None else "replay"
        return run_policy(task, POLICIES[name]())

    mutations: list[Mapping[str, Any]] = []
    if "part_family" in task.setup:
        mutations.append({"name": "wrong-dimension", "actions": mutant_actions(task)})

    @contextmanager
    def mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
        end = run_policy(task, ReplayPolicy(mutation["actions"])).state
        yield {"part": end["part"], "target": state["target"]}

    names = list(table) if adversaries else []
    searched = None
    if adversaries and search:
        searched = strategies.search_for(task, lambda p: run_policy(task, p, strict=False), search)
    return validate(
        task.verifier,
        run,
        mutations,
        mutate,
        repeats=repeats,
        adversaries=names,
        search=searched,
    )


def validate_suite(
    tasks: list[Task] | None = None, *, adversaries: bool = True, repeats: int = 2
) -> dict[str, Any]:
    """Execution-validate tasks (all of the suite by default), with the adversaries unless
    ``adversaries=False``; the report ``ValidationRecord.run`` builds (``palaestra validate``)."""
    chosen = all_tasks() if tasks is None else tasks
    return RECORD.run(chosen, lambda t: validate_task(t, repeats, adversaries))


def write_validation() -> dict[str, Any]:
    """Validate every generated task and record it beside the suite (``validation.json``)."""
    return RECORD.write(validate_suite())
