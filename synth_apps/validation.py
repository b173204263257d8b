"""How synthesized app tasks are validated: the plan the web and mobile families declare
(``Family.validation``), which the validation service plays.

Each thread owns an env of the family on this process's Chromium, made through the registry
(no screenshots: the policies read the tree or the element list). A task's oracle (the
family's ``oracle`` policy, which must never make an action fail) runs three times, ``noop``
does nothing and says it is finished at once, the mutants (kept in the task's validation
report, or passed by the pipeline that makes it) are SQL, chat or visit-log changes of the
oracle's end database, every adversary of the family plays leniently (an action the env
refuses is its loss), then the adversary search over :mod:`palaestra.synth_apps.strategies`
as plans the family's ``plan`` policy plays. Every episode's end database is snapshotted (what
mutants start from); an adversary whose strategy has nothing to try on the task is the
do-nothing episode, and one that ends a write task in the oracle's own database did the task,
not game the verifier (it abstains).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from palaestra import registry
from palaestra.policies import GiveUpPolicy, Policy
from palaestra.synth_apps import data, strategies
from palaestra.synth_apps.adversaries import IDLE, STRATEGIES
from palaestra.synth_apps.driver import spec_for
from palaestra.tasks import Task
from palaestra.verifiers.app_state import mutated, visits_path
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import (
    Mutator,
    Run,
    ValidationPlan,
    ValidationRecord,
    digest,
)


def _seeded(task: Task, scratch: Path) -> Path:
    """The app's database as every episode of ``task`` starts it (what the "nothing done"
    mutant restores): the seeded template, plus the rows the task plants in this app, planted
    in order as a reset plants them (the same ids)."""
    spec = spec_for(task.setup["app"])
    seeded = data.template(spec, task.setup.get("data_seed", 0))
    mine = [p for p in task.setup.get("plant") or [] if p.get("app", spec.name) == spec.name]
    if not mine:
        return seeded
    handle, name = tempfile.mkstemp(prefix="seed", suffix=".sqlite", dir=scratch)
    os.close(handle)
    copy = Path(name)
    shutil.copyfile(seeded, copy)
    data.plant_rows(data.check_plant(mine, {spec.name: spec}, spec.name), {spec.name: copy})
    return copy


class SynthPlan(ValidationPlan):
    """Synthesized tasks (``setup.driver == "synth"``) of one family, on ``env_id`` observing
    ``observe``; ``plan_policy(task, plan)`` is the family's policy playing a plan (what the
    adversary search's strategies are)."""

    repeats = 3
    budget = strategies.BUDGET
    parallel = 2
    strict = ("oracle",)
    abstains = ("adversary", "search")

    def __init__(
        self,
        family: str,
        env_id: str,
        observe: tuple[str, ...],
        plan_policy: Callable[[Task, list[dict[str, Any]]], Policy],
    ) -> None:
        self.family, self.env_id, self.observe = family, env_id, observe
        self.plan_policy = plan_policy

    def candidates(self) -> list[Task]:
        """Every synthesized task of the family in the suites on the suite path."""
        from palaestra.tasks import get_suite, suite_names

        return [
            t
            for name in suite_names()
            for t in get_suite(name).tasks
            if t.setup.get("driver") == "synth" and t.family == self.family
        ]

    def check(self, tasks: list[Task]) -> None:
        foreign = [t.id for t in tasks if t.setup.get("driver") != "synth"]
        if foreign:  # MiniWoB's verifier is MiniWoB's own
            raise ValueError(
                "only synthesized tasks (setup.driver 'synth') are validated here, "
                f"not {foreign[:5]}"
            )

    def record(self, tasks: list[Task]) -> ValidationRecord:
        """Reported under the apps' names, each task keyed by its verifier."""
        name = ",".join(sorted({str(t.metadata.get("app", "")) for t in tasks})) or "synth"
        return ValidationRecord(Path(f"{name}.validation.json"), name, _verifier_key)

    def open(self) -> Any:
        return registry.make(self.env_id, observe=self.observe)

    def max_steps(self, task: Task, role: str) -> int | None:
        return 1 if role == "noop" else None  # do nothing, then say "finished"

    def end_state(self, env: Any, task: Task, role: str, scratch: Path) -> Mapping[str, Any]:
        """The end database and visit log, copied (the next episode starts afresh)."""
        state = dict(env.state_probe().read())
        handle, name = tempfile.mkstemp(prefix="run", suffix=".sqlite", dir=scratch)
        os.close(handle)
        snapshot = Path(name)
        shutil.copyfile(state["app_db"], snapshot)
        log = visits_path(state["app_db"])
        if log.exists():
            shutil.copyfile(log, visits_path(snapshot))
        state.update(app_db=str(snapshot), seed_db=str(_seeded(task, scratch)))
        return state

    def end_digest(self, env: Any, task: Task, state: Mapping[str, Any]) -> str | None:
        """A write task's end database (its chat check is only the feasible gate); None for
        a task answered in words."""
        leaves = _leaves(task.verifier)
        if any(c["kind"] in ("answer", "infeasible") for c in leaves):
            return None
        return database_digest(Path(state["app_db"]))

    def plays_as_noop(self, task: Task, adversary: str) -> bool:
        return adversary in STRATEGIES and STRATEGIES[adversary](task) == IDLE

    def mutations(self, task: Task) -> Sequence[Mapping[str, Any]]:
        return list((task.validation or {}).get("mutations", []))

    def mutate(self, task: Task) -> Mutator:
        return mutated

    def prepare(self, task: Task) -> Task:
        return task.model_copy(update={"validation": None})

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search:
        def plan_policy(plan: list[dict[str, Any]]) -> Policy:
            # a step the plan cannot find ends the attempt (a failed attack, as for adversaries)
            return GiveUpPolicy(self.plan_policy(task, plan))

        return strategies.search_for(task, play, plan_policy, budget)


def _verifier_key(task: Task) -> str:
    return digest(task.verifier)


def database_digest(db: Path) -> str:
    """A digest of every table of an app database (two end states compared)."""
    with data.opened(db, readonly=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        dumped = [
            [t, [list(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY id")]]
            for t in sorted(tables)
        ]
    return digest(dumped)


def _leaves(spec: dict[str, Any]) -> list[dict[str, Any]]:
    kids = spec.get("checks")
    if not kids:
        return [spec]
    return [leaf for kid in kids for leaf in _leaves(kid.get("check", kid))]
