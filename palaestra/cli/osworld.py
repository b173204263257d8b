"""``palaestra osworld``: OSWorld's task files here, which run and why not, and their downloads.

``report`` reads the task folders offline; ``cache`` is the one command that goes to the
internet (run it where the internet is reachable, then point ``PALAESTRA_OSWORLD_CACHE`` or
``--cache`` at the folder).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from palaestra.cli._app import AsJson, console, err_console

osworld_app = typer.Typer(help="OSWorld's task files: which run here, and their download cache.")

CacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="The download cache folder \\[default: $PALAESTRA_OSWORLD_CACHE or "
        "~/.cache/palaestra/osworld]",
    ),
]


@osworld_app.command("report")
def osworld_report(
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", "-d", help="Domain (repeatable) \\[default: every one found]"),
    ] = None,
    cache: CacheDir = None,
    why: Annotated[bool, typer.Option("--why", help="List each task that does not run")] = False,
    as_json: AsJson = False,
) -> None:
    """Which OSWorld tasks run on this desktop, per domain, and why the others do not (a task
    whose downloads the cache lacks lists the URLs it needs)."""
    from palaestra.envs.computer import osworld
    from palaestra.envs.computer.osworld_cache import Cache

    unknown = sorted(set(domain or []) - set(osworld.DOMAINS))
    if unknown:
        err_console.print(f"[red]error:[/] unknown domain {unknown[0]!r}; known: {osworld.DOMAINS}")
        raise typer.Exit(2)
    store = Cache(cache)
    reports = {
        d: osworld.report(folder, cache=store)
        for d in domain or osworld.DOMAINS
        if (folder := osworld.default_dir(d)) is not None
    }
    if as_json:
        console.print_json(json.dumps(reports))
        return
    table = Table(title=f"OSWorld tasks on this desktop (download cache: {store.folder})")
    for col in ("domain", "tasks", "runnable", "unvalidated", "unsupported", "lack files"):
        table.add_column(col, justify="left" if col == "domain" else "right")
    for d, rep in reports.items():
        table.add_row(
            d,
            *map(str, (rep["total"], len(rep["runnable"]), len(rep["unvalidated"]))),
            *map(str, (len(rep["unsupported"]), len(rep["needs"]))),
        )
    console.print(table)
    if why:
        for d, rep in reports.items():
            for tid, reason in {**rep["unsupported"], **rep["unvalidated"]}.items():
                console.print(f"{d}/{tid}: {reason}", soft_wrap=True, markup=False)


@osworld_app.command("cache")
def osworld_cache(
    folder: Annotated[Path, typer.Argument(help="The cache folder to fill (created if absent)")],
    tasks: Annotated[
        list[Path] | None,
        typer.Option(
            "--tasks",
            help="A task JSON or a folder of them, searched recursively (repeatable) "
            "\\[default: every domain's examples]",
        ),
    ] = None,
) -> None:
    """Download every file the tasks name (their ``download`` steps and gold ``cloud_file``s)
    into FOLDER, keyed by URL; what is there already is skipped. Needs the internet."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from palaestra.envs.computer import osworld
    from palaestra.envs.computer.osworld_cache import Cache, fill, task_files, task_urls

    roots = tasks or [f for d in osworld.DOMAINS if (f := osworld.default_dir(d)) is not None]
    missing = [p for p in roots if not p.exists()]
    if missing or not roots:
        err_console.print(f"[red]error:[/] no task files at {missing or '(no default folder)'}")
        raise typer.Exit(2)
    urls: list[str] = []
    for path in task_files(roots):
        try:
            urls += task_urls(json.loads(path.read_text()))
        except (OSError, ValueError, AttributeError) as exc:
            err_console.print(f"[red]error:[/] {path} is not an OSWorld task file: {exc}")
            raise typer.Exit(2) from None
    urls = list(dict.fromkeys(urls))
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err_console
    ) as bar:
        job = bar.add_task("downloading", total=len(urls))

        def advance(url: str, outcome: str) -> None:
            bar.update(job, advance=1, description=outcome.split(":")[0])

        report = fill(Cache(folder), urls, progress=advance)
    for url, reason in report.failed.items():
        err_console.print(f"[red]failed:[/] {url}: {reason}", soft_wrap=True)
    console.print(
        f"{len(report.fetched)} fetched, {len(report.present)} already there, "
        f"{len(report.failed)} failed, of {len(urls)} files ({folder})"
    )
    if report.failed:
        raise typer.Exit(1)
