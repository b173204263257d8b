"""The synthesis pipeline: specs -> app variants -> candidate tasks -> validated suite.

Candidates are generated for every (domain, variant, layout) group, a little more than asked so
that drops do not leave the suite short, and validated for real in parallel: each thread owns an
env of the tasks' family on this process's Chromium, opened by the family's validation plan (no
screenshots: the oracle reads the tree or the element list), on which the validation service
(:func:`palaestra.validation.validate_task`) plays the oracle, doing nothing, the mutants, the
adversaries and the adversary search. Only validated tasks are written; each carries its
validation report. Dropped tasks are counted by reason and listed in ``report.json``.

It lives above the families (it plays their envs and policies), so nothing below it names it:
the CLI (``palaestra synth``), the gateway's synthesis jobs (:mod:`.process`), the phone suite's
maker (:mod:`.phone`) and the benchmarks call :func:`synthesize`, whose progress reaches them as
:class:`Progress` events through ``on_progress``.

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
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palaestra.family import family as family_of
from palaestra.synth_apps.generate import Generated, GenerationError, TaskGenerator
from palaestra.synth_apps.llm import LLMAuthor
from palaestra.synth_apps.spec import AppSpec, SpecError, load_spec
from palaestra.synthesis.events import Progress
from palaestra.tasks import Task
from palaestra.validation import plan_of, validate_task
from palaestra.verifiers.validation import ValidationReport

OVERSHOOT = 1.2  # candidates per wanted task: some are dropped by validation
#: the families whose tasks are synthesized apps (their validation plans play them)
FAMILIES = ("web", "mobile")


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


Notify = Callable[[Progress], None]


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
    on_progress: Notify | None = None,
    author: LLMAuthor | None = None,
    family: str = "web",
    adversaries: bool = True,
) -> SynthReport:
    """Generate and validate ``tasks`` tasks over the domains, variants and layouts.

    ``domains`` are built-in domain names or spec files. With an ``author``, instructions are
    reworded by the LLM where the rewording keeps every grounded value (see
    :mod:`palaestra.synth_apps.llm`); validation is the same either way. ``family="mobile"``
    makes phone tasks (``palaestra/mobile-v0``, the apps' mobile layouts, AndroidWorld actions),
    validated on the embedded phone. ``on_progress`` receives a :class:`Progress` event after
    each step of each phase, on the calling thread.
    """
    if family not in FAMILIES:
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
    candidates = _generate(specs, groups, tasks, seed, family, report, notify)
    report.generated = len(candidates)
    if author is not None:
        _reword(candidates, author, report, notify)
    tasks_dir = out / "tasks"
    if tasks_dir.exists():
        shutil.rmtree(tasks_dir)
    tasks_dir.mkdir(parents=True)
    kept = _validate(candidates, tasks, family, parallel, adversaries, report, notify)
    _write(tasks_dir, kept, report, started)
    description = (
        f"{len(kept)} synthesized, execution-validated tasks on {', '.join(domains)} "
        f"({variants} variant(s), {', '.join(layouts)})"
    )
    (out / "suite.json").write_text(json.dumps({"name": name, "description": description}))
    (out / "report.json").write_text(json.dumps(report.to_json(), indent=1))
    return report


def _generate(
    specs: dict[str, AppSpec],
    groups: list[tuple[str, int, str]],
    tasks: int,
    seed: int,
    family: str,
    report: SynthReport,
    notify: Notify,
) -> list[Generated]:
    """The candidates of every (domain, variant, layout) group, interleaved; a group that
    cannot generate is counted and listed as a drop."""
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
            on_phone(made.task)
    return candidates


def on_phone(task: Task) -> Task:
    """A generated task (the web family's by default) made a phone task, in place."""
    task.family, task.env = "mobile", family_of("mobile").envs[0].id
    task.max_steps += 10  # a phone scrolls to reach what a desktop shows at once
    return task


def _reword(
    candidates: list[Generated], author: LLMAuthor, report: SynthReport, notify: Notify
) -> None:
    """The LLM author's rewording of each instruction, where it keeps every grounded value."""
    for i, made in enumerate(candidates):
        reworded = author.paraphrase(made.task.instruction, made.values)
        if reworded:
            made.task.metadata["template_instruction"] = made.task.instruction
            made.task.instruction = reworded
            report.reworded += 1
        notify(Progress("reword", i + 1, len(candidates), 0, 0))


def _validate(
    candidates: list[Generated],
    tasks: int,
    family: str,
    parallel: int,
    adversaries: bool,
    report: SynthReport,
    notify: Notify,
) -> list[Task]:
    """Validate candidates in ``parallel`` threads (one env each) until ``tasks`` are kept; the
    kept tasks carry their validation report, the dropped ones are counted in ``report``."""
    kept: list[Task] = []
    dropped: Counter[str] = Counter()
    stop = threading.Event()
    envs = EnvPool(family)

    def check(made: Generated) -> tuple[Generated, ValidationReport | None]:
        if stop.is_set():
            return made, None
        return made, validate_task(
            made.task, env=envs.get(), adversaries=adversaries, mutations=made.mutations
        )

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
    report.dropped.update(dropped)
    return kept


def _write(tasks_dir: Path, kept: list[Task], report: SynthReport, started: float) -> None:
    """The kept tasks into ``tasks_dir``, and the report's totals and speed."""
    kept.sort(key=lambda t: t.id)
    for task in kept:
        (tasks_dir / f"{task.id}.json").write_text(task.model_dump_json(indent=1))
    report.validated = len(kept)
    report.seconds = round(time.perf_counter() - started, 2)
    report.tasks_per_minute = round(60 * len(kept) / report.seconds, 1) if report.seconds else 0.0
    report.seconds_per_task = round(report.seconds / len(kept), 3) if kept else 0.0


class EnvPool:
    """One env of a family per validating thread, on this process's Chromium, opened by the
    family's validation plan (no screenshots: the policies read the tree or the element
    list)."""

    def __init__(self, family: str) -> None:
        self.plan = plan_of(family)
        self.local = threading.local()
        self.lock = threading.Lock()
        self.envs: list[Any] = []

    def get(self) -> Any:
        if not hasattr(self.local, "env"):
            self.local.env = self.plan.open()
            with self.lock:
                self.envs.append(self.local.env)
        return self.local.env

    def close(self) -> None:
        for env in self.envs:
            env.close()


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
