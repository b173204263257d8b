"""The bodies of ``palaestra regrade``, ``replay``, ``export`` and ``runs``: print and return an
exit code, so the CLI's functions stay declarations of options (``palaestra/cli/data.py``).

Each takes a run by its name or by the results folder of the evaluation that recorded it
(``summary.json`` names the run), so what ``palaestra eval`` printed is enough to go on."""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from palaestra import recording
from palaestra.data import episodes, export, regrade, replay
from palaestra.errors import NotFound


def default_runs_dir() -> Path:
    from palaestra.paths import home

    return home() / "runs"


def eval_run(folder: Path) -> str | None:
    """The run an evaluation's results folder recorded into: ``summary.json``'s ``run``, else
    the run of its first recorded episode (a run still going has no summary yet)."""
    summary = folder / "summary.json"
    if summary.is_file():
        run = json.loads(summary.read_text()).get("run")
        if run:
            return str(run)
    results = folder / "results.jsonl"
    if results.is_file():
        with open(results) as fh:
            for line in fh:
                try:
                    run = json.loads(line).get("run")
                except ValueError:
                    continue
                if run:
                    return str(run)
    return None


def is_eval_folder(target: str) -> bool:
    path = Path(target)
    return path.is_dir() and any((path / n).is_file() for n in ("summary.json", "results.jsonl"))


def resolve_run(target: str, runs_dir: Path) -> Path:
    """The folder of the run ``target`` names: a run's name, or an evaluation's results folder
    (the run it recorded); NotFound naming what exists (and a near miss) otherwise."""
    if is_eval_folder(target):
        run = eval_run(Path(target))
        if run is None:
            raise NotFound(
                f"the evaluation in {target} recorded no run (it ran with --no-record, or "
                "no episode finished yet)",
                run_id=target,
            )
        if not (runs_dir / run / "run.json").is_file():
            raise NotFound(
                f"the evaluation in {target} recorded run {run!r}, which is not under "
                f"{runs_dir}: pass the gateway's --runs-dir",
                run_id=run,
            )
        target = run
    try:
        return episodes.run_dir(runs_dir, target)
    except NotFound as exc:
        names = [p.parent.name for p in runs_dir.glob("*/run.json")]
        close = difflib.get_close_matches(target, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise NotFound(
            f"{exc.detail}{hint} (`palaestra runs` lists them; an eval's results folder works too)",
            run_id=target,
        ) from None


@dataclass(frozen=True)
class RunFilter:
    """Which runs ``palaestra runs`` lists: of this agent, of this suite, the newest ``limit``."""

    agent: str | None = None
    suite: str | None = None
    limit: int = 50

    def keep(self, tags: dict[str, Any]) -> bool:
        """Whether a run with these tags (its ``run.json``'s) is listed."""
        return not (
            (self.agent and tags.get("agent") != self.agent)
            or (self.suite and tags.get("suite") != self.suite)
        )


def list_runs(runs_dir: Path, where: RunFilter) -> list[dict[str, Any]]:
    """The runs under ``runs_dir``, newest first, with their tags and episode figures (read
    from the recordings: no gateway needed)."""
    out = []
    for meta in runs_dir.glob("*/run.json"):
        try:
            run = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        if not where.keep(run.get("tags") or {}):
            continue
        run["sessions"] = sum(1 for _ in meta.parent.glob("*/session.json"))
        out.append(run)
    out.sort(key=lambda r: -float(r.get("created") or 0))
    out = out[: where.limit]
    for run in out:
        eps = [
            e
            for d in sorted((runs_dir / run["run_id"]).glob("*/session.json"))
            for e in recording.episodes(d.parent)
        ]
        run["episodes"] = len(eps)
        run["success_rate"] = sum(e["success"] for e in eps) / len(eps) if eps else None
        run["mean_score"] = sum(e["score"] for e in eps) / len(eps) if eps else None
    return out


def run_runs(runs_dir: Path, console: Console, where: RunFilter, as_json: bool = False) -> int:
    rows = list_runs(runs_dir, where)
    if as_json:
        console.print_json(json.dumps(rows, default=str))
        return 0
    table = Table(title=f"runs in {runs_dir}")
    for col in ("run", "created", "agent", "suite", "sessions", "episodes", "success"):
        table.add_column(col)
    for r in rows:
        tags = r.get("tags") or {}
        rate = r["success_rate"]
        table.add_row(
            r["run_id"],
            time.strftime("%Y-%m-%d %H:%M", time.localtime(float(r.get("created") or 0))),
            str(tags.get("agent", "")),
            str(tags.get("suite", "")),
            str(r["sessions"]),
            str(r["episodes"]),
            f"{100 * rate:.1f}%" if rate is not None else "-",
        )
    console.print(table)
    if not rows:
        console.print(f"no runs under {runs_dir}")
    return 0


def run_regrade(run: str, runs_dir: Path, console: Console, as_json: bool = False) -> int:
    report = episodes.RunReport()
    rows = regrade.regrade(resolve_run(run, runs_dir), report=report)
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

    if is_eval_folder(target):
        path, key = resolve_run(target, runs_dir), ""
    else:
        run, _, key = target.partition("/")
        path = resolve_run(run, runs_dir)
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
    result = export.export(resolve_run(run, runs_dir), fmt, out, filters)
    for line in result.lines():
        console.print(line)
    console.print(f"families: {json.dumps(result.by_family)}; {result.seconds:.2f} s")
    return 0
