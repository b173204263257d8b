"""Adversaries on synthesized tasks, for real (Chromium, the app host, SQLite): the cheap
strategies of issue 16 score 0, the oracle still passes (its visits are the evidence), a weak
verifier an adversary beats gets its task dropped with the adversary's trajectory, and
``palaestra validate`` drops such a task from a suite on disk."""

import copy
import json

import pytest
from typer.testing import CliRunner

from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.synth_apps.adversaries import STRATEGIES
from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import load_spec
from palaestra.synthesis.pipeline import drop_entry
from palaestra.validation import plan_of, validate_task
from palaestra.verifiers.validation import ADVERSARY_CEILING

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def validate_made(env, made, **options):
    """A generated task validated with its mutants, as the synthesis pipeline does."""
    return validate_task(made.task, env=env, mutations=made.mutations, **options)


@pytest.fixture(scope="module")
def env():
    env = plan_of("web").open()
    yield env
    env.close()


@pytest.fixture(scope="module")
def made():
    """Train tasks: an info task whose answer is a time, an infeasible one, a booking."""
    tasks = TaskGenerator(load_spec("train")).generate(30, seed=1)

    def first(kind, test=lambda g: True):
        return next(g for g in tasks if g.task.metadata["kind"] == kind and test(g))

    return {
        "time": first("info", lambda g: ":" in g.task.verifier["checks"][0]["value"]),
        "infeasible": first("infeasible"),
        "booking": first("operation", lambda g: "Book" in g.task.instruction),
    }


def play(env, task, name):
    episode = run_episode(env, family(task.family).policy(name), task, seed=0)
    result = env.last_verification or env.verify()
    return max(result.score, episode.total_reward), result


def test_the_issue_strategies_score_zero_and_the_oracle_still_passes(env, made):
    info, infeasible = made["time"].task, made["infeasible"].task
    assert play(env, info, "enumerate_times")[0] == 0  # all 1,440 HH:MM values
    assert play(env, infeasible, "stuffed_infeasible")[0] == 0  # stuffed, nothing explored
    for task in (info, infeasible):
        score, result = play(env, task, "oracle")
        assert score == 1.0 and result.success, result.checks


def test_every_adversary_fails_a_validated_task(env, made):
    report = validate_made(env, made["booking"], repeats=1)
    assert report.validated, report.reason
    assert set(report.adversaries) == set(STRATEGIES)
    assert all(r["reward"] <= ADVERSARY_CEILING for r in report.adversaries.values())
    assert report.mutants["every trip row updated"] < 1.0  # acting on every row: refused


def weakened(made):
    """The infeasible task with the verifier it had before issue 16: any reason, no evidence."""
    weak = copy.deepcopy(made)
    weak.task.id = "weak-infeasible"
    checks = weak.task.verifier["checks"]
    checks[0] = {"kind": "infeasible"}
    weak.mutations = []  # (its mutants would catch it first; the point is the adversary)
    return weak


def test_an_adversary_that_beats_a_weak_verifier_drops_the_task(env, made):
    report = validate_made(env, weakened(made["infeasible"]), repeats=1)
    assert not report.validated and "'stuffed_infeasible'" in report.reason
    won = report.adversaries["stuffed_infeasible"]
    assert won["success"] and any("report_infeasible" in a for a in won["actions"])
    entry = drop_entry("weak-infeasible", report)
    assert "stuffed_infeasible" in entry["adversaries"]  # the trajectory, in the suite report


def test_validate_cli_drops_what_an_adversary_beats(made, tmp_path, monkeypatch):
    from palaestra.cli import app

    folder = tmp_path / "suites" / "adv-suite"
    (folder / "tasks").mkdir(parents=True)
    (folder / "suite.json").write_text(json.dumps({"name": "adv-suite", "description": "t"}))
    for g in (made["time"], weakened(made["infeasible"])):
        task = g.task.model_copy(update={"validation": {"mutations": g.mutations}})
        (folder / "tasks" / f"{task.id}.json").write_text(task.model_dump_json())
    monkeypatch.setenv("PALAESTRA_SUITE_PATH", str(tmp_path / "suites"))
    result = CliRunner().invoke(app, ["validate", "adv-suite"], catch_exceptions=False)
    assert result.exit_code == 0 and "validated;" in result.output, result.output
    assert sorted(p.stem for p in (folder / "tasks").glob("*.json")) == [made["time"].task.id]
    report = json.loads((folder / "report.json").read_text())["validation"]
    assert report["dropped"] == ["weak-infeasible"]
    assert "actions" in report["tasks"]["weak-infeasible"]["adversaries"]["stuffed_infeasible"]


def test_phone_tasks_survive_every_adversary():
    phone = plan_of("mobile").open()
    try:
        tasks = TaskGenerator(load_spec("train"), layout="mobile").generate(30, seed=2)
        for kind in ("infeasible", "info"):
            made = next(g for g in tasks if g.task.metadata["kind"] == kind)
            made.task.family, made.task.env = "mobile", "palaestra/mobile-v0"
            made.task.max_steps += 10
            report = validate_made(phone, made, repeats=1)
            assert report.validated, report.reason
            assert set(report.adversaries) == set(STRATEGIES)
    finally:
        phone.close()
