"""The ``palaestra`` command line, one module per area.

Commands import what they run inside their own function: ``palaestra --help`` and a short
command must not pay for importing the gateway, Ray or a browser driver. Importing the area
modules registers their commands on ``app`` in the order ``--help`` lists them.
"""

from __future__ import annotations

# the order of these imports is the order `palaestra --help` lists the commands in
# isort: off
from palaestra.cli import serve, listing, validate, eval, synth, data  # noqa: F401

# isort: on
from palaestra.bench.fixtures import use_fixtures
from palaestra.cli._app import app, console, err_console
from palaestra.cli.bench import bench_app
from palaestra.cli.osworld import osworld_app
from palaestra.cli.usersim import usersim_app

app.add_typer(bench_app, name="bench")
app.add_typer(usersim_app, name="usersim")
app.add_typer(osworld_app, name="osworld")

# every command serves or measures with the benchmark fixtures (`palaestra serve` and its
# workers, `palaestra bench`, `palaestra eval palaestra-bench`): the kernel does not load them
use_fixtures()

__all__ = ["app", "console", "err_console"]
