"""``palaestra eval`` (an agent on a suite) and ``palaestra eval compare`` (two runs, paired)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from palaestra.cli._app import (
    GatewayKey,
    GatewayUrl,
    app,
    console,
    err_console,
    usage_errors,
)

if TYPE_CHECKING:
    from palaestra.evals import EvalConfig, EvalSummary

compare_app = typer.Typer(add_completion=False)


@compare_app.command()
def compare(
    a: Annotated[Path, typer.Argument(help="The baseline run's results folder (eval --out)")],
    b: Annotated[Path, typer.Argument(help="The other run's results folder")],
    out: Annotated[Path | None, typer.Option(help="Also write the comparison as Markdown")] = None,
) -> None:
    """Paired comparison of two evaluations over the episodes (task, seed, attempt) both
    scored: success with the exact McNemar test, score with a paired permutation test, and
    per task. Runs without a paired episode are refused, saying why (exit 2)."""
    from palaestra.errors import PalaestraError
    from palaestra.evals import terminal

    try:
        terminal.compare_runs(a, b, console, out)
    except PalaestraError as exc:
        err_console.print(f"[red]error:[/] {exc.detail}")
        raise typer.Exit(2) from None


class EvalCommand(TyperCommand):
    """``palaestra eval``, where ``eval compare A B`` (and ``eval compare --help``) is the
    ``compare`` command: a suite is never named "compare"."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] == "compare":
            cmd = typer.main.get_command(compare_app)
            with cmd.make_context(f"{ctx.command_path} compare", args[1:]) as sub:
                cmd.invoke(sub)
            ctx.exit(0)
        return list(super().parse_args(ctx, args))


@app.command(name="eval", cls=EvalCommand)
def eval_(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="SUITE, or SUITE/TASK ... of one suite; or `compare A B` (two --out folders, "
            "see `palaestra eval compare --help`)"
        ),
    ],
    agent: Annotated[
        str,
        typer.Option(
            help="oracle | random | noop | a family policy | openai:MODEL | module:Class | "
            "http://HOST:PORT/PATH"
        ),
    ] = "oracle",
    parallel: Annotated[int, typer.Option(help="Episodes in flight")] = 4,
    attempts: Annotated[int, typer.Option(help="Episodes per (task, seed): pass@k, pass^k")] = 1,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds")] = "0",
    url: GatewayUrl = None,
    api_key: GatewayKey = None,
    out: Annotated[
        Path | None, typer.Option(help="Results folder (default: runs/evals/SUITE-AGENT)")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="openai agents: the OpenAI-compatible endpoint")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Agent option key=value (repeatable)"),
    ] = None,
    max_steps: Annotated[int | None, typer.Option(help="Lower each task's step budget")] = None,
    limit: Annotated[int | None, typer.Option(help="The first N tasks only")] = None,
    split: Annotated[
        str | None, typer.Option(help="Only this split's tasks (metadata split: train, test)")
    ] = None,
    infra_retries: Annotated[int, typer.Option(help="Retries of infrastructure errors")] = 2,
    record: Annotated[bool, typer.Option(help="Record each episode's trajectory")] = True,
    run: Annotated[
        str | None,
        typer.Option(help="The recorded run's name (docs/data.md) \\[default: eval-SUITE-AGENT-…]"),
    ] = None,
    workers: Annotated[int, typer.Option(help="Worker processes of the local gateway")] = 2,
    allow_errors: Annotated[
        bool,
        typer.Option(help="Exit 0 even when episodes errored (they are still reported)"),
    ] = False,
) -> None:
    """Evaluate an agent on a suite; `palaestra eval compare A B` compares two runs.

    Results are appended per episode to OUT/results.jsonl (rerun to resume; Ctrl-C keeps what
    finished), with OUT/summary.json, OUT/report.md and a plot. Episodes that errored (the
    agent raised, the model endpoint failed, the platform failed) are counted apart from
    failures, shown with their tracebacks, and make the exit status 1 (see --allow-errors);
    Ctrl-C stops after the episodes in flight and exits 130.
    """
    summary = _evaluate(
        workers,
        targets,
        option,
        base_url,
        seeds,
        agent=agent,
        parallel=parallel,
        attempts=attempts,
        max_steps=max_steps,
        limit=limit,
        split=split,
        infra_retries=infra_retries,
        record=record,
        run=run,
        url=url,
        api_key=api_key,
        out=out,
    )
    _report(summary, allow_errors)


def _evaluate(workers: int, *asked: Any, **fields: Any) -> EvalSummary:
    """Play the evaluation the command line asks for (:func:`_config`, :func:`_play`): a
    refused one exits 2; Ctrl-C before the first episode, or a second one, exits 130."""
    try:
        with usage_errors():
            return _play(_config(*asked, **fields), workers)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise typer.Exit(130) from None


def _report(summary: EvalSummary, allow_errors: bool) -> None:
    """Print the summary and exit as it says: 130 when interrupted (what finished is kept, a
    rerun continues), 1 when episodes errored unless they are allowed."""
    from palaestra.evals import terminal

    terminal.print_summary(summary, console)
    if summary.cancelled:
        raise typer.Exit(130)
    if summary.errors and not allow_errors:
        raise typer.Exit(1)


def _config(
    targets: list[str], option: list[str] | None, base_url: str | None, seeds: str, **fields: Any
) -> EvalConfig:
    """The evaluation the command line asks for (what is wrong with it: a ValueError)."""
    from palaestra.evals import EvalConfig, terminal

    suite, task_ids = terminal.targets(targets)
    options = terminal.parse_options(option or [])
    if base_url:
        options["base_url"] = base_url
    listed = [int(s) for s in seeds.split(",") if s.strip()]
    return EvalConfig(suite=suite, tasks=task_ids, agent_options=options, seeds=listed, **fields)


def _play(config: EvalConfig, workers: int) -> EvalSummary:
    """Play the evaluation with its progress on stderr: on the gateway at ``config.url``, or
    without one on a gateway started in this process with ``workers`` workers."""
    from palaestra.evals import terminal
    from palaestra.evals.runner import Runner

    shown = Runner(config)
    where = f" (recorded as run {shown.run_name()})" if config.record else ""
    err_console.print(f"{config.agent} on {config.suite}: results in {shown.out()}{where}")
    with _stop_on_ctrl_c() as cancel:
        if config.url is not None:
            return terminal.run_with_progress(config, err_console, cancel)
        from palaestra.client import DEFAULT_URL
        from palaestra.server.runner import local_sessions
        from palaestra.server.settings import Settings

        err_console.print(f"starting a gateway in this process with {workers} workers ...")
        tags, name = shown.tags(), shown.run_name()
        with local_sessions(
            Settings(workers=workers), api_key=config.api_key, run=name, tags=tags
        ) as sessions:
            # it records where `palaestra serve` reads: the report links to that one
            config = config.model_copy(update={"viewer_url": DEFAULT_URL})
            return terminal.run_with_progress(config, err_console, cancel, sessions)


@contextlib.contextmanager
def _stop_on_ctrl_c() -> Iterator[threading.Event]:
    """The first Ctrl-C sets the event (the runner lets the episodes in flight end, then
    summarizes) and says so in one line; a second one interrupts at once."""
    cancel = threading.Event()

    def on_int(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err_console.print("stopping: episodes in flight are ended (Ctrl-C again to quit now)")

    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = signal.signal(signal.SIGINT, on_int)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)
