"""Recorded validation runs go stale with the code, not only with the tasks.

A shipped suite whose validation is too slow for every load keeps its last run in the
repository, keyed by each task and by a digest of the code that decided the verdicts (the
family's env, check kinds, policies and adversaries, the validation runner). These tests fail,
naming the command that records a new run, as soon as either changes; CI's separate
``make revalidate`` step re-validates every candidate against the record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palaestra import validation as service
from palaestra.envs.mobile import suites as phone
from palaestra.tasks import get_suite, suite_names
from palaestra.validation import code_digest, code_sources, stale
from palaestra.verifiers import validation
from palaestra.verifiers.validation import RECORDS

SHIPPED_RECORDS = {
    "cad-parts",
    "computer-basic",
    "office-calc",
    "office-impress",
    "office-writer",
    "osworld-os",
    "tau2-retail",
    "tau2-telecom",
    "usersim",
}


@pytest.fixture(scope="module")
def records():
    for name in sorted(SHIPPED_RECORDS):
        assert name in suite_names(), name
        get_suite(name)  # loading a suite registers its record
    return dict(RECORDS)


def test_every_shipped_record_is_registered(records):
    assert set(records) >= SHIPPED_RECORDS


@pytest.mark.parametrize("suite", sorted(SHIPPED_RECORDS))
def test_the_record_stands_for_todays_tasks_and_code(records, suite):
    rec = records[suite]
    problems = stale(rec)
    assert not problems, f"{suite}: {'; '.join(problems)}. Re-record it: {rec.command}"


def test_the_phone_suite_was_validated_by_todays_code():
    made = json.loads(phone.FILE.read_text())
    assert made.get("code") == code_digest("mobile"), (
        "the code that validated the phone suite changed; re-make it: "
        "python -m palaestra.synthesis.phone"
    )


def test_the_code_is_the_familys_and_only_its():
    files = code_sources("cad")
    for name in (
        "palaestra/envs/cad/env.py",
        "palaestra/envs/cad/policies.py",
        "palaestra/envs/cad/strategies.py",
        "palaestra/envs/cad/validation.py",
        "palaestra/verifiers/cad.py",
        "palaestra/verifiers/geometry.py",
        "palaestra/verifiers/search.py",
        "palaestra/verifiers/validation.py",
        "palaestra/validation/runner.py",  # the one runner, above the families
        "palaestra/validation/suites.py",
        "palaestra/validation/records.py",
        "palaestra/policies.py",
    ):
        assert name in files, name
    assert not [n for n in files if n.startswith(("palaestra/envs/web", "palaestra/envs/usersim"))]
    assert not [n for n in files if n.endswith(".json")]  # data is the task keys' business
    # the page scripts and app templates a browser family runs are code too
    mobile = code_sources("mobile")
    assert any(n.endswith(".js") for n in mobile) and any(n.endswith(".html") for n in mobile)
    # a family's plan, and the synthesized apps' plan it instantiates
    assert {"palaestra/envs/mobile/validation.py", "palaestra/synth_apps/validation.py"} <= set(
        mobile
    )


@pytest.mark.parametrize(
    "changed", ["palaestra/verifiers/cad.py", "palaestra/validation/runner.py"]
)
def test_a_one_line_change_to_a_check_or_the_runner_makes_the_record_stale(
    records, monkeypatch, changed
):
    rec = records["cad-parts"]
    assert stale(rec) == []
    target = code_sources("cad")[changed]
    real = Path.read_bytes

    def edited(self: Path) -> bytes:
        data = real(self)
        return data.replace(b"\n", b"\n# a one-line change\n", 1) if self == target else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    problems = stale(rec)
    assert problems == ["the code that decides cad verdicts changed"]


def test_a_changed_task_makes_the_record_stale(records, monkeypatch):
    rec = records["tau2-retail"]
    tasks = rec.tasks()
    first = tasks[0]
    changed = first.model_copy(update={"instruction": first.instruction + " (changed)"})
    monkeypatch.setattr(rec, "tasks", lambda: [changed, *tasks[1:]])
    assert any("changed or unrecorded" in p and first.id in p for p in stale(rec))


def test_a_run_that_disagrees_is_named(records):
    rec = records["tau2-telecom"]
    recorded = rec.load()["tasks"]
    tid, was = next(iter(recorded.items()))
    flipped = {"tasks": {tid: {"validated": not was["validated"], "reason": "flipped"}}}
    assert [d.split(":")[0] for d in rec.disagreements(flipped)] == [tid]
    assert rec.disagreements({"tasks": {tid: was}}) == []


def test_only_shipped_records_register(tmp_path):
    before = dict(RECORDS)
    validation.ValidationRecord(tmp_path / "x.json", "scratch", lambda t: "k")
    assert before == RECORDS


@pytest.mark.parametrize(("twice", "code"), [(False, 0), (True, 1)])
def test_against_record_looks_twice_at_a_moved_verdict(monkeypatch, twice, code):
    """A committed suite's task that fails once and validates on a second look is a hiccup
    (exit 0); one that fails twice fails the check (exit 1), naming it."""
    from typer.testing import CliRunner

    from palaestra.cli import app

    tid = get_suite("phone").tasks[0].id
    calls: list[list[str]] = []

    def revalidate(tasks):
        calls.append([t.id for t in tasks])
        return [f"{tid}: no longer validates (x)"] if len(calls) == 1 or twice else []

    monkeypatch.setattr(service, "revalidate_committed", revalidate)
    result = CliRunner().invoke(app, ["validate", "phone", "--against-record"])
    assert result.exit_code == code, result.output
    assert len(calls) == 2 and calls[1] == [tid] and len(calls[0]) > 1
    assert ("no longer validates" in result.output) == twice
