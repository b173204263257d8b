"""Execution validation of computer tasks with the generic ``verifiers.validation.validate``.

Runs are real episodes of :class:`ComputerEnv`, one env reused across runs (each run is a
reset, as for an agent), each played by a policy of :mod:`palaestra.envs.computer.policies`:
the task's oracle (``replay`` of its action list) twice (must pass and agree check for check)
and ``noop`` (no action at all, then the verifier) must fail. End states are files on a live
desktop, so there are no snapshot mutants; the do-nothing run plays that part. The suite
records the last full run (:func:`write_validation`) in ``validation.json``.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.policies import POLICIES
from palaestra.envs.computer.suites import RECORD, all_tasks
from palaestra.tasks import Task
from palaestra.verifiers.validation import Run, ValidationReport, play, validate


def validate_task(env: Any, task: Task, repeats: int = 2) -> ValidationReport:
    def run(name: str) -> Run:
        if name == "oracle":  # the policy the task's oracle names, fed its data
            name = task.oracle.policy if task.oracle is not None else "replay"
        return play(env, task, POLICIES[name]())

    return validate(task.verifier, run, [], lambda s, m: nullcontext(s), repeats=repeats)


def validate_suite(tasks: list[Task] | None = None, repeats: int = 2) -> dict[str, Any]:
    env = ComputerEnv()
    try:
        chosen = tasks if tasks is not None else all_tasks()
        return RECORD.run(chosen, lambda task: validate_task(env, task, repeats))
    finally:
        env.close()


def write_validation() -> dict[str, Any]:
    """Validate every built-in task and record it beside the suite (``validation.json``)."""
    return RECORD.write(validate_suite())
