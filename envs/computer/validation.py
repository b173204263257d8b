"""How computer tasks are validated (``Family.validation``): a plan the validation service plays.

Episodes are real ones of :class:`ComputerEnv`, one env reused across a thread's tasks (each
episode is a reset, as for an agent): the task's oracle (``replay`` of its action list) twice
(must pass and agree check for check), ``noop`` (no action at all, then the verifier) must
fail, and so must every adversary of ``ADVERSARIES`` (spoofed windows and processes, code for
a GUI claim, a claimed success, the last step repeated), played leniently (an action the env
refuses is the adversary's loss), then the adversary search of
:mod:`palaestra.envs.computer.strategies` (hollow outputs, refusals in the instruction's words)
within its budget; a strategy that ends where the oracle ends (the paths the instruction names
hold the same) did the task, and abstains. End states are files on a live desktop, so there are
no snapshot mutants; the do-nothing run plays that part. ``palaestra validate computer-basic
--record`` records the last full run in ``validation.json``; ``osworld-os`` (the OSWorld
tasks with a reference solution of ours) records its own (``osworld_validation.json``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from palaestra.envs.computer import osworld, strategies
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.suites import RECORD, all_tasks
from palaestra.policies import Policy
from palaestra.tasks import Task
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import Run, ValidationPlan, ValidationRecord


class ComputerPlan(ValidationPlan):
    repeats = 2
    budget = strategies.BUDGET
    abstains = ("search",)

    def candidates(self) -> list[Task]:
        return all_tasks()

    def record(self, tasks: list[Task]) -> ValidationRecord:
        """OSWorld's tasks report under their own suite."""
        osw = bool(tasks) and all("osworld" in t.metadata.get("tags", []) for t in tasks)
        return osworld.RECORD if osw else RECORD

    def open(self) -> ComputerEnv:
        return ComputerEnv()

    def end_digest(self, env: Any, task: Task, state: Mapping[str, Any]) -> str:
        """The kind and content of every path the instruction names."""
        return strategies.named_state(env.state_probe(), task)

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search:
        return strategies.search_for(task, play, budget)


PLAN = ComputerPlan()
