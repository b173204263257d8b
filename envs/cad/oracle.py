"""Execution validation of CAD tasks with the generic ``verifiers.validation.validate``.

Runs are real episodes of :class:`CadEnv` (the same code an agent drives): the oracle must
succeed (twice, agreeing check for check), doing nothing (submitting at once) must fail, and
the mutant, the oracle run with one key dimension wrong, must be rejected by the verifier.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from palaestra.tasks import Task
from palaestra.verifiers.base import VerifierResult
from palaestra.verifiers.validation import ValidationReport, play, validate


def run_actions(task: Task, actions: list[str]) -> tuple[VerifierResult, dict[str, Any]]:
    """Play ``actions`` in a fresh env; the verifier's result and the end state (shapes)."""
    from palaestra.envs.cad.env import CadEnv

    env = CadEnv(task, observe=("properties",))
    try:
        return play(env, task, actions), dict(env.state_probe().read())
    finally:
        env.close()


def mutant_actions(task: Task) -> list[str]:
    from palaestra.envs.cad.families import FAMILIES

    fam = FAMILIES[task.setup["part_family"]]
    return [*fam.oracle(fam.wrong(task.setup["params"])), "submit()"]


def validate_cad_task(task: Task, repeats: int = 2) -> ValidationReport:
    def run(policy: str) -> tuple[VerifierResult, Mapping[str, Any]]:
        return run_actions(task, list(task.oracle or []) if policy == "oracle" else ["submit()"])

    mutations: list[Mapping[str, Any]] = []
    if "part_family" in task.setup:
        mutations.append({"name": "wrong-dimension", "actions": mutant_actions(task)})

    @contextmanager
    def mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
        _, end = run_actions(task, list(mutation["actions"]))
        yield {"part": end["part"], "target": state["target"]}

    return validate(task.verifier, run, mutations, mutate, repeats=repeats)
