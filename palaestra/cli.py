"""The ``palaestra`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    help="palaestra: agent environments behind one Gymnasium API and an HTTP gateway.",
    no_args_is_help=True,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks that print speed ratios against a baseline.")
app.add_typer(bench_app, name="bench")
console = Console()


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to bind (loopback unless API keys are set)")
    ] = None,
    port: Annotated[int | None, typer.Option(help="TCP port [default: 8000]")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes hosting env sessions [default: 2]")
    ] = None,
    backend: Annotated[str, typer.Option(help="Worker backend: local")] = "local",
    api_key: Annotated[
        list[str] | None, typer.Option(help="API key allowed to use the gateway (repeatable)")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where trajectories are recorded")] = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not record sessions")] = False,
    config: Annotated[
        Path | None, typer.Option(help="Settings file (YAML or JSON); options given here win")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Start the gateway and its workers (settings: file < PALAESTRA_* variables < options)."""
    from palaestra.server.runner import serve as run
    from palaestra.server.settings import Settings

    if backend != "local":
        raise typer.BadParameter("only the 'local' backend exists so far", param_hint="--backend")
    values: dict[str, object] = {}
    if config is not None:
        import yaml

        values.update(yaml.safe_load(config.read_text()) or {})
    given = {"host": host, "port": port, "workers": workers, "runs_dir": runs_dir}
    values.update({k: v for k, v in given.items() if v is not None})
    if api_key:
        values["api_keys"] = api_key
    if no_record:
        values["record"] = False
    settings = Settings.from_env(**values)
    console.print(
        f"[bold]palaestra[/] gateway on http://{settings.host}:{settings.port} "
        f"({settings.workers} {settings.backend} workers, "
        f"auth {'on' if settings.api_keys else 'off'})"
    )
    run(settings, log_level=log_level)


@app.command()
def envs(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """List registered environments."""
    from palaestra import registry

    specs = registry.specs()
    if as_json:
        print(json.dumps([s.to_json() for s in specs.values()], indent=1))
        return
    table = Table("id", "family", "description")
    for s in specs.values():
        table.add_row(s.id, s.family + (" (fixture)" if s.fixture else ""), s.description)
    console.print(table)


@app.command()
def tasks(
    suite: Annotated[str | None, typer.Argument(help="Suite name; all suites if omitted")] = None,
) -> None:
    """List suites, or the tasks of one suite (as an agent sees them)."""
    from palaestra import tasks as task_mod

    if suite is None:
        table = Table("suite", "tasks", "description")
        for name in task_mod.suite_names():
            s = task_mod.get_suite(name)
            table.add_row(name, str(len(s.tasks)), s.description)
    else:
        table = Table("task", "env", "max steps", "instruction")
        for t in task_mod.get_suite(suite).tasks:
            table.add_row(f"{suite}/{t.id}", t.env, str(t.max_steps), t.instruction)
    console.print(table)


@app.command()
def check(
    env_id: Annotated[
        str | None, typer.Argument(help="Env id; every registered env if omitted")
    ] = None,
) -> None:
    """Run Gymnasium's env checker and a gateway round-trip on an env."""
    from palaestra import registry
    from palaestra.conformance import check_env_local, check_env_remote

    ids = [env_id] if env_id else list(registry.specs())
    failed = 0
    for eid in ids:
        for name, fn in (
            ("gymnasium checker", check_env_local),
            ("gateway round-trip", check_env_remote),
        ):
            try:
                fn(eid)
                console.print(f"[green]ok[/]   {eid}: {name}")
            except Exception as exc:
                failed += 1
                console.print(f"[red]FAIL[/] {eid}: {name}: {type(exc).__name__}: {exc}")
    if failed:
        raise typer.Exit(1)


@bench_app.command("http")
def bench_http(
    steps: Annotated[int, typer.Option(help="Timed steps per transport")] = 5000,
    rounds: Annotated[int, typer.Option(help="Interleaved rounds")] = 5,
    openenv: Annotated[bool, typer.Option(help="Include the OpenEnv baseline")] = True,
) -> None:
    """Step latency: in-process vs REST vs WebSocket vs an OpenEnv server."""
    from palaestra.bench.http import main

    main(steps=steps, rounds=rounds, openenv=openenv)


@bench_app.command("web")
def bench_web(
    resets: Annotated[int, typer.Option(help="Timed resets per task")] = 3,
    steps: Annotated[int, typer.Option(help="Timed no-op steps per reset")] = 3,
) -> None:
    """MiniWoB reset/step: palaestra through the gateway vs BrowserGym in-process."""
    from palaestra.bench.web import main

    main(resets=resets, steps=steps)


if __name__ == "__main__":
    app()
