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


def _commands() -> list[str]:
    import typer

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if not subs:
            yield " ".join(path)
            return
        for name, sub in subs.items():
            yield from walk(sub, [*path, name])

    return [*walk(typer.main.get_command(app), ["palaestra"]), "palaestra eval compare"]


def test_docs_cli_lists_every_command():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    missing = [c for c in _commands() if f"\n{c} " not in text]
    assert not missing, f"docs/cli.md does not list {missing}"


def test_help_shows_the_defaults_written_in_it():
    """A default written into a help text ("[default: 8000]") is shown, not eaten as markup."""
    import re

    import typer

    def options(command, path):
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from options(sub, [*path, name])
            return
        for param in command.params:
            found = re.search(r"\[default: ([^\]]+)\]", getattr(param, "help", None) or "")
            if found:
                yield path, found.group(1)

    checked = 0
    for path, default in options(typer.main.get_command(app), []):
        shown = runner.invoke(app, [*path, "--help"]).output
        flat = re.sub(r"[\s│]+", " ", shown)
        assert f"[default: {default}]" in flat, (path, default)
        checked += 1
    assert checked >= 10


def test_eval_compare_help_is_compares():
    out = runner.invoke(app, ["eval", "compare", "--help"])
    assert out.exit_code == 0 and "eval compare [OPTIONS]" in out.output
    assert "Paired comparison of two evaluations" in out.output and "--agent" not in out.output
