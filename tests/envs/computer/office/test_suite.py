"""The office suites: tasks made of templates (ids, phrasings, setup, what is public and private),
each app's record, and how the computer family's plan validates them (the code solution as a
further reference, which adversaries count as doing nothing). No desktop needed."""

from __future__ import annotations

import base64
import json
import re

import pytest

from palaestra import tasks as tasks_mod
from palaestra.envs.computer import suites as basic
from palaestra.envs.computer import validation
from palaestra.envs.computer.office import suite
from palaestra.envs.computer.office.template import ArtifactError, Case, Template
from palaestra.tasks import PUBLIC_KEYS, Oracle, get_suite, suite_names


def _make(seed: int) -> Case:
    if seed == 13:
        raise RuntimeError("no such budget")
    return Case(
        params={"total": 100 + seed, "cell": "B7"},
        files={"budget.xlsx": b"PK-bytes-" + bytes([seed])},
        open="budget.xlsx",
        verifier={"kind": "spreadsheet", "path": "~/budget.xlsx", "expect": []},
        gui=["type_text('100\\n')", "key('ctrl+s')"],
        code=["run_python('print(1)')"],
        text_files={"notes.txt": "hello"},
    )


TOY = Template(
    name="calc-toy-total",
    app="calc",
    skills=("formulas",),
    phrasings=(
        "Put the total {total} in {cell} of ~/budget.xlsx.",
        "Cell {cell} of budget.xlsx should hold {total}; save it.",
        "Write {total} into {cell}, then save the workbook.",
    ),
    make=_make,
    seeds=(0, 1, 2, 3),
)


@pytest.fixture
def toy(monkeypatch):
    real = suite.templates
    monkeypatch.setattr(suite, "templates", lambda app: [TOY] if app == "calc" else real(app))
    suite._case.cache_clear()
    yield TOY
    suite._case.cache_clear()


def test_a_task_is_a_template_at_a_seed(toy):
    tasks = suite.calc_tasks()
    assert [t.id for t in tasks] == [f"calc-toy-total/{s}" for s in (0, 1, 2, 3)]
    first = tasks[0]
    assert first.env == "palaestra/computer-v0" and first.family == "computer"
    assert first.instruction == "Put the total 100 in B7 of ~/budget.xlsx."
    # the seed picks the phrasing: the seeds use every one, the fourth the first again
    assert len({t.instruction.split(" ")[0] for t in tasks[:3]}) == 3
    assert tasks[3].instruction == "Put the total 103 in B7 of ~/budget.xlsx."
    setup = first.setup
    assert base64.b64decode(setup["binary"]["budget.xlsx"]) == b"PK-bytes-\x00"
    assert setup["files"] == {"notes.txt": "hello"}
    assert setup["apps"] == [["calc", "/home/user/budget.xlsx"]]
    assert first.verifier == {"kind": "all", "checks": [_make(0).verifier]}
    assert first.oracle is not None and first.oracle.policy == "replay"
    assert first.oracle.data == ["type_text('100\\n')", "key('ctrl+s')"]
    assert suite.template_of(first) == "calc-toy-total" and suite.is_office(first)


def test_the_view_names_the_app_and_keeps_the_solutions_private(toy):
    task = suite.calc_tasks()[0]
    view = task.agent_view()
    assert view["metadata"] == {"app": "calc"} and set(view["metadata"]) <= set(PUBLIC_KEYS)
    text = json.dumps(view)
    assert "run_python" not in text and "formulas" not in text and "ctrl+s" not in text
    assert task.metadata["code_oracle"] == ["run_python('print(1)')"]
    assert task.metadata["skills"] == ["formulas"] and task.metadata["app"] == "calc"


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_every_templates_tasks_pass_the_leak_rules():
    """The leak test's rule on every office candidate (tests/verifiers/test_task_view_leaks.py):
    no skill shows in the id unless the instruction says it; the instruction never names the
    template; a template has three phrasings or more and its seeds use several."""
    for app in ("calc", "writer", "impress"):
        for template in suite.templates(app):
            assert len(template.phrasings) >= 3, template.name
            assert len({s % len(template.phrasings) for s in template.seeds}) >= min(
                2, len(template.seeds)
            ), template.name
        for task in suite.app_tasks(app):
            assert suite.template_of(task) not in task.instruction, task.id
            outside, inside = _words(task.id), _words(task.instruction)
            for value in task.metadata.get("skills", []):
                shown = f" {_words(value)} " in f" {outside} "
                assert not shown or f" {_words(value)} " in f" {inside} ", (task.id, value)


def test_a_failing_generator_names_its_template_and_seed(toy, monkeypatch):
    with pytest.raises(ArtifactError, match=r"'calc-toy-total' failed for seed 13: RuntimeError"):
        suite.make_task(TOY, 13)
    broken = Template(
        name="calc-toy-broken",
        app="calc",
        skills=(),
        phrasings=("Write {missing}.", "a", "b"),
        make=_make,
    )
    with pytest.raises(ArtifactError, match=r"'calc-toy-broken' failed for seed 0: phrasing"):
        suite.make_task(broken, 0)


def test_each_app_has_its_record_and_the_suites_are_registered(toy, tmp_path, monkeypatch):
    assert {"office", "office-calc", "office-writer", "office-impress"} <= set(suite_names())
    tasks = suite.calc_tasks()
    record = suite.RECORDS["calc"]
    assert record.suite == "office-calc" and record.path.name == "validation_calc.json"
    assert record.command == "palaestra validate office-calc --record"
    assert validation.PLAN.record(tasks) is record
    assert (
        suite.record_for([*tasks, tasks[0].model_copy(update={"metadata": {"app": "writer"}})])
        is suite.UNION
    )
    # only what the record validated, with today's key, is emitted
    monkeypatch.setattr(record, "path", tmp_path / "validation_calc.json")
    # an earlier test may have loaded the suite: read it again from the record under test
    monkeypatch.delitem(tasks_mod._LOADED, "office-calc", raising=False)
    entry = {"validated": True, "key": suite.task_key(tasks[0])}
    stale = {"validated": True, "key": "an older task"}
    record.write({"tasks": {tasks[0].id: entry, tasks[1].id: stale}})
    assert [t.id for t in suite.load_calc()] == [tasks[0].id]
    assert [t.id for t in get_suite("office-calc").tasks] == [tasks[0].id]


def test_the_plan_plays_the_code_solution_and_skips_what_only_ends(toy):
    task = suite.calc_tasks()[0]
    plan = validation.PLAN
    assert plan.references(task) == ("code_oracle",)
    assert (
        plan.references(
            task.model_copy(update={"metadata": {**task.metadata, "code_oracle": None}})
        )
        == ()
    )
    # desktop adversaries that only end the episode are the do-nothing run on a document task
    for name in ("claim_done", "refuse", "spoof_window", "spoof_process", "code_only", "hollow"):
        assert plan.plays_as_noop(task, name), name
    assert not plan.plays_as_noop(task, "repeat_last")  # Ctrl+S three times saves
    # a GUI solution ending in "keep the format" (Return): pressing Return saves nothing
    kept = ["type_text('100\\n')", "key('ctrl+s')", "wait(1.5)", "key('Return')", "wait(1.5)"]
    returns = task.model_copy(update={"oracle": Oracle(policy="replay", data=kept)})
    assert plan.plays_as_noop(returns, "repeat_last")
    as_dicts = [
        {"name": "key", "args": {"combo": "ctrl+s"}},
        {"name": "key", "args": {"combo": "Return"}},
    ]
    dicts = task.model_copy(update={"oracle": Oracle(policy="replay", data=as_dicts)})
    assert plan.plays_as_noop(dicts, "repeat_last")
    coded = {"name": "run_python", "args": {"code": "print(1)"}}
    assert validation.bare(
        task.model_copy(update={"metadata": {**task.metadata, "code_oracle": [coded]}})
    )
    for name in ("untouched", "hollow_document", "wrong_content", "format_dodge"):
        assert not plan.plays_as_noop(task, name), name
    # ... where no check reads how the agent ended
    status = {"kind": "all", "checks": [task.verifier, {"kind": "agent_status", "status": "done"}]}
    assert not plan.plays_as_noop(task.model_copy(update={"verifier": status}), "claim_done")
    # the office adversaries have nothing to try on the desktop tasks, which keep their own
    other = basic.all_tasks()[0]
    assert plan.plays_as_noop(other, "wrong_content") and not plan.plays_as_noop(other, "refuse")
    assert plan.references(other) == ()
    assert plan.record([other]) is basic.RECORD


class _Recorder:
    def __init__(self) -> None:
        self.options: list[dict] = []

    def reset(self, seed=None, options=None):
        self.options.append(options)
        return {}, {}


def test_screen_free_episodes_play_without_the_app(toy):
    task = suite.calc_tasks()[0]
    shared = _Recorder()
    for name in (
        "code_oracle",
        "noop",
        "hollow_document",
        "format_dodge",
        "wrong_content",
        "search",
    ):
        with validation.PLAN.env(shared, task, name) as env:
            env.reset(seed=0, options={"task": task})
        setup = shared.options[-1]["task"].setup
        assert "apps" not in setup and setup["binary"] == task.setup["binary"], name
    for name in ("oracle", "untouched", "repeat_last"):  # these use the screen
        with validation.PLAN.env(shared, task, name) as env:
            assert env is shared, name
    # a GUI-only task, or one a check of the screen or processes reads, keeps its app
    gui_only = task.model_copy(update={"metadata": {**task.metadata, "code_oracle": None}})
    window = {"kind": "all", "checks": [*task.verifier["checks"], {"kind": "window"}]}
    for other in (gui_only, task.model_copy(update={"verifier": window})):
        with validation.PLAN.env(shared, other, "noop") as env:
            assert env is shared


def test_the_docs_list_every_template():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[4] / "docs" / "office.md").read_text()
    for app in ("calc", "writer", "impress"):
        for template in suite.templates(app):
            row = f"| `{template.name}` | {', '.join(template.skills)} | {len(template.seeds)} |"
            assert row in docs, f"docs/office.md lacks {template.name}: scripts/office_table.py"
