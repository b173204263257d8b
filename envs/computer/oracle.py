"""Execution validation of computer tasks with the generic ``verifiers.validation.validate``.

Runs are real episodes of :class:`ComputerEnv`, one env reused across runs (each run is a
reset, as for an agent): the oracle twice (must pass and agree check for check) and doing
nothing (no action at all, then the verifier) must fail. End states are files on a live
desktop, so there are no snapshot mutants; the do-nothing run plays that part.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

from palaestra.tasks import Task
from palaestra.verifiers.base import VerifierResult
from palaestra.verifiers.validation import ValidationReport, play, validate


def validate_task(env: Any, task: Task, repeats: int = 2) -> ValidationReport:
    def run(policy: str) -> tuple[VerifierResult, Mapping[str, Any]]:
        return play(env, task, list(task.oracle or []) if policy == "oracle" else []), {}

    return validate(task.verifier, run, [], lambda s, m: nullcontext(s), repeats=repeats)


def validate_suite(tasks: list[Task] | None = None, repeats: int = 2) -> dict[str, Any]:
    from palaestra.envs.computer.env import ComputerEnv
    from palaestra.envs.computer.tasks import RECORD, all_tasks

    env = ComputerEnv()
    try:
        chosen = tasks if tasks is not None else all_tasks()
        return RECORD.run(chosen, lambda task: validate_task(env, task, repeats))
    finally:
        env.close()


def write_validation() -> dict[str, Any]:
    """Validate every built-in task and record it beside the suite (``validation.json``)."""
    from palaestra.envs.computer.tasks import RECORD

    return RECORD.write(validate_suite())
