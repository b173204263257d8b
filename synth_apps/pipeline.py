"""The synthesis pipeline: specs -> app variants -> candidate tasks -> validated suite.

Candidates are generated for every (domain, variant, layout) group, a little more than asked so
that drops do not leave the suite short, and validated for real in parallel: each thread owns an
env of the tasks' family on this process's Chromium, made through the registry (no screenshots:
the oracle reads the tree or the element list), and runs
:func:`palaestra.verifiers.validation.validate`, playing the family's ``oracle`` and ``noop``
policies. Only validated tasks are written; each carries
its validation report. Dropped tasks are counted by reason and listed in ``report.json``.

Output (a suite folder, servable at once when it lies on ``PALAESTRA_SUITE_PATH``)::

    out/suite.json      {"name", "description"}
    out/tasks/*.json    palaestra Task files (oracle, verifier and validation are privileged)
    out/report.json     what was generated, validated and dropped, and how fast
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palaestra import registry
from palaestra.family import family as family_of
from palaestra.policies import GiveUpPolicy, Policy, run_episode
from palaestra.synth_apps import data, strategies
from palaestra.synth_apps.adversaries import IDLE, STRATEGIES
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.generate import Generated, GenerationError, TaskGenerator
from palaestra.synth_apps.llm import LLMAuthor
from palaestra.synth_apps.spec import SpecError, load_spec
from palaestra.tasks import Task
from palaestra.verifiers.app_state import mutated, visits_path
from palaestra.verifiers.validation import Run, ValidationReport, digest, validate

OVERSHOOT = 1.2  # candidates per wanted task: some are dropped by validation
#: the env each family's tasks run on, and what validation observes of it
ENVS = {
    "web": ("palaestra/web-v0", ("axtree", "url", "goal", "chat")),
    "mobile": ("palaestra/mobile-v0", ("ui_elements", "foreground_app", "goal", "chat")),
}


@dataclass
class Progress:
    phase: str
    done: int
    total: int
    validated: int
    dropped: int


@dataclass
class SynthReport:
    suite: str
    out: str
    generated: int = 0
    validated: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    skipped: int = field(default=0, metadata={"why": "not validated: enough tasks already"})
    reworded: int = 0
    seconds: float = 0.0
    tasks_per_minute: float = 0.0
    seconds_per_task: float = 0.0
    by_domain: dict[str, int] = field(default_factory=dict)
    drops: list[dict[str, Any]] = field(default_factory=list)
    #: per adversary: tasks it was played on, tasks it beat (each dropped), its highest reward
    #: on a task that was kept
    adversaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: per task checked: validated, and each adversary's result (success, score, reward)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def default_name(domains: list[str]) -> str:
    return "synth_" + ("_".join(domains) if len(domains) <= 3 else "all")


def drop_reason(reason: str) -> str:
    """A reason without its particulars, for counting (``oracle run 1 failed``)."""
    return re.split(r"[:(]", reason, maxsplit=1)[0].strip()


def synthesize(
    domains: list[str],
    *,
    variants: int,
    tasks: int,
    out: Path,
    seed: int = 0,
    layouts: tuple[str, ...] = ("desktop",),
    parallel: int = 2,
    name: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    author: LLMAuthor | None = None,
    family: str = "web",
    adversaries: bool = True,
) -> SynthReport:
    """Generate and validate ``tasks`` tasks over the domains, variants and layouts.

    ``domains`` are built-in domain names or spec files. With an ``author``, instructions are
    reworded by the LLM where the rewording keeps every grounded value (see
    :mod:`palaestra.synth_apps.llm`); validation is the same either way. ``family="mobile"``
    makes phone tasks (``palaestra/mobile-v0``, the apps' mobile layouts, AndroidWorld actions),
    validated on the embedded phone.
    """
    if family not in ENVS:
        raise ValueError(f"family must be 'web' or 'mobile', not {family!r}")
    if family == "mobile":
        layouts = ("mobile",)
    if not domains:
        raise SpecError("name at least one domain")
    if variants < 1 or tasks < 1:
        raise ValueError("variants and tasks must be at least 1")
    specs = {d: load_spec(d) for d in domains}  # a bad domain fails before any work
    started = time.perf_counter()
    name = name or default_name(domains)
    report = SynthReport(suite=name, out=str(out))
    notify = on_progress or (lambda p: None)

    groups = [(d, v, layout) for d in domains for v in range(variants) for layout in layouts]
    per_group = max(1, math.ceil(tasks * OVERSHOOT / len(groups)))
    candidates: list[Generated] = []
    for i, (domain, variant, layout) in enumerate(groups):
        gen = TaskGenerator(specs[domain], variant=variant, layout=layout, app_ref=domain)
        prefix = {"mobile": "phone-"}.get(family) or ("m-" if layout == "mobile" else "")
        try:
            candidates += gen.generate(per_group, seed=seed, prefix=prefix)
        except GenerationError as exc:
            report.dropped["cannot generate"] = report.dropped.get("cannot generate", 0) + 1
            report.drops.append({"task": f"{domain}-v{variant}", "reason": str(exc)})
        for index, why in gen.failures.items():
            report.drops.append({"task": f"{domain}-v{variant} tasks.{index}", "reason": why})
        notify(Progress("generate", i + 1, len(groups), 0, 0))
    candidates = _interleave(candidates)
    if family == "mobile":
        for made in candidates:
            made.task.family, made.task.env = "mobile", ENVS["mobile"][0]
            made.task.max_steps += 10  # a phone scrolls to reach what a desktop shows at once
    report.generated = len(candidates)
    if author is not None:
        for i, made in enumerate(candidates):
            reworded = author.paraphrase(made.task.instruction, made.values)
            if reworded:
                made.task.metadata["template_instruction"] = made.task.instruction
                made.task.instruction = reworded
                report.reworded += 1
            notify(Progress("reword", i + 1, len(candidates), 0, 0))

    tasks_dir = out / "tasks"
    if tasks_dir.exists():
        shutil.rmtree(tasks_dir)
    tasks_dir.mkdir(parents=True)
    kept: list[Task] = []
    dropped: Counter[str] = Counter()
    stop = threading.Event()
    envs = EnvPool(family)

    def check(made: Generated) -> tuple[Generated, ValidationReport | None]:
        if stop.is_set():
            return made, None
        return made, validate_task(envs.get(), made, adversaries=adversaries)

    done = 0
    try:
        with ThreadPoolExecutor(max(1, parallel), thread_name_prefix="validate") as pool:
            futures = [pool.submit(check, made) for made in candidates]
            for future in as_completed(futures):
                made, result = future.result()
                done += 1
                if result is None or (result.validated and len(kept) >= tasks):
                    report.skipped += 1
                    continue
                record_adversaries(report, made.task.id, result)
                if result.validated:
                    # the mutations ride along (privileged, as the verifier), so the task can
                    # be validated again from its file (``palaestra validate``)
                    made.task.validation = {**result.to_json(), "mutations": made.mutations}
                    kept.append(made.task)
                    report.by_domain[made.task.metadata["app"]] = (
                        report.by_domain.get(made.task.metadata["app"], 0) + 1
                    )
                    if len(kept) >= tasks:
                        stop.set()
                elif not result.validated:
                    dropped[drop_reason(result.reason or "")] += 1
                    report.drops.append(drop_entry(made.task.id, result))
                notify(
                    Progress("validate", done, len(candidates), len(kept), sum(dropped.values()))
                )
    finally:
        envs.close()

    kept.sort(key=lambda t: t.id)
    for task in kept:
        (tasks_dir / f"{task.id}.json").write_text(task.model_dump_json(indent=1))
    report.validated = len(kept)
    report.dropped.update(dropped)
    report.seconds = round(time.perf_counter() - started, 2)
    report.tasks_per_minute = round(60 * len(kept) / report.seconds, 1) if report.seconds else 0.0
    report.seconds_per_task = round(report.seconds / len(kept), 3) if kept else 0.0
    description = (
        f"{len(kept)} synthesized, execution-validated tasks on {', '.join(domains)} "
        f"({variants} variant(s), {', '.join(layouts)})"
    )
    (out / "suite.json").write_text(json.dumps({"name": name, "description": description}))
    (out / "report.json").write_text(json.dumps(report.to_json(), indent=1))
    return report


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


def drop_entry(task_id: str, result: ValidationReport) -> dict[str, Any]:
    """A dropped task in the report: its reason and, when adversaries beat it, their names
    and trajectories."""
    entry: dict[str, Any] = {"task": task_id, "reason": result.reason or ""}
    won = {n: r["actions"] for n, r in result.adversaries.items() if "actions" in r}
    if won:
        entry["adversaries"] = won
    return entry


def record_adversaries(report: SynthReport, task_id: str, result: ValidationReport) -> None:
    """Count each adversary's results in the suite's report (and the task's own row)."""
    report.tasks[task_id] = {
        "validated": result.validated,
        "reason": result.reason,
        "seconds": result.seconds,
        "adversary_seconds": result.adversary_seconds,
        "adversaries": {
            n: {k: v for k, v in r.items() if k != "actions"} for n, r in result.adversaries.items()
        },
    }
    for name, r in result.adversaries.items():
        row = report.adversaries.setdefault(name, {"played": 0, "won": 0, "max_reward_kept": 0.0})
        row["played"] += 1
        if "actions" in r:
            row["won"] += 1
        elif result.validated:
            row["max_reward_kept"] = max(row["max_reward_kept"], float(r.get("reward", 0.0)))


def _interleave(items: list[Generated]) -> list[Generated]:
    """Round-robin over groups, so stopping early still covers every domain and variant."""
    by_group: dict[tuple, list[Generated]] = {}
    for item in items:
        md = item.task.metadata
        by_group.setdefault((md["app"], md["variant"], md["layout"]), []).append(item)
    out: list[Generated] = []
    queues = list(by_group.values())
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


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
