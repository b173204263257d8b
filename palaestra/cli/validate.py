"""``palaestra validate``: execution-validate a suite, or check it against its recorded run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from palaestra.cli._app import app, console, err_console


@app.command()
def validate(
    suite: Annotated[str, typer.Argument(help="Suite to validate (a registered or found one)")],
    adversaries: Annotated[
        bool, typer.Option(help="Play the family's adversaries too (each must fail)")
    ] = True,
    drop: Annotated[
        bool, typer.Option(help="Delete the task files that fail (suites on the suite path)")
    ] = True,
    report: Annotated[
        Path | None,
        typer.Option(help="Where to write the report \\[default: the suite's report.json]"),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Re-validate every candidate of a shipped suite and write its recorded run "
            "(what a stale-record test asks for)",
        ),
    ] = False,
    against_record: Annotated[
        bool,
        typer.Option(
            "--against-record",
            help="Re-validate every candidate of a shipped suite and fail where a verdict "
            "differs from its recorded run, or the record is stale (CI)",
        ),
    ] = False,
    sample: Annotated[
        int | None,
        typer.Option(
            help="With --against-record: re-validate only this many candidates, spread over the "
            "suite (a suite too slow to re-run whole in CI)",
            min=1,
        ),
    ] = None,
    parallel: Annotated[
        int | None,
        typer.Option(
            help="With --record/--against-record: tasks validated at once, each on its own env "
            "\\[default: the family's plan]",
            min=1,
        ),
    ] = None,
) -> None:
    """Execution-validate a suite as its family's plan says (oracle, do-nothing, mutants,
    adversaries, adversary search): print a table, drop the tasks that fail, write the report."""
    from palaestra import tasks as task_mod

    chosen = task_mod.get_suite(suite).tasks
    if sample is not None and not against_record:
        err_console.print(
            "[red]--sample checks a sample against the record: add --against-record[/]"
        )
        raise typer.Exit(2)
    if record or against_record:
        _recorded_run(suite, chosen, write=record, sample=sample, parallel=parallel)
        return
    results = _validated(chosen, adversaries)
    _print_table(suite, results)
    _write_report(suite, results, drop, report)


def _validated(chosen: list[Any], adversaries: bool) -> dict[str, dict[str, Any]]:
    """Each task's validation by id, each family's tasks by the validation service; a family
    without validation, or tasks its validation does not cover, exit 2."""
    from palaestra.family import family as family_of
    from palaestra.validation import validate_suite

    by_family: dict[str, list[Any]] = {}
    for t in chosen:
        by_family.setdefault(t.family, []).append(t)
    results: dict[str, dict[str, Any]] = {}
    for name, group in by_family.items():
        if not family_of(name).validation:
            err_console.print(f"[red]family {name!r} has no validation (Family.validation)[/]")
            raise typer.Exit(2)
        try:
            results.update(validate_suite(group, family=name, adversaries=adversaries)["tasks"])
        except ValueError as exc:  # tasks this family's validation does not cover
            err_console.print(f"[red]{name}: {exc}[/]")
            raise typer.Exit(2) from None
    return results


def _print_table(suite: str, results: dict[str, dict[str, Any]]) -> None:
    shown = sorted({a for r in results.values() for a in r.get("adversaries", {})})
    table = Table("task", "oracle", "noop", "mutants", *shown, "verdict", title=suite)
    for tid, r in sorted(results.items()):
        advs = r.get("adversaries", {})
        mutants = r.get("mutants", {})
        table.add_row(
            tid,
            " ".join(f"{x:g}" for x in r.get("oracle_scores", [])),
            "" if r.get("noop_score") is None else f"{r['noop_score']:g}",
            f"{sum(1 for v in mutants.values() if v < 1)}/{len(mutants)} fail",
            *[_adversary_cell(advs.get(a)) for a in shown],
            "[green]ok[/]" if r["validated"] else f"[red]{(r.get('reason') or '')[:60]}[/]",
        )
    console.print(table)


def _write_report(
    suite: str, results: dict[str, dict[str, Any]], drop: bool, report: Path | None
) -> None:
    """Drop the failed tasks' files (``drop``, a suite on the suite path) and write the
    validation into the report (the suite's ``report.json`` by default), keeping what else it
    holds."""
    from palaestra import tasks as task_mod

    failed = sorted(tid for tid, r in results.items() if not r["validated"])
    folder = task_mod.suite_folder(suite)
    dropping = drop and folder is not None
    if folder is not None and drop:
        for tid in failed:
            (folder / "tasks" / f"{tid}.json").unlink(missing_ok=True)
    out = report or (
        folder / "report.json" if folder is not None else Path(f"{suite}.validation.json")
    )
    previous = json.loads(out.read_text()) if out.exists() else {}
    previous["validation"] = {
        "total": len(results),
        "validated": len(results) - len(failed),
        "dropped": failed if dropping else [],
        "failed": failed,
        "tasks": results,
    }
    out.write_text(json.dumps(previous, indent=1, default=str))
    console.print(
        f"{len(results) - len(failed)}/{len(results)} validated; "
        f"{len(failed)} failed{' and dropped' if dropping and failed else ''}; "
        f"report: {out}"
    )


def _recorded_run(
    suite: str,
    shipped: list[Any],
    *,
    write: bool,
    sample: int | None = None,
    parallel: int | None = None,
) -> None:
    """A shipped suite's recorded validation, written anew or checked against a new run.
    A committed suite (its tasks carry their reports, as ``phone`` does) is checked by
    re-validating what it ships; it is re-made by its own module."""
    from palaestra import validation
    from palaestra.verifiers.validation import RECORDS

    rec = RECORDS.get(suite)
    if rec is None and not write and shipped and all(t.validation for t in shipped):
        _committed_run(suite, shipped)
        return
    if rec is None:
        err_console.print(
            f"[red]suite {suite!r} has no recorded validation; recorded: {sorted(RECORDS)}[/]"
        )
        raise typer.Exit(2)
    with console.status(f"validating every candidate of {suite} ..."):
        run = validation.revalidate(rec, sample=None if write else sample, parallel=parallel)
    if write:
        rec.write(run)
        console.print(
            f"{suite}: {run['validated']}/{run['total']} validated in {run['seconds']} s; "
            f"recorded in {rec.path.name}"
        )
        return
    moved = rec.disagreements(run)
    if moved:  # a second look: a moved verdict moves twice, a browser or desktop hiccup does not
        again = {m.split(":", 1)[0] for m in moved}
        console.print(f"{suite}: validating {sorted(again)} once more")
        tasks = [t for t in rec.tasks() if t.id in again]
        run["tasks"].update(
            validation.validate_suite(tasks, family=rec.family, record=rec)["tasks"]
        )
        moved = rec.disagreements(run)
    problems = [*validation.stale(rec), *moved]
    for problem in problems:
        console.print(f"[red]{suite}: {problem}[/]")
    console.print(
        f"{suite}: {run['validated']}/{run['total']} validated in {run['seconds']} s; "
        + ("the record stands" if not problems else f"re-record: {rec.command}")
    )
    if problems:
        raise typer.Exit(1)


def _committed_run(suite: str, shipped: list[Any]) -> None:
    """Check a committed suite (its tasks carry their reports) by validating what it ships."""
    from palaestra import validation

    with console.status(f"validating every task of {suite} ..."):
        problems = validation.revalidate_committed(shipped)
    if problems:  # a second look: a moved verdict fails twice, a browser hiccup does not
        again = {p.split(":", 1)[0] for p in problems}
        console.print(f"{suite}: validating {sorted(again)} once more")
        problems = validation.revalidate_committed([t for t in shipped if t.id in again])
    for problem in problems:
        console.print(f"[red]{suite}: {problem}[/]")
    console.print(f"{suite}: {len(shipped) - len(problems)}/{len(shipped)} still validate")
    if problems:
        raise typer.Exit(1)


def _adversary_cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return ""
    if "actions" in result:
        return f"[red]WON {result.get('reward', 0):.2f}[/]"
    if "score" not in result:  # it could not play, or it only did the task (see its error)
        abstained = str(result.get("error", "")).startswith("AdversaryAbstained")
        return "abstained" if abstained else "[yellow]error[/]"
    return f"{result.get('reward', 0):.2f}"
