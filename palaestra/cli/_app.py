"""The ``palaestra`` Typer app and its consoles, shared by the command modules.

Kept apart from ``__init__`` so a command module can import ``app`` without importing every
other command module first.
"""

from __future__ import annotations

import typer
from rich.console import Console

app = typer.Typer(
    help="palaestra: agent environments behind one Gymnasium API and an HTTP gateway.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)
