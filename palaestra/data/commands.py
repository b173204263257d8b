"""The bodies of ``palaestra regrade``, ``replay`` and ``export``: print and return an exit
code, so the CLI's functions stay declarations of options (``palaestra/cli.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from rich.console import Console
from rich.table import Table

from palaestra.data import episodes, export, regrade, replay


def default_runs_dir() -> Path:
    from palaestra.paths import home

    return home() / "runs"


def run_regrade(run: str, runs_dir: Path, console: Console, as_json: bool = False) -> int:
    report = episodes.RunReport()
    rows = regrade.regrade(episodes.run_dir(runs_dir, run), report=report)
    result = regrade.summary(rows)
    result["notes"] = report.lines()
    if as_json:
        console.print_json(json.dumps(result))
        return 0
    table = Table(title=f"changed verdicts in run {run}")
    for col in ("episode", "task", "was", "now"):
        table.add_column(col)
    for r in rows:
        if r.changed:
            table.add_row(
                r.episode,
                str(r.task),
                f"{r.old_score} ({'pass' if r.old_success else 'fail'})",
                f"{r.score} ({'pass' if r.success else 'fail'})",
            )
    console.print(table)
    console.print(
        f"{result['regraded']} of {result['episodes']} episode(s) re-graded, "
        f"{len(result['changed'])} verdict(s) changed"
    )
    for row in result["not_regraded"][:20]:
        console.print(f"[yellow]not re-graded[/] {row['episode']}: {row['why']}")
    for note in report.lines():
        console.print(f"[yellow]note[/] {note}")
    return 0


def run_replay(
    target: str,
    runs_dir: Path,
    console: Console,
    gateway: Callable[[], AbstractContextManager[str]],
    api_key: str | None = None,
    repeat: int = 1,
) -> int:
    """``RUN/SESSION[/EPISODE]`` (or a whole ``RUN``: every finished episode) replayed
    ``repeat`` times on the gateway ``gateway()`` gives (the CLI's, or one it starts); prints
    each replay and a determinism report per family; 0 when every replay matched."""
    from palaestra.client import Client

    run, _, key = target.partition("/")
    path = episodes.run_dir(runs_dir, run)
    chosen = [episodes.find(path, key)] if key else list(episodes.read_run(path))
    by_family: dict[str, list[replay.Replayed]] = {}
    with gateway() as url:
        client = Client(url, api_key)
        for ep in chosen:
            note = replay.version_note(ep)
            if note:
                console.print(f"[yellow]version[/] {ep.key}: {note}")
            for _ in range(repeat):
                r = replay.replay(ep, client)
                by_family.setdefault(ep.family, []).append(r)
                where = "no divergence" if r.deterministic else f"diverged at step {r.diverged_at}"
                extra = f"; screenshots differ at {r.image_diffs}" if r.image_diffs else ""
                console.print(f"{r.episode} ({ep.family}): {where} {r.why or ''}{extra}")
    if repeat > 1 or len(chosen) > 1:
        report = {fam: replay.determinism(rs) for fam, rs in by_family.items()}
        console.print_json(json.dumps(report))
    return 0 if all(r.deterministic for rs in by_family.values() for r in rs) else 1


def run_export(
    run: str,
    fmt: str,
    out: Path,
    runs_dir: Path,
    console: Console,
    filters: export.Filters,
) -> int:
    result = export.export(episodes.run_dir(runs_dir, run), fmt, out, filters)
    for line in result.lines():
        console.print(line)
    console.print(f"families: {json.dumps(result.by_family)}; {result.seconds:.2f} s")
    return 0
