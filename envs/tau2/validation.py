"""How tau2 tasks are validated (``Family.validation``): a plan the validation service plays.

Episodes run in one :class:`Tau2Env` a thread, as every dialogue family's
(:class:`~palaestra.envs.runtimes.dialogue.validation.DialoguePlan`). The gold assistant (the
oracle) must score 1.0 three times with the same verdict, ending at once must score 0, three
mutants of the oracle's end state must fail (a field of the world changed, a write without the
user's yes, nothing said), and so must every adversary of the family and the best strategy the
dialogue runtime's adversary search finds in :data:`SEARCH_BUDGET` episodes (in telecom, with
the device fixes the user can be asked for). ``palaestra validate tau2-retail --record`` (and
``tau2-telecom``) records the run beside the suites (``validation-<domain>.json``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.dialogue.search import search_for
from palaestra.envs.runtimes.dialogue.validation import DialoguePlan
from palaestra.envs.tau2 import suites
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.adversaries import FIX_ALL
from palaestra.envs.tau2.env import Tau2Env
from palaestra.policies import Policy
from palaestra.tasks import Task
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import (
    Run,
    ValidationRecord,
    task_key,
)

MUTATIONS = [{"name": "world_changed"}, {"name": "unconfirmed_write"}, {"name": "said_nothing"}]
#: episodes of the adversary search per task (a tau2 episode of the search is longer than a
#: named adversary's: the budget keeps validation's growth near 50%, docs/verifiers.md)
SEARCH_BUDGET = 6


class Tau2Plan(DialoguePlan):
    budget = SEARCH_BUDGET

    def candidates(self) -> list[Task]:
        return [t for domain in tau2_tasks.DOMAINS for t in suites.tasks(domain)]

    def record(self, tasks: list[Task]) -> ValidationRecord:
        """A domain's record; tasks of both domains report under ``tau2``."""
        domains = sorted({t.setup["tau2"] for t in tasks})
        if len(domains) == 1:
            return suites.record(domains[0])
        return ValidationRecord(Path("tau2.validation.json"), "tau2", task_key)

    def open(self) -> Tau2Env:
        return Tau2Env()

    def mutations(self, task: Task) -> Sequence[Mapping[str, Any]]:
        return MUTATIONS

    def mutant(self, state: dict[str, Any], name: str) -> dict[str, Any]:
        if name == "unconfirmed_write":
            state["violations"] = [*state["violations"], "a write without the user's confirmation"]
        elif name == "said_nothing":
            state["said"] = []
            state["calls"] = [c for c in state["calls"] if c.get("by") != "assistant"]
            state["ended_by"] = None
        else:  # one field of the final world off: the first leaf, changed
            state["world"] = copy.deepcopy(state["world"])
            _nudge(state["world"])
            state["assertions"] = [{**a, "ok": False} for a in state["assertions"]]
        return state

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search:
        fixes = FIX_ALL if task.setup.get("tau2") == "telecom" else ()
        return search_for(task, play, budget, fixes)


def _nudge(node: Any) -> bool:
    """Change the first scalar found in ``node`` (in place); False when there is none."""
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    for key, value in items:
        if isinstance(value, dict | list):
            if _nudge(value):
                return True
        else:
            node[key] = f"{value}-mutant"
            return True
    return False


PLAN = Tau2Plan()
