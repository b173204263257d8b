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
from palaestra.policies import run_episode
from palaestra.synth_apps import data
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.generate import Generated, GenerationError, TaskGenerator
from palaestra.synth_apps.llm import LLMAuthor
from palaestra.synth_apps.spec import SpecError, load_spec
from palaestra.tasks import Task
from palaestra.verifiers.app_state import mutated
from palaestra.verifiers.validation import Run, ValidationReport, validate

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
    drops: list[dict[str, str]] = field(default_factory=list)

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
    lock = threading.Lock()
    stop = threading.Event()
    local = threading.local()
    envs: list[Any] = []

    def env() -> Any:
        if not hasattr(local, "env"):
            env_id, observe = ENVS[family]
            local.env = registry.make(env_id, observe=observe)
            with lock:
                envs.append(local.env)
        return local.env

    def check(made: Generated) -> tuple[Generated, ValidationReport | None]:
        if stop.is_set():
            return made, None
        return made, validate_task(env(), made)

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
                if result.validated:
                    made.task.validation = result.to_json()
                    kept.append(made.task)
                    report.by_domain[made.task.metadata["app"]] = (
                        report.by_domain.get(made.task.metadata["app"], 0) + 1
                    )
                    if len(kept) >= tasks:
                        stop.set()
                elif not result.validated:
                    dropped[drop_reason(result.reason or "")] += 1
                    report.drops.append({"task": made.task.id, "reason": result.reason or ""})
                notify(
                    Progress("validate", done, len(candidates), len(kept), sum(dropped.values()))
                )
    finally:
        for e in envs:
            e.close()

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


def validate_task(env: Any, made: Generated, repeats: int = 3) -> ValidationReport:
    """Execution-validate one generated task on an env of its family in this process: the
    family's ``oracle`` policy (which must never make an action fail) and its ``noop`` policy,
    which does nothing and says it is finished at once."""
    task = made.task
    policies = family_of(task.family)
    folder = Path(tempfile.mkdtemp(prefix="palaestra-validate-"))
    seed_db = data.template(spec_for(task.setup["app"]), task.setup.get("data_seed", 0))
    runs = 0

    def run(kind: str) -> Run:
        nonlocal runs
        runs += 1
        if kind == "oracle":
            episode = run_episode(env, policies.policy("oracle"), task, seed=0, strict=True)
        else:  # do nothing, then say "finished"
            episode = run_episode(env, policies.policy("noop"), task, seed=0, max_steps=1)
        result = env.last_verification
        state = dict(env.state_probe().read())
        snapshot = folder / f"run{runs}.sqlite"
        shutil.copyfile(state["app_db"], snapshot)
        state.update(app_db=str(snapshot), seed_db=str(seed_db))
        return Run(result, state, episode.total_reward, episode.actions)

    try:
        return validate(task.verifier, run, made.mutations, mutated, repeats=repeats)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
