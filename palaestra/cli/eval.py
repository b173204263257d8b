"""``palaestra eval`` (an agent on a suite) and ``palaestra eval compare`` (two runs, paired)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from palaestra.cli._app import app, console, err_console

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
    url: Annotated[
        str | None, typer.Option(help="Gateway URL; a local gateway is started if omitted")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="PALAESTRA_API_KEY", help="The gateway's API key")
    ] = None,
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
    from pydantic import ValidationError

    from palaestra.errors import PalaestraError
    from palaestra.evals import EvalConfig, terminal
    from palaestra.evals.runner import Runner

    try:
        suite, task_ids = terminal.targets(targets)
        options = terminal.parse_options(option or [])
        if base_url:
            options["base_url"] = base_url
        config = EvalConfig(
            suite=suite,
            tasks=task_ids,
            agent=agent,
            agent_options=options,
            parallel=parallel,
            attempts=attempts,
            seeds=[int(s) for s in seeds.split(",") if s.strip()],
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
        shown = Runner(config)
        where = f" (recorded as run {shown.run_name()})" if record else ""
        err_console.print(f"{agent} on {suite}: results in {shown.out()}{where}")
        with _stop_on_ctrl_c() as cancel:
            if url is None:
                from palaestra.client import DEFAULT_URL
                from palaestra.server.runner import local_sessions
                from palaestra.server.settings import Settings

                err_console.print(f"starting a gateway in this process with {workers} workers ...")
                tags, name = shown.tags(), shown.run_name()
                with local_sessions(
                    Settings(workers=workers), api_key=api_key, run=name, tags=tags
                ) as sessions:
                    # it records where `palaestra serve` reads: the report links to that one
                    config = config.model_copy(update={"viewer_url": DEFAULT_URL})
                    summary = terminal.run_with_progress(config, err_console, cancel, sessions)
            else:
                summary = terminal.run_with_progress(config, err_console, cancel)
    except (PalaestraError, ValidationError, ValueError) as exc:
        detail = getattr(exc, "detail", None) or str(exc)
        err_console.print(f"[red]error:[/] {detail}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:  # a second Ctrl-C, or one before the first episode
        err_console.print("interrupted")
        raise typer.Exit(130) from None
    terminal.print_summary(summary, console)
    if summary.cancelled:
        raise typer.Exit(130)  # interrupted: what finished is kept, a rerun continues
    if summary.errors and not allow_errors:
        raise typer.Exit(1)


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
