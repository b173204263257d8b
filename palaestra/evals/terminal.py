"""What ``palaestra eval`` shows in a terminal: the live progress bar (done/total, success rate,
episodes per minute, errors, in flight), the summary tables and the comparison of two runs.

The command itself (``palaestra/cli/eval.py``) only parses options and starts a local gateway when
``--url`` is absent; everything it prints is built here from the runner's events and summary.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from palaestra.errors import InvalidRequest
from palaestra.evals import report, stats
from palaestra.evals.config import EvalConfig, EvalSummary
from palaestra.evals.runner import ProgressEvent, run_eval
from palaestra.evals.sessions import SessionFactory
from palaestra.evals.store import read_results


def targets(given: list[str]) -> tuple[str, list[str]]:
    """``["miniwob"]`` or ``["miniwob/click-button", "miniwob/enter-text"]`` -> (suite, ids)."""
    if not given:
        raise InvalidRequest("name a suite (SUITE) or tasks (SUITE/TASK ...)", field="suite")
    suites = {t.split("/", 1)[0] for t in given}
    if len(suites) != 1:
        raise InvalidRequest(
            f"one suite per evaluation, got {sorted(suites)}: run one per suite", field="suite"
        )
    ids = [t.split("/", 1)[1] for t in given if "/" in t]
    if ids and len(ids) != len(given):
        raise InvalidRequest("give either SUITE or SUITE/TASK ..., not both", field="suite")
    return suites.pop(), ids


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; values are JSON when they parse (numbers, booleans), else text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"an agent option is key=value, got {pair!r}", field="option")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run_with_progress(
    config: EvalConfig,
    console: Console,
    cancel: threading.Event | None = None,
    sessions: SessionFactory | None = None,
) -> EvalSummary:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[figures]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        tid = bar.add_task(f"{config.agent} on {config.suite}", total=None, figures="")

        def show(e: ProgressEvent) -> None:
            rate = f"{100 * e.succeeded / e.scored:.0f}%" if e.scored else "-"
            figures = (
                f"success {rate} | {e.episodes_per_min:.1f} ep/min | "
                f"errors {e.errors} | in flight {e.in_flight}"
            )
            bar.update(tid, total=e.total, completed=e.done, figures=figures)

        return run_eval(config, progress=show, cancel=cancel, sessions=sessions)


def print_summary(summary: EvalSummary, console: Console) -> None:
    table = Table(title=f"{summary.agent} on {summary.suite}", show_header=False)
    for label, value in report.headline(summary):
        table.add_row(label, value)
    console.print(table)
    print_errors(summary, console)
    for by in ("family", "kind", "difficulty"):
        rows = summary.tables.get(by, {})
        if len(rows) < 2:
            continue
        t = Table(by, "n", "success", "95% CI", "mean score", title=f"by {by}")
        for value, row in rows.items():
            lo, hi = row["ci95"]
            t.add_row(
                value,
                str(row["n"]),
                f"{100 * row['success_rate']:.1f}%",
                f"[{100 * lo:.0f}%, {100 * hi:.0f}%]",
                f"{row['mean_score']:.3f}",
            )
        console.print(t)
    if summary.out:
        console.print(f"results, summary.json and report.md in {summary.out}")
    if summary.run:
        console.print(
            f"run [bold]{summary.run}[/]: `palaestra runs`, `palaestra export {summary.run}`, "
            f"the dashboard's viewer (/dashboard/runs/{summary.run}/...)"
        )


def print_errors(summary: EvalSummary, console: Console) -> None:
    """The first distinct errors, each with its short traceback: why a run errored, where a
    person looks first (results.jsonl and report.md hold them all)."""
    if not summary.errors:
        return
    console.print(
        f"[red bold]{summary.errors} episode(s) errored[/] (not counted as failures; "
        "rerun to replay them):"
    )
    for ex in summary.error_examples:
        more = f" and {ex['count'] - 1} more like it" if ex["count"] > 1 else ""
        console.print(
            f"[red]{ex['kind']} error[/] in {ex['task']} seed {ex['seed']} #{ex['attempt']}{more}:"
        )
        console.print(ex["traceback"] or ex["error"] or "", markup=False, highlight=False)


def compare_runs(a: Path, b: Path, console: Console, out: Path | None = None) -> dict[str, Any]:
    """``palaestra eval compare A B``: paired differences of two results folders (refused,
    saying why, when no episode is paired)."""
    ra, rb = read_results(a), read_results(b)
    result = stats.compare(ra, rb)
    text = report.compare_markdown(result, str(a), str(b))
    if out is not None:
        Path(out).write_text(text)
    t = Table("task", "n", "A", "B", "B - A", title=f"{b} vs {a}")
    for task, row in sorted(result["per_task"].items(), key=lambda kv: kv[1]["diff"]):
        t.add_row(
            task, str(row["n"]), f"{100 * row['a']:.0f}%", f"{100 * row['b']:.0f}%",
            f"{row['diff']:+.2f}",
        )  # fmt: skip
    console.print(t)
    console.print(
        f"paired episodes {result['pairs']}: success {100 * result['success_a']:.1f}% -> "
        f"{100 * result['success_b']:.1f}% (only A {result['only_a']}, only B "
        f"{result['only_b']}; exact McNemar p = {result['mcnemar_p']:.4g}); mean score "
        f"difference {result['mean_score_diff']:+.3f} (paired permutation p = "
        f"{result['score_permutation_p']:.4g})"
    )
    return result
