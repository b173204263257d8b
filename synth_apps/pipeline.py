"""Execution validation of synthesized tasks (web and mobile): each task's oracle, do-nothing
run, mutants and adversaries played on an env of its family (:func:`validate_task`), and the
families' ``validate_suite`` over task files (:func:`validate_suite`).

Making suites (generating candidates and keeping those that validate) is the synthesis service
above the families, :mod:`palaestra.synthesis.pipeline`, which calls :func:`validate_task` on
the envs of an :class:`EnvPool`.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from palaestra import registry
from palaestra.family import family as family_of
from palaestra.policies import GiveUpPolicy, Policy, run_episode
from palaestra.synth_apps import data, strategies
from palaestra.synth_apps.adversaries import IDLE, STRATEGIES
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.generate import Generated
from palaestra.tasks import Task
from palaestra.verifiers.app_state import mutated, visits_path
from palaestra.verifiers.validation import Run, ValidationReport, digest, validate

#: the env each family's tasks run on, and what validation observes of it
ENVS = {
    "web": ("palaestra/web-v0", ("axtree", "url", "goal", "chat")),
    "mobile": ("palaestra/mobile-v0", ("ui_elements", "foreground_app", "goal", "chat")),
}


class EnvPool:
    """One env of a family per validating thread, on this process's Chromium, made through
    the registry (no screenshots: the policies read the tree or the element list)."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.local = threading.local()
        self.lock = threading.Lock()
        self.envs: list[Any] = []

    def get(self) -> Any:
        if not hasattr(self.local, "env"):
            env_id, observe = ENVS[self.family]
            self.local.env = registry.make(env_id, observe=observe)
            with self.lock:
                self.envs.append(self.local.env)
        return self.local.env

    def close(self) -> None:
        for env in self.envs:
            env.close()


def validate_web(tasks: list[Task] | None = None, *, adversaries: bool = True) -> dict[str, Any]:
    """The web family's ``validate_suite`` (``Family.validation``): its synthesized tasks."""
    return validate_suite(tasks, adversaries=adversaries, family="web")


def validate_mobile(tasks: list[Task] | None = None, *, adversaries: bool = True) -> dict[str, Any]:
    """The mobile family's ``validate_suite`` (``Family.validation``): its synthesized tasks."""
    return validate_suite(tasks, adversaries=adversaries, family="mobile")


def validate_suite(
    tasks: list[Task] | None = None,
    *,
    adversaries: bool = True,
    parallel: int = 2,
    family: str | None = None,
    search: int = strategies.BUDGET,
) -> dict[str, Any]:
    """Execution-validate synthesized tasks again, from their files (``Family.validation`` of
    the web and mobile families; ``palaestra validate SUITE`` calls it): each task's oracle,
    do-nothing run, its mutants (kept in its validation report) and every adversary of its
    family, then ``search`` episodes of adversary search. ``tasks`` default to every
    synthesized task of the suites on the suite path. The
    report has the shape ``ValidationRecord.run`` builds (per task: the validation report)."""
    from palaestra.tasks import get_suite, suite_names

    if tasks is None:
        tasks = [
            t
            for name in suite_names()
            for t in get_suite(name).tasks
            if t.setup.get("driver") == "synth" and family in (None, t.family)
        ]
    foreign = [t.id for t in tasks if t.setup.get("driver") != "synth"]
    if foreign:  # MiniWoB's verifier is MiniWoB's own; others are their family's to validate
        raise ValueError(
            f"only synthesized tasks (setup.driver 'synth') are validated here, not {foreign[:5]}"
        )
    started = time.perf_counter()
    reports: dict[str, dict[str, Any]] = {}
    by_family: dict[str, list[Task]] = {}
    for task in tasks:
        by_family.setdefault(task.family, []).append(task)
    for family, chosen in by_family.items():
        envs = EnvPool(family)

        def check(task: Task, envs: EnvPool = envs) -> tuple[Task, ValidationReport]:
            mutations = list((task.validation or {}).get("mutations", []))
            fresh = task.model_copy(update={"validation": None})
            return task, validate_task(
                envs.get(), Generated(fresh, mutations), adversaries=adversaries, search=search
            )

        try:
            with ThreadPoolExecutor(max(1, parallel), thread_name_prefix="validate") as pool:
                for task, result in pool.map(check, chosen):
                    reports[task.id] = {**result.to_json(), "key": digest(task.verifier)}
        finally:
            envs.close()
    ok = sum(1 for r in reports.values() if r["validated"])
    return {
        "suite": ",".join(sorted({str(t.metadata.get("app", "")) for t in tasks})) or "synth",
        "total": len(tasks),
        "validated": ok,
        "dropped": len(tasks) - ok,
        "seconds": round(time.perf_counter() - started, 1),
        "tasks": reports,
    }


class AdversaryAbstained(Exception):
    """An adversary whose episode proves nothing about the verifier (see validate_task)."""


def database_digest(db: Path) -> str:
    """A digest of every table of an app database (two end states compared)."""
    with data.opened(db, readonly=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        dumped = [
            [t, [list(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY id")]]
            for t in sorted(tables)
        ]
    return digest(dumped)


def _leaves(spec: dict[str, Any]) -> list[dict[str, Any]]:
    kids = spec.get("checks")
    if not kids:
        return [spec]
    return [leaf for kid in kids for leaf in _leaves(kid.get("check", kid))]


def validate_task(
    env: Any,
    made: Generated,
    repeats: int = 3,
    adversaries: bool = True,
    search: int = strategies.BUDGET,
) -> ValidationReport:
    """Execution-validate one generated task on an env of its family in this process: the
    family's ``oracle`` policy (which must never make an action fail), its ``noop`` policy,
    which does nothing and says it is finished at once, the mutants, and (``adversaries``)
    every adversary of the family, played with ``strict=False`` (an action the env refuses is
    their loss, not a broken run), then (with the adversaries) ``search`` episodes of adversary
    search over :mod:`palaestra.synth_apps.strategies` (0: none)."""
    task = made.task
    policies = family_of(task.family)
    folder = Path(tempfile.mkdtemp(prefix="palaestra-validate-"))
    seed_db = data.template(spec_for(task.setup["app"]), task.setup.get("data_seed", 0))
    runs = 0
    reference: list[str] = []  # the digest of the oracle's end database
    idle: list[Run] = []  # the do-nothing run
    #: a write task's verdict reads the database only (its chat check is the feasible gate)
    writes = not any(c["kind"] in ("answer", "infeasible") for c in _leaves(task.verifier))

    def run(kind: str | Policy) -> Run:
        nonlocal runs
        runs += 1
        if isinstance(kind, str) and idle and kind in STRATEGIES and STRATEGIES[kind](task) == IDLE:
            return idle[0]  # nothing to try on this task: its episode is the do-nothing one
        if not isinstance(kind, str):  # a strategy of the adversary search
            episode = run_episode(env, kind, task, seed=0, strict=False)
            kind = "search"
        elif kind == "oracle":
            episode = run_episode(env, policies.policy("oracle"), task, seed=0, strict=True)
        elif kind == "noop":  # do nothing, then say "finished"
            episode = run_episode(env, policies.policy("noop"), task, seed=0, max_steps=1)
        else:  # an adversary
            episode = run_episode(env, policies.policy(kind), task, seed=0, strict=False)
        result = env.last_verification or env.verify()
        state = dict(env.state_probe().read())
        snapshot = folder / f"run{runs}.sqlite"
        shutil.copyfile(state["app_db"], snapshot)
        log = visits_path(state["app_db"])
        if log.exists():
            shutil.copyfile(log, visits_path(snapshot))
        state.update(app_db=str(snapshot), seed_db=str(seed_db))
        if kind == "oracle" and not reference:
            reference.append(database_digest(snapshot))
        elif kind == "noop":
            idle.append(Run(result, state, episode.total_reward, episode.actions))
        elif kind not in ("oracle", "noop") and writes and result.success and reference:  # noqa: SIM102
            if database_digest(snapshot) == reference[0]:
                # its twist changed nothing (a repeat the app refused, an idempotent update):
                # it ended where the oracle ends, which is the task done, not the verifier
                # gamed; validation reports this as the adversary's error, not a win
                raise AdversaryAbstained(
                    f"{kind} ended in the oracle's own end state: its twist changed nothing"
                )
        return Run(result, state, episode.total_reward, episode.actions)

    names = policies.adversary_names() if adversaries else []
    searched = None
    if adversaries and search:
        app = {"app": spec_for(task.setup["app"]).title} if task.family == "mobile" else {}

        def plan_policy(plan: list[dict[str, Any]]) -> Policy:
            # a step the plan cannot find ends the attempt (a failed attack, as for adversaries)
            return GiveUpPolicy(policies.policy("plan", plan=plan, **app))

        searched = strategies.search_for(task, run, plan_policy, search)
    try:
        return validate(
            task.verifier,
            run,
            made.mutations,
            mutated,
            repeats=repeats,
            adversaries=names,
            search=searched,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
