"""Recorded runs: ``palaestra runs``, ``regrade``, ``replay`` and ``export`` (docs/data.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from palaestra.cli._app import (
    AsJson,
    GatewayKey,
    GatewayUrl,
    RunsDir,
    app,
    console,
    usage_errors,
)


class ExportFormat(StrEnum):
    hf = "hf"
    parquet = "parquet"
    chat_jsonl = "chat-jsonl"


RUN_HELP = "A run's name (`palaestra runs`) or the results folder of the eval that recorded it"


@app.command()
def runs(
    agent: Annotated[str | None, typer.Option(help="Runs of this agent only")] = None,
    suite: Annotated[str | None, typer.Option(help="Runs of this suite only")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N runs")] = 50,
    runs_dir: RunsDir = None,
    as_json: AsJson = False,
) -> None:
    """List recorded runs, newest first: name, agent, suite, sessions, episodes, success."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()
    shown = commands.RunFilter(agent, suite, limit)
    _data_command(lambda: commands.run_runs(where, console, shown, as_json))


def _data_command(work: Any) -> None:
    """Run a data command: unknown runs and episodes are errors naming them (exit 2)."""
    with usage_errors():
        code = work()
    if code:
        raise typer.Exit(code)


@app.command()
def regrade(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    runs_dir: RunsDir = None,
    as_json: AsJson = False,
) -> None:
    """Re-score a run's episodes with today's verifiers (from their end-state snapshots) and
    list every verdict that changed."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()
    _data_command(lambda: commands.run_regrade(run, where, console, as_json))


@app.command()
def replay(
    target: Annotated[
        str,
        typer.Argument(
            help="RUN or an eval's results folder (every episode), RUN/SESSION or "
            "RUN/SESSION/EPISODE"
        ),
    ],
    runs_dir: RunsDir = None,
    url: GatewayUrl = None,
    api_key: GatewayKey = None,
    repeat: Annotated[int, typer.Option(min=1, max=100, help="Replays (a determinism report)")] = 1,
) -> None:
    """Re-execute a recorded episode's actions from its seed on a fresh session; report the
    first step where the observation or the end state diverges (exit 1 if any does)."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()

    @contextlib.contextmanager
    def gateway() -> Iterator[str]:
        if url is not None:
            yield url
            return
        from palaestra.server.runner import gateway_thread
        from palaestra.server.settings import Settings

        with gateway_thread(Settings(workers=1, record=False)) as local:
            yield local

    _data_command(lambda: commands.run_replay(target, where, console, gateway, api_key, repeat))


@app.command()
def export(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    fmt: Annotated[ExportFormat, typer.Option("--format", help="Output format")],
    out: Annotated[Path, typer.Option(help="Output folder")],
    success_only: Annotated[bool, typer.Option(help="Successful episodes only")] = False,
    min_score: Annotated[float | None, typer.Option(help="Episodes scoring at least this")] = None,
    family: Annotated[str | None, typer.Option(help="Episodes of this family only")] = None,
    runs_dir: RunsDir = None,
) -> None:
    """Export a run as a Hugging Face dataset, Parquet or chat JSONL, with a dataset card."""
    from palaestra.data import commands
    from palaestra.data.export import Filters

    where = runs_dir or commands.default_runs_dir()
    filters = Filters(success_only, min_score, family)
    _data_command(lambda: commands.run_export(run, fmt.value, out, where, console, filters))
