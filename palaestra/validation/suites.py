"""Suites validated with the one runner: a family's tasks, a shipped record run again.

:func:`validate_suite` is what ``palaestra validate SUITE`` and the benchmarks call: a family's
tasks (its plan's candidates by default), each validated by :func:`~.runner.validate_task`,
``parallel`` at once with an env per thread, reported in the shape a
:class:`~palaestra.verifiers.validation.ValidationRecord` records. :func:`revalidate` and
:func:`record` re-run a shipped record's candidates with today's code; :func:`revalidate_committed`
re-checks a committed suite whose tasks carry their own reports (the phone suite).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from palaestra.tasks import Task
from palaestra.validation.records import code_digest
from palaestra.validation.runner import plan_of, validate_task
from palaestra.verifiers.validation import ValidationPlan, ValidationRecord


def validate_suite(
    tasks: list[Task] | None = None,
    *,
    family: str | None = None,
    adversaries: bool = True,
    repeats: int | None = None,
    search: int | None = None,
    parallel: int | None = None,
    record: ValidationRecord | None = None,
) -> dict[str, Any]:
    """Execution-validate ``tasks`` (one family's; its plan's candidates when None), with or
    without the adversaries; per task the report and its key, under the suite name of
    ``record`` (the plan's record for these tasks when None)."""
    if tasks is None:
        if family is None:
            raise ValueError("name the family whose tasks to validate")
        tasks = plan_of(family).candidates()
    names = {t.family for t in tasks} | ({family} if family else set())
    if len(names) > 1:
        raise ValueError(f"validate one family's tasks at a time, not {sorted(names)}")
    if not names:
        return _summary(record.suite if record else "", 0.0, {})
    plan = plan_of(names.pop())
    plan.check(tasks)
    rec = record or plan.record(tasks)
    started = time.perf_counter()

    def check(task: Task, env: Any) -> dict[str, Any]:
        report = validate_task(
            task, env=env, adversaries=adversaries, repeats=repeats, search=search
        )
        return {**report.to_json(), "key": rec.key(task)}

    reports = _each(plan, tasks, check, parallel or plan.parallel)
    return _summary(rec.suite, time.perf_counter() - started, reports)


def _each(
    plan: ValidationPlan,
    tasks: list[Task],
    check: Callable[[Task, Any], dict[str, Any]],
    parallel: int,
) -> dict[str, dict[str, Any]]:
    """``check(task, env)`` for every task, ``parallel`` at once (in this thread when 1),
    each thread with the env its plan opens, all closed at the end."""
    local = threading.local()
    lock = threading.Lock()
    opened: list[Any] = []

    def env() -> Any:
        if not hasattr(local, "env"):
            local.env = plan.open()
            with lock:
                opened.append(local.env)
        return local.env

    try:
        if parallel <= 1:
            return {t.id: check(t, env()) for t in tasks}
        with ThreadPoolExecutor(parallel, thread_name_prefix="validate") as pool:
            done = pool.map(lambda t: check(t, env()), tasks)
            return {t.id: report for t, report in zip(tasks, done, strict=True)}
    finally:
        for each in opened:
            if each is not None:
                each.close()


def _summary(suite: str, seconds: float, reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ok = sum(1 for r in reports.values() if r["validated"])
    return {
        "suite": suite,
        "total": len(reports),
        "validated": ok,
        "dropped": len(reports) - ok,
        "seconds": round(seconds, 1),
        "tasks": reports,
    }


def revalidate(
    record: ValidationRecord, sample: int | None = None, parallel: int | None = None
) -> dict[str, Any]:
    """Every candidate of a shipped record validated again with today's code: the run
    :meth:`ValidationRecord.write` records, with the digest of the code that decided it.
    ``sample``: only that many candidates, spread evenly over the list (a check against the
    record where a full run is too long for CI; never a record). ``parallel``: tasks at once,
    each with its own env (the plan's when None)."""
    code = code_digest(record.family)  # before the run: an edit during it is not validated
    tasks = record.tasks()
    if sample is not None and 0 < sample < len(tasks):
        tasks = [tasks[i * len(tasks) // sample] for i in range(sample)]
    run = validate_suite(tasks, family=record.family, record=record, parallel=parallel)
    return {**run, "code": code}


def record(rec: ValidationRecord) -> dict[str, Any]:
    """Validate every candidate and write the run (what ``rec.command`` does)."""
    return rec.write(revalidate(rec))


def revalidate_committed(tasks: list[Task]) -> list[str]:
    """A committed suite's tasks (each carrying its report) validated again with today's code:
    where one no longer validates."""
    by_family: dict[str, list[Task]] = {}
    for task in tasks:
        by_family.setdefault(task.family, []).append(task)
    problems = []
    for name, group in by_family.items():
        reports = validate_suite(group, family=name)["tasks"]
        problems += [
            f"{tid}: no longer validates ({r.get('reason')})"
            for tid, r in sorted(reports.items())
            if not r["validated"]
        ]
    return problems
