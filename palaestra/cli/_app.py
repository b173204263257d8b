"""The ``palaestra`` Typer app and its consoles, shared by the command modules.

Kept apart from ``__init__`` so a command module can import ``app`` without importing every
other command module first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

import typer
from rich.console import Console

# the runs folder option is the gateway program's; the data commands take it too
from palaestra.server.program import RunsDir as RunsDir

app = typer.Typer(
    help="palaestra: agent environments behind one Gymnasium API and an HTTP gateway.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """What the platform refuses (an unknown suite, run or episode, a bad option) is said in
    one red line, without a traceback, and exits 2 (pydantic's errors are ValueErrors)."""
    from palaestra.errors import PalaestraError

    try:
        yield
    except (PalaestraError, ValueError) as exc:
        err_console.print(f"[red]error:[/] {getattr(exc, 'detail', None) or exc}")
        raise typer.Exit(2) from None


# options several commands take, declared once
GatewayUrl = Annotated[
    str | None, typer.Option(help="Gateway URL; a local gateway is started if omitted")
]
GatewayKey = Annotated[
    str | None, typer.Option(envvar="PALAESTRA_API_KEY", help="The gateway's API key")
]
LlmKey = Annotated[
    str | None, typer.Option(envvar="PALAESTRA_LLM_KEY", help="API key for --llm-url")
]
LlmModel = Annotated[str, typer.Option(help="Model name for --llm-url")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON")]
