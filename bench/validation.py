"""Execution validation with adversaries vs without: seconds per task, their ratio, tasks/minute.

Playing every adversary of a family on every task is the price of trusting its verifiers; this
benchmark says what it costs. For synthesized suites (``web``, ``mobile``) it runs the real
pipeline twice in this process over the same candidates (same domains, variants and seed):
once with the adversaries, once without, and reports seconds per validated task of each, their
ratio, and validated tasks per minute with adversaries (the target: at least
:data:`TARGET_PER_MINUTE` on 2 cores).

Wall time is only as good as the machine is idle, so each run's CPU time (this process and its
descendants: Chromium) is measured too, and tasks per minute on 2 dedicated cores is estimated
from it (CPU seconds spread over 2 cores).

Other families plug in through their descriptor: a family whose ``Family.validation`` names a
validation plan is timed the same way, by the validation service, on ``tasks`` of its plan's
candidates (:func:`descriptor_run`). Families register a faster or more specific runner in
:data:`RUNNERS`.

Adversary search (:mod:`palaestra.verifiers.search`) has its own measurement,
:func:`search_main`: per shipped suite, a sample of its tasks validated with the family's
search budget and without (search 0), in this process, one after the other: seconds per task
of each, their ratio (wall and CPU), the search's best reward and the tasks it beat, and the
estimated cost of re-validating every shipped suite with and without it (each suite's seconds
per task times its candidates).

Run: ``palaestra bench validation`` or ``python -m palaestra.bench.validation``;
``python -m palaestra.bench.validation search [TASKS]`` for the search's cost.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palaestra.bench import harness

TARGET_PER_MINUTE = 40.0
CORES = 2


def _tree(pid: int) -> list[int]:
    kids = harness.children(pid)
    return [k for kid in kids for k in (kid, *_tree(kid))]


def tree_cpu() -> dict[int, float]:
    """CPU seconds so far of this process's live descendants (Chromium and its helpers), by
    pid, and of this process and its waited-for children under pid 0."""
    out = {0: harness.cpu_s()}
    for pid in _tree(os.getpid()):
        try:
            out[pid] = harness.cpu_s(pid) - out[0]
        except (OSError, IndexError):
            continue
    return out


def cpu_since(before: dict[int, float]) -> float:
    """CPU seconds the process tree spent since ``before`` (a process that ended in between
    is not counted: an underestimate, the same for both runs)."""
    now = tree_cpu()
    return sum(v - before.get(pid, 0.0) for pid, v in now.items())


#: a family's runner: (adversaries on?, tasks wanted) -> {"tasks": n, "seconds": s, ...}
Runner = Callable[[bool, int], dict[str, Any]]


def synth_run(family: str, domains: list[str] | None = None, variants: int = 1) -> Runner:
    """A synthesized suite of ``family`` (web or mobile), made and validated by the pipeline."""

    def run(adversaries: bool, tasks: int) -> dict[str, Any]:
        from palaestra.synth_apps.spec import domain_names
        from palaestra.synthesis.pipeline import synthesize

        with tempfile.TemporaryDirectory(prefix="palaestra-bench-validation-") as out:
            report = synthesize(
                domains or domain_names(),
                variants=variants,
                tasks=tasks,
                out=Path(out),
                parallel=2,
                family=family,
                adversaries=adversaries,
            )
        beaten = {n: r["won"] for n, r in report.adversaries.items() if r["won"]}
        spent = sum(t["seconds"] for t in report.tasks.values()) or 1.0
        return {
            "adversary_share": sum(t["adversary_seconds"] for t in report.tasks.values()) / spent,
            "tasks": report.validated,
            "seconds": report.seconds,
            "dropped": sum(report.dropped.values()),
            "beaten": beaten,
            "max_reward_kept": max(
                (r["max_reward_kept"] for r in report.adversaries.values()), default=0.0
            ),
        }

    return run


def descriptor_run(family: str) -> Runner:
    """Any family through its validation plan (``Family.validation``) on its first ``tasks``
    candidates."""

    def run(adversaries: bool, tasks: int) -> dict[str, Any]:
        from palaestra.validation import plan_of, validate_suite

        chosen = plan_of(family).candidates()[:tasks]
        started = time.perf_counter()
        report = validate_suite(chosen, family=family, adversaries=adversaries)
        return {
            "tasks": int(report.get("validated", 0)),
            "seconds": round(time.perf_counter() - started, 2),
            "dropped": int(report.get("dropped", 0)),
        }

    return run


#: families with a runner of their own; any other is run through its descriptor
RUNNERS: dict[str, Runner] = {"web": synth_run("web"), "mobile": synth_run("mobile")}


def _timed(runner: Runner, adversaries: bool, tasks: int) -> dict[str, Any]:
    before = tree_cpu()
    out = runner(adversaries, tasks)
    out["cpu_seconds"] = round(cpu_since(before), 1)
    return out


def measure(family: str, tasks: int) -> dict[str, Any]:
    runner = RUNNERS.get(family) or descriptor_run(family)
    without = _timed(runner, False, tasks)
    with_ = _timed(runner, True, tasks)
    per = {
        k: (r["seconds"] / r["tasks"] if r["tasks"] else None)
        for k, r in (("without", without), ("with", with_))
    }
    return {
        "family": family,
        "without": without,
        "with": with_,
        "seconds_per_task": per,
        "ratio": (per["with"] / per["without"]) if per["with"] and per["without"] else None,
        "cpu_ratio": (
            (with_["cpu_seconds"] / with_["tasks"]) / (without["cpu_seconds"] / without["tasks"])
            if with_["tasks"] and without["tasks"] and without["cpu_seconds"]
            else None
        ),
        "tasks_per_minute": 60 * with_["tasks"] / with_["seconds"] if with_["seconds"] else 0.0,
        # what 2 dedicated cores would do: the CPU the run took, spread over them (the wall
        # time is only as good as the machine is idle)
        "tasks_per_minute_2_cores": (
            60 * with_["tasks"] / (with_["cpu_seconds"] / CORES) if with_["cpu_seconds"] else 0.0
        ),
    }


def main(families: list[str] | None = None, tasks: int = 40) -> list[dict[str, Any]]:
    results = [measure(f, tasks) for f in families or ["web"]]
    rows = []
    for r in results:
        per = r["seconds_per_task"]
        rows.append(
            (
                r["family"],
                f"{per['without']:.2f} s" if per["without"] else "n/a",
                f"{per['with']:.2f} s" if per["with"] else "n/a",
                f"{harness.ratio(per['with'], per['without'])} wall, {r['cpu_ratio']:.2f}x CPU"
                if r["cpu_ratio"]
                else "n/a",
                f"{r['tasks_per_minute']:.1f} wall, "
                f"{r['tasks_per_minute_2_cores']:.1f} by CPU on {CORES} cores "
                f"(target {TARGET_PER_MINUTE:g})",
                f"{r['with']['tasks']} kept, {r['with']['dropped']} dropped "
                f"(without adversaries: {r['without']['dropped']}); adversaries "
                f"{r['with'].get('adversary_share', 0):.0%} of validation time",
            )
        )
    harness.print_table(
        f"Execution validation with adversaries vs without ({tasks} tasks per family, 2 threads)",
        ("family", "s/task without", "s/task with", "ratio", "tasks/minute with", "outcome"),
        rows,
    )
    return results


# ----- the adversary search's cost ----------------------------------------------------------
#: a suite's sample validated with a search budget: (tasks, budget) -> per task reports
SearchRunner = Callable[[int, int], dict[str, dict[str, Any]]]


def _usersim(tasks: int, budget: int) -> dict[str, dict[str, Any]]:
    from palaestra.envs.usersim import suites
    from palaestra.envs.usersim.env import UserSimEnv
    from palaestra.validation import validate_task

    env = UserSimEnv()
    chosen = suites.all_tasks()[::8][:tasks]  # every domain, refusals and grants
    return {t.id: validate_task(t, env=env, search=budget).to_json() for t in chosen}


def _tau2(domain: str) -> SearchRunner:
    def run(tasks: int, budget: int) -> dict[str, dict[str, Any]]:
        from palaestra.envs.tau2 import suites
        from palaestra.envs.tau2.env import Tau2Env
        from palaestra.validation import validate_task

        env = Tau2Env()
        chosen = suites.tasks(domain)[:tasks]
        return {t.id: validate_task(t, env=env, search=budget).to_json() for t in chosen}

    return run


def _phone(tasks: int, budget: int) -> dict[str, dict[str, Any]]:
    from palaestra.envs.mobile import suites
    from palaestra.validation import validate_suite

    chosen = suites.suite().tasks[::3][:tasks]
    return validate_suite(chosen, parallel=1, search=budget)["tasks"]


def _computer(tasks: int, budget: int) -> dict[str, dict[str, Any]]:
    from palaestra.envs.computer.env import ComputerEnv
    from palaestra.envs.computer.suites import all_tasks
    from palaestra.validation import validate_task

    env = ComputerEnv()
    try:
        chosen = all_tasks()[::5][:tasks]
        return {t.id: validate_task(t, env=env, search=budget).to_json() for t in chosen}
    finally:
        env.close()


def _cad(tasks: int, budget: int) -> dict[str, dict[str, Any]]:
    from palaestra.envs.cad.suites import all_tasks
    from palaestra.validation import validate_task

    chosen = all_tasks()[::16][:tasks]
    return {t.id: validate_task(t, search=budget).to_json() for t in chosen}


def _budgets() -> dict[str, int]:
    from palaestra.envs.cad import strategies as cad
    from palaestra.envs.computer import strategies as computer
    from palaestra.envs.runtimes.dialogue import search as usersim
    from palaestra.envs.tau2.validation import SEARCH_BUDGET as TAU2_BUDGET
    from palaestra.synth_apps import strategies as synth

    return {
        "usersim": usersim.BUDGET,
        "tau2-retail": TAU2_BUDGET,
        "tau2-telecom": TAU2_BUDGET,
        "phone": synth.BUDGET,
        "computer-basic": computer.BUDGET,
        "cad-parts": cad.BUDGET,
    }


#: suite -> (its runner, how many candidates a full re-validation plays)
SEARCH_SUITES: dict[str, tuple[SearchRunner, int]] = {
    "usersim": (_usersim, 160),
    "tau2-retail": (_tau2("retail"), 114),
    "tau2-telecom": (_tau2("telecom"), 114),
    "phone": (_phone, 30),
    "computer-basic": (_computer, 50),
    "cad-parts": (_cad, 160),
}


def search_cost(suite: str, tasks: int) -> dict[str, Any]:
    """One suite's sample, validated without the search then with the family's budget."""
    runner, _ = SEARCH_SUITES[suite]
    budget = _budgets()[suite]
    out: dict[str, Any] = {"suite": suite, "budget": budget}
    runner(1, 0)  # warm up (imports, a browser, a kernel): neither measured run pays for it
    for name, b in (("without", 0), ("with", budget)):
        before, started = tree_cpu(), time.perf_counter()
        reports = runner(tasks, b)
        out[name] = {
            "tasks": len(reports),
            "seconds": time.perf_counter() - started,
            "cpu_seconds": cpu_since(before),
            "validated": sum(1 for r in reports.values() if r["validated"]),
        }
        if b:
            searched = [r["search"] for r in reports.values() if r.get("search")]
            out["best_reward"] = max(
                (s["best"]["reward"] for s in searched if "best" in s), default=0.0
            )
            out["beaten"] = sorted(t for t, r in reports.items() if r.get("search", {}).get("won"))
            out["errors"] = sum(len(s["errors"]) for s in searched)
    return out


def search_main(suites: list[str] | None = None, tasks: int = 6) -> list[dict[str, Any]]:
    results = [search_cost(s, tasks) for s in suites or list(SEARCH_SUITES)]
    rows = []
    full = {"without": 0.0, "with": 0.0}
    for r in results:
        per = {k: r[k]["seconds"] / max(1, r[k]["tasks"]) for k in ("without", "with")}
        cpu = {k: r[k]["cpu_seconds"] / max(1, r[k]["tasks"]) for k in ("without", "with")}
        candidates = SEARCH_SUITES[r["suite"]][1]
        for k in full:
            full[k] += per[k] * candidates
        rows.append(
            (
                r["suite"],
                str(r["budget"]),
                f"{per['without']:.2f} s",
                f"{per['with']:.2f} s",
                f"{harness.ratio(per['with'], per['without'])} wall, "
                f"{cpu['with'] / cpu['without']:.2f}x CPU"
                if cpu["without"]
                else harness.ratio(per["with"], per["without"]),
                f"best reward {r['best_reward']:.2f}, beaten {len(r['beaten'])} "
                f"{r['beaten'][:3]}, errors {r['errors']}",
            )
        )
    harness.print_table(
        f"Validation with adversary search vs without ({tasks} tasks per suite)",
        ("suite", "budget", "s/task without", "s/task with", "ratio", "search found"),
        rows,
    )
    print(
        f"a full re-validation of these suites, estimated: {full['without'] / 60:.1f} min without "
        f"the search, {full['with'] / 60:.1f} min with it "
        f"({harness.ratio(full['with'], full['without'])})"
    )
    return results


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["search"]:
        search_main(tasks=int(sys.argv[2]) if len(sys.argv) > 2 else 6)
    else:
        main()
