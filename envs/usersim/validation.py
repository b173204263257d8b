"""How usersim tasks are validated (``Family.validation``): a plan the validation service plays.

Episodes run in one :class:`UserSimEnv` a thread, as every dialogue family's
(:class:`~palaestra.envs.runtimes.dialogue.validation.DialoguePlan`). A task is kept only if its
oracle (the competent assistant playing the reference plan) passes three times under three
personas, ending at once scores zero, the verifier rejects three mutated end states (a rule
broken, nothing said, a database off by one row; for a refusal, the same words with no lookup
logged), every adversary of the family fails it (``policies.ADVERSARIES``), and so does the best
strategy the dialogue runtime's adversary search finds within its budget. ``palaestra validate
usersim --record`` records the run beside the suites (``validation.json``), which a suite load
reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from palaestra.envs.runtimes.dialogue import search as strategies
from palaestra.envs.runtimes.dialogue.validation import DialoguePlan
from palaestra.envs.usersim import suites
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.policies import Policy
from palaestra.tasks import Task
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import Run, ValidationRecord

MUTATIONS = [{"name": "rule_broken"}, {"name": "said_nothing"}, {"name": "extra_row"}]
#: a refusal's mutant: the same words, with no lookup in the tool-call log
LOOKED_NOWHERE = {"name": "looked_nowhere"}


class UserSimPlan(DialoguePlan):
    budget = strategies.BUDGET

    def candidates(self) -> list[Task]:
        return suites.all_tasks()

    def record(self, tasks: list[Task]) -> ValidationRecord:
        return suites.RECORD

    def open(self) -> UserSimEnv:
        return UserSimEnv()

    def mutations(self, task: Task) -> Sequence[Mapping[str, Any]]:
        refusal = not task.metadata.get("grantable", True)
        return [*MUTATIONS, LOOKED_NOWHERE] if refusal else MUTATIONS

    def mutant(self, state: dict[str, Any], name: str) -> dict[str, Any]:
        if name == "rule_broken":
            state["violations"] = [*state["violations"], "a write without the user's confirmation"]
        elif name == "said_nothing":
            state["said"] = []
        elif name == "looked_nowhere":
            state["calls"] = []
        else:  # a database off by one row
            db = {t: list(rows) for t, rows in state["db"].items()}
            table = sorted(db)[0]
            db[table] = [*db[table], ("mutant",)]
            state["db"] = db
        return state

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search:
        return strategies.search_for(task, play, budget)


PLAN = UserSimPlan()
