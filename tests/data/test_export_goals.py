"""Exports carry the instruction each episode's agent was given, in every family.

An agent records the task line of its first prompt (``prompts.first_message``: what a model
agent is told) per task; the run its evaluation recorded is then exported (found through the
evaluation's results folder) as a Hugging Face dataset and as chat JSONL, and every exported
goal must be that line. A MiniWoB episode draws its own instruction from its seed ("Click on
Tab #2."); the suite's generic description ("Click on a tab element.") must not reach the data.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from palaestra.data import commands, export
from palaestra.evals import EvalConfig, read_results, run_eval
from palaestra.evals.prompts import first_message
from palaestra.tasks import get_suite

FAMILIES = [
    pytest.param("miniwob", ["click-tab", "click-button", "enter-text"], id="web",
                 marks=pytest.mark.browser),
    pytest.param("usersim", [], id="usersim"),
    pytest.param("tau2-retail", [], id="tau2"),
    pytest.param("cad-parts", [], id="cad"),
    pytest.param("phone", [], id="mobile", marks=pytest.mark.browser),
    pytest.param("computer-basic", [], id="computer", marks=pytest.mark.slow),
]  # fmt: skip


class Recorder:
    """Records the task line of its first prompt, then sends one action (the budget of one
    step ends the episode, so it is exported)."""

    told: dict[str, str] = {}

    def reset(self, task_view: dict[str, Any]) -> None:
        self.view = task_view

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        first = first_message(self.view["family"], self.view, observation)
        Recorder.told[self.view["id"]] = first.split("\n\n")[0].removeprefix("Task: ")
        return "noop()"


@pytest.mark.parametrize(("suite", "tasks"), FAMILIES)
def test_exported_goals_are_what_the_agent_was_told(gateway, runs_dir, tmp_path, suite, tasks):
    Recorder.told = {}
    out = tmp_path / "eval"
    config = EvalConfig(
        suite=suite, tasks=tasks, limit=None if tasks else 2, agent="recorder", url=gateway,
        out=out, max_steps=1, seeds=[3], run=f"goals-{suite}",
    )  # fmt: skip
    run_eval(config, agent=Recorder)
    played = read_results(out)
    assert played and all(r.status == "ok" for r in played), played
    told = Recorder.told
    assert set(told) == {r.task for r in played}

    # the eval's results folder is enough to find its run
    path = commands.resolve_run(str(out), runs_dir)
    assert path.name == f"goals-{suite}"

    export.export(path, "chat-jsonl", tmp_path / "chat")
    lines = (tmp_path / "chat" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == len(played)
    for line in lines:
        chat = json.loads(line)
        task = chat["metadata"]["task"].split("/", 1)[1]
        assert chat["messages"][0]["content"].endswith(f"Task: {told[task]}"), task

    from datasets import load_from_disk

    export.export(path, "hf", tmp_path / "hf")
    rows = load_from_disk(str(tmp_path / "hf" / "data"))
    assert len(rows) == len(played)
    for row in rows:
        assert row["goal"] == told[row["task"].split("/", 1)[1]], row["task"]

    if suite == "miniwob":  # the episode's own instruction, not the suite's generic one
        generic = {t.id: t.instruction for t in get_suite(suite).tasks}
        assert told["click-tab"] != generic["click-tab"]
        assert {r["goal"] for r in rows} != {generic[t] for t in tasks}


def test_an_eval_folder_without_its_run_says_where_it_looked(runs_dir, tmp_path):
    from palaestra.errors import NotFound

    (tmp_path / "summary.json").write_text(json.dumps({"run": "eval-elsewhere"}))
    with pytest.raises(NotFound, match=r"recorded run 'eval-elsewhere', which is not under"):
        commands.resolve_run(str(tmp_path), runs_dir)
    with pytest.raises(NotFound, match=r"no recorded run 'data-tset'.*palaestra runs"):
        commands.resolve_run("data-tset", runs_dir)


def test_runs_lists_with_filters(gateway, runs_dir, tmp_path):
    out = tmp_path / "eval"
    cfg = EvalConfig(suite="cad-parts", limit=1, agent="noop", url=gateway, out=out, run="listed")
    run_eval(cfg)
    found = commands.list_runs(runs_dir, commands.RunFilter(agent="noop", suite="cad-parts"))
    (row,) = [r for r in found if r["run_id"] == "listed"]
    assert row["episodes"] == 1 and row["success_rate"] == 0.0 and row["sessions"] == 1
    others = commands.list_runs(runs_dir, commands.RunFilter(agent="oracle"))
    assert not [r for r in others if r["run_id"] == "listed"]


def test_the_cli_takes_an_eval_folder_and_lists_runs(gateway, runs_dir, tmp_path):
    from typer.testing import CliRunner

    from palaestra.cli import app

    out = tmp_path / "eval"
    cfg = EvalConfig(suite="cad-parts", limit=1, agent="oracle", url=gateway, out=out)
    run = run_eval(cfg).run
    cli = CliRunner()
    where = ["--runs-dir", str(runs_dir)]
    exported = cli.invoke(
        app, ["export", str(out), "--format", "chat-jsonl", "--out", str(tmp_path / "x"), *where]
    )
    assert exported.exit_code == 0, exported.output
    assert len((tmp_path / "x" / "episodes.jsonl").read_text().splitlines()) == 1
    listed = cli.invoke(app, ["runs", "--json", "--suite", "cad-parts", *where])
    assert listed.exit_code == 0, listed.output
    assert run in {r["run_id"] for r in json.loads(listed.output)}
    near = cli.invoke(app, ["regrade", run[:-1] + "x", *where])
    assert near.exit_code == 2 and f"did you mean {run!r}" in near.output.replace("\n", "")
