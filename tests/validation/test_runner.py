"""The one validation runner, on a toy family that only declares how to validate (a plan):
the runner plays its oracle, noop, mutants and adversaries, as the plan says, and decides.

The family counts ``ok()`` actions (``tests.plugins:FaultyEnv``, checked by ``test_oks``): its
oracle says ok three times, its adversaries give up at once or mimic the oracle exactly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from palaestra import family as family_module
from palaestra import registry
from palaestra.family import Family, families
from palaestra.policies import ConstantPolicy, ReplayPolicy
from palaestra.registry import EnvSpec
from palaestra.tasks import Task
from palaestra.validation import plan_of, validate_suite, validate_task
from palaestra.verifiers.validation import Mutator, ValidationPlan, ValidationRecord
from tests.plugins import FaultyEnv


class CountingEnv(FaultyEnv):
    family = "counting"


POLICIES = {
    "replay": ReplayPolicy,
    "noop": lambda: ConstantPolicy("finish()"),
    # further reference solutions (a desktop task's code one beside its GUI one)
    "again": lambda: ReplayPolicy(["ok()", "ok()", "ok()", "finish()"]),
    "short": lambda: ReplayPolicy(["ok()", "ok()", "finish()"]),
}
ADVERSARIES = {
    "give_up": lambda: ConstantPolicy("finish()"),
    "mimic": lambda: ReplayPolicy(["ok()", "ok()", "ok()", "finish()"]),
}


class CountPlan(ValidationPlan):
    """Declares, and counts the episodes the runner plays (each opens an env here)."""

    repeats = 2
    abstains = ("adversary",)

    def __init__(self) -> None:
        self.episodes: list[str] = []

    def candidates(self) -> list[Task]:
        return [task(3)]

    def record(self, tasks: list[Task]) -> ValidationRecord:
        return ValidationRecord(Path("count.json"), "count", lambda t: t.id)

    @contextlib.contextmanager
    def env(self, shared: Any, task: Task, name: str) -> Iterator[CountingEnv]:
        self.episodes.append(name)
        env = CountingEnv(task)
        try:
            yield env
        finally:
            env.close()

    def end_state(self, env: Any, task: Task, role: str, scratch: Path) -> Mapping[str, Any]:
        return dict(env.state_probe().read())

    def end_digest(self, env: Any, task: Task, state: Mapping[str, Any]) -> str:
        return str(state["oks"])

    def plays_as_noop(self, task: Task, adversary: str) -> bool:
        return adversary == "give_up"

    def mutations(self, task: Task) -> list[Mapping[str, Any]]:
        return [{"name": "one_short"}]

    def mutate(self, task: Task) -> Mutator:
        return lambda state, mutation: contextlib.nullcontext({"oks": state["oks"] - 1})


PLAN = CountPlan()


@pytest.fixture(scope="module", autouse=True)
def toy_family() -> Iterator[Family]:
    fam = Family(
        name="counting",
        envs=(
            EnvSpec(
                "palaestra-test/Counting-v0",
                "tests.plugins:FaultyEnv",
                family="counting",
                fixture=True,
            ),
        ),
        policies=__name__,
        checks=("tests.plugin_checks",),
        validation=f"{__name__}:PLAN",
    )
    families()  # the installed ones first, then this one beside them
    fam.install()
    yield fam
    # gone again: other tests list every installed family and env
    family_module._FAMILIES.pop(fam.name, None)
    registry._REGISTRY.pop("palaestra-test/Counting-v0", None)


def task(at_least: int) -> Task:
    return Task(
        id=f"count-{at_least}",
        family="counting",
        env="palaestra-test/Counting-v0",
        instruction="Say ok three times, then finish.",
        verifier={"kind": "test_oks", "at_least": at_least},
        max_steps=10,
        oracle={"policy": "replay", "data": ["ok()", "ok()", "ok()", "finish()"]},
    )


def test_the_runner_plays_what_the_plan_declares_and_the_task_validates():
    PLAN.episodes.clear()
    report = validate_task(task(3))
    assert report.validated, report.reason
    assert report.oracle_scores == [1.0, 1.0] and report.noop_score == 0.0
    assert report.mutants == {"one_short": pytest.approx(2 / 3)}
    # give_up has nothing to try beyond doing nothing: its result is the noop episode's
    assert report.adversaries["give_up"] == {"success": False, "score": 0.0, "reward": 0.0}
    # mimic did the task, ending where the oracle ends: an abstention, never a win
    assert report.adversaries["mimic"]["error"].startswith("AdversaryAbstained")
    assert PLAN.episodes == ["oracle", "oracle", "noop", "mimic"]


def test_without_the_abstain_rule_a_mimic_wins_and_its_trajectory_is_kept(monkeypatch):
    monkeypatch.setattr(CountPlan, "abstains", ())
    report = validate_task(task(3))
    assert not report.validated and "'mimic' beats the verifier" in (report.reason or "")
    assert report.adversaries["mimic"]["actions"] == ["ok()", "ok()", "ok()", "finish()"]


def test_a_further_reference_plays_after_the_oracle_and_must_pass_too(monkeypatch):
    PLAN.episodes.clear()
    monkeypatch.setattr(CountPlan, "references", lambda self, t: ("again",))
    report = validate_task(task(3), adversaries=False)
    assert report.validated, report.reason
    assert report.oracle_scores == [1.0, 1.0, 1.0]
    assert PLAN.episodes == ["oracle", "oracle", "again", "noop"]
    monkeypatch.setattr(CountPlan, "references", lambda self, t: ("short",))
    report = validate_task(task(3), adversaries=False)
    assert not report.validated
    assert (report.reason or "").startswith("reference 'short' failed"), report.reason


def test_a_verifier_blind_to_the_mutant_is_caught():
    report = validate_task(task(2), adversaries=False)
    assert not report.validated and report.reason == "mutant 'one_short' passes the verifier"


def test_a_suite_is_reported_under_the_plans_record_with_each_tasks_key():
    assert plan_of("counting") is PLAN
    run = validate_suite(family="counting", adversaries=["give_up"])
    assert (run["suite"], run["total"], run["validated"]) == ("count", 1, 1)
    assert run["tasks"]["count-3"]["key"] == "count-3"
    with pytest.raises(ValueError, match="one family's tasks at a time"):
        validate_suite([task(3), task(3).model_copy(update={"family": "test"})])


def test_every_family_declares_a_plan_and_runs_no_validation_loop_of_its_own():
    """One runner for every family: each installed family's ``Family.validation`` names a
    plan, and no family module keeps a ``validate_task`` / ``validate_suite`` of its own."""
    import importlib

    from palaestra.resolve import resolve

    shipped = {n: f for n, f in families().items() if f.suites and f.name != "test"}
    assert {"cad", "computer", "mobile", "tau2", "usersim", "web"} <= set(shipped)
    for name, fam in shipped.items():
        assert isinstance(resolve(fam.validation), ValidationPlan), name
        module = importlib.import_module(fam.validation.partition(":")[0])
        suites = importlib.import_module(f"palaestra.envs.{name}.suites")
        for found in (module, suites):
            own = {"validate_task", "validate_suite", "validate"} & set(vars(found))
            assert not own, f"{found.__name__} validates by itself: {sorted(own)}"


def test_a_sample_checked_against_a_record_is_spread_over_its_candidates(monkeypatch):
    from palaestra.validation import suites as service

    monkeypatch.setattr(service, "code_digest", lambda family: "today")
    rec = ValidationRecord(Path("count.json"), "count", lambda t: t.id)
    rec.family = "counting"
    candidates = [task(3).model_copy(update={"id": f"count-{i}"}) for i in range(5)]
    monkeypatch.setattr(rec, "tasks", lambda: candidates)
    run = service.revalidate(rec, sample=2)
    assert sorted(run["tasks"]) == ["count-0", "count-2"] and run["code"] == "today"
    assert len(service.revalidate(rec)["tasks"]) == 5
