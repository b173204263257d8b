"""The bench catalog and the commands the CLI makes from it."""

import inspect

import pytest
from typer.testing import CliRunner

from palaestra.bench.catalog import BENCHES
from palaestra.cli import app
from palaestra.family import Family, families
from palaestra.resolve import resolve

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def played(monkeypatch):
    """Every main the commands resolve is replaced by one noting its keywords."""
    calls: list[tuple[str, dict]] = []

    def fake(target):
        return lambda **kwargs: calls.append((target, kwargs))

    monkeypatch.setattr("palaestra.resolve.resolve", fake)
    return calls


def test_every_entry_is_a_command_with_its_options():
    for entry in BENCHES:
        shown = runner.invoke(app, ["bench", entry.name, "--help"])
        assert shown.exit_code == 0, (entry.name, shown.output)
        for option in entry.options:
            flag = "--" + option.name.replace("_", "-")
            assert flag in shown.output, (entry.name, flag)


def test_each_option_is_a_keyword_of_its_main_with_the_same_default():
    """`palaestra bench NAME` with no options measures what the main measures by default."""
    for entry in BENCHES:
        params = inspect.signature(resolve(entry.target)).parameters
        for option in entry.options:
            assert option.keyword in params, (entry.name, option.keyword)
            assert params[option.keyword].default == option.default, (entry.name, option.name)


def test_a_command_hands_its_options_to_the_main_under_the_mains_keywords(played):
    result = runner.invoke(
        app, ["bench", "synth", "--domain", "shop", "--domain", "bank", "--tasks", "5"]
    )
    assert result.exit_code == 0, result.output
    assert played == [
        (
            "palaestra.bench.synth:main",
            {"domains": ["shop", "bank"], "variants": 2, "tasks": 5, "parallel": 2},
        )
    ]
    played.clear()
    assert runner.invoke(app, ["bench", "scale", "--no-backends"]).exit_code == 0
    assert played[0][1]["backends"] is False and played[0][1]["max_sessions"] == 20_000


def test_bench_all_runs_every_entry_but_a_family_that_cannot_run(played, monkeypatch):
    monkeypatch.setattr(
        Family, "unavailable", lambda self: "needs a kernel" if self.name == "cad" else None
    )
    result = runner.invoke(app, ["bench", "all"])
    assert result.exit_code == 0, result.output
    assert [target for target, _ in played] == [e.target for e in BENCHES if e.family != "cad"]
    assert "skipped cad benchmark: needs a kernel" in result.output


def test_every_family_named_by_the_catalog_is_installed():
    assert {e.family for e in BENCHES if e.family} <= set(families())
