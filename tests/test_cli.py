from typer.testing import CliRunner

from palaestra.cli import app

runner = CliRunner(env={"COLUMNS": "200"})


def test_help_lists_commands():
    out = runner.invoke(app, ["--help"]).output
    for command in ("serve", "envs", "tasks", "check", "bench"):
        assert command in out


def test_envs_and_tasks():
    assert "palaestra-bench/Overhead-v0" in runner.invoke(app, ["envs"]).output
    assert "count-to-3" in runner.invoke(app, ["tasks", "palaestra-bench"]).output


def test_check_runs_checker_and_round_trip():
    result = runner.invoke(app, ["check", "palaestra-bench/Overhead-v0"])
    assert result.exit_code == 0, result.output
    assert result.output.count("ok") == 2
    bad = runner.invoke(app, ["check", "nope/none-v0"])
    assert bad.exit_code == 1 and "FAIL" in bad.output


def test_serve_refuses_a_public_bind_without_keys():
    result = runner.invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code != 0
