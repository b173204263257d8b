"""The gateway program: its options, the settings they make and the start.

One command, two ways to run it: ``python -m palaestra.server`` (what
:func:`palaestra.server.runner.gateway_process` starts for the demo, the benchmarks and the
tests: the server's own program, below the CLI) and ``palaestra serve`` (the CLI registers
:func:`serve` as its command and adds what every CLI command loads, the benchmark fixtures).
Settings come from a file, then ``PALAESTRA_*`` variables, then these options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from palaestra.server import defaults

#: the runs folder option, here because the gateway records there; the CLI's data commands
#: take the same option (palaestra.cli._app)
RunsDir = Annotated[
    Path | None, typer.Option(help="Where runs are recorded \\[default: $PALAESTRA_HOME/runs]")
]
console = Console()
err_console = Console(stderr=True)


def _setting(name: str, help: str) -> Any:
    """The option of the gateway setting ``name``, None when not given (the file's or the
    variable's value stands): its help shows the setting's own default (:mod:`.defaults`,
    which Settings reads too)."""
    return typer.Option(help=f"{help} \\[default: {getattr(defaults, name.upper())}]")


def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to bind (loopback unless API keys are set)")
    ] = None,
    port: Annotated[int | None, _setting("port", "TCP port")] = None,
    workers: Annotated[
        int | None, _setting("workers", "Worker processes hosting env sessions")
    ] = None,
    backend: Annotated[
        str | None, _setting("backend", "Worker backend: local, docker or ray")
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Ray backend: the cluster's address (host:port); none starts one here"),
    ] = None,
    api_key: Annotated[
        list[str] | None,
        typer.Option(
            help="API key allowed to use the gateway (repeatable; visible to every local user "
            "in /proc: prefer --api-key-file or PALAESTRA_API_KEYS)"
        ),
    ] = None,
    api_key_file: Annotated[
        Path | None, typer.Option(help="File of API keys, one a line (PALAESTRA_API_KEYS_FILE)")
    ] = None,
    runs_dir: RunsDir = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not record sessions")] = False,
    config: Annotated[
        Path | None, typer.Option(help="Settings file (YAML or JSON); options given here win")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Start the gateway and its workers (settings: file < PALAESTRA_* variables < options)."""
    from palaestra.server.runner import serve as run
    from palaestra.server.settings import Settings

    if backend not in (None, "local", "docker", "ray"):
        raise typer.BadParameter(
            f"unknown backend {backend!r}: 'local', 'docker' or 'ray'", param_hint="--backend"
        )
    values: dict[str, object] = {}
    if config is not None:
        import yaml

        values.update(yaml.safe_load(config.read_text()) or {})
    given = {
        "host": host,
        "port": port,
        "workers": workers,
        "runs_dir": runs_dir,
        "backend": backend,
        "ray_address": ray_address,
    }
    values.update({k: v for k, v in given.items() if v is not None})
    if api_key:
        err_console.print(
            "[yellow]warning:[/] --api-key puts the key on the command line, which every local "
            "user can read (/proc/<pid>/cmdline, ps); use --api-key-file or PALAESTRA_API_KEYS"
        )
        values["api_keys"] = api_key
    if api_key_file is not None:
        values["api_keys_file"] = api_key_file
    if no_record:
        values["record"] = False
    settings = Settings.from_env(**values)
    console.print(
        f"[bold]palaestra[/] gateway on http://{settings.host}:{settings.port} "
        f"({settings.workers} {settings.backend} workers, "
        f"auth {'on' if settings.api_keys else 'off'})"
    )
    run(settings, log_level=log_level)


def main() -> None:
    """``python -m palaestra.server [OPTIONS]``: :func:`serve` as a program of its own."""
    typer.run(serve)
