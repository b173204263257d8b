"""``palaestra bench``: benchmarks that print speed ratios against a baseline.

One command per entry of the bench layer's catalog (:mod:`palaestra.bench.catalog`), made
here from the entry's options, so a new benchmark is one entry there and no code here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, cast

import typer

from palaestra.bench.catalog import BENCHES, Bench
from palaestra.cli._app import console

bench_app = typer.Typer(help="Benchmarks that print speed ratios against a baseline.")


@bench_app.command("all")
def bench_all() -> None:
    """Every benchmark below, with default sizes; a family's own benchmark is skipped where
    that family is not installed or cannot run here."""
    from palaestra.family import families as installed
    from palaestra.resolve import resolve

    found = installed()
    for entry in BENCHES:
        fam = found.get(entry.family)
        reason = fam.unavailable() if fam else f"the {entry.family} family is not installed"
        if entry.family and reason is not None:
            console.print(f"[yellow]skipped[/] {entry.family} benchmark: {reason}")
            continue
        console.rule(f"{entry.name} benchmark")
        resolve(entry.target)()


def _command(entry: Bench) -> Callable[..., None]:
    """The command running ``entry``'s main: its signature (which typer reads) is the entry's
    options, each passed on under the main's own keyword."""

    def run(**given: Any) -> None:
        from palaestra.resolve import resolve

        resolve(entry.target)(**{o.keyword: given[o.name] for o in entry.options})

    params = [
        inspect.Parameter(
            o.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=o.default,
            annotation=Annotated[o.kind, typer.Option(help=o.help)],
        )
        for o in entry.options
    ]
    cast(Any, run).__signature__ = inspect.Signature(params, return_annotation=None)
    run.__annotations__ = {p.name: p.annotation for p in params}
    run.__name__ = run.__qualname__ = f"bench_{entry.name}"
    return run


for _entry in BENCHES:
    bench_app.command(_entry.name, help=_entry.help)(_command(_entry))
