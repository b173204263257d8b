"""The ``tau2-retail`` and ``tau2-telecom`` suites: tau2-bench's tasks, each validated by running.

Every tau2 task becomes a palaestra Task on ``palaestra/tau2-v0``: its setup names the domain and
the tau2 task (privileged: the agent sees the instruction and the domain; tau2's native id and
train/test split are private metadata, and a telecom task's public id is opaque), its verifier
is the ``tau2`` check kind with the task's evaluation criteria, and its oracle is the gold
assistant (``tau2_gold``: the gold actions and the messages they need,
talking to the symbolic user). A task ships only when that oracle scores 1.0 three times with
the same verdict, ending at once scores 0, three mutants of the oracle's end state fail (a field
of the world changed, a write without the user's yes, nothing said) and every adversary of the
family fails it. The last full run is recorded beside this file (``validation-retail.json``,
``validation-telecom.json``: every task's report, a dropped one's reason and the winning
adversary's moves), so a load costs no episode; tests re-validate a sample of tasks against the
record and play the gold assistant on every task.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.dialogue.search import search_for
from palaestra.envs.tau2 import FAMILY
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.adversaries import FIX_ALL
from palaestra.envs.tau2.env import ENV_ID, Tau2Env
from palaestra.tasks import Oracle, PublicMetadata, Suite, Task
from palaestra.verifiers.validation import (
    ValidationRecord,
    ValidationReport,
    family_runner,
    play,
    task_key,
    validate,
)

#: assistant moves per episode (tau2 stops a simulation at 200 messages of either side)
MAX_STEPS = 100
MUTATIONS = [{"name": "world_changed"}, {"name": "unconfirmed_write"}, {"name": "said_nothing"}]
#: episodes of the adversary search per task (a tau2 episode of the search is longer than a
#: named adversary's: the budget keeps validation's growth near 50%, docs/verifiers.md)
SEARCH_BUDGET = 6
TITLES = {"retail": "online retail store", "telecom": "telecom operator's technical support"}


def task_id(domain: str, tau2_id: str) -> str:
    """The public id. tau2's retail ids are numbers, kept; its telecom ids spell the task's
    answer (``[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]``: the faults
    to fix), so a telecom task is named by a digest of its id instead. The native id stays in
    the private ``metadata.tau2_id`` and in every report."""
    if domain == "telecom":
        return f"tau2-telecom-{hashlib.sha256(tau2_id.encode()).hexdigest()[:10]}"
    slug = re.sub(r"[^a-z0-9]+", "-", tau2_id.lower()).strip("-")
    return f"tau2-{domain}-{slug}"


def make_task(domain: str, raw: dict[str, Any]) -> Task:
    crit = raw["evaluation_criteria"]
    return Task(
        id=task_id(domain, raw["id"]),
        family="tau2",
        env=ENV_ID,
        instruction=f"You are the customer-service agent of an {TITLES[domain]}. Help the user "
        "with their request, following the policy. Use the tools; ask the user for what you "
        "need; in telecom, the user's phone can only be changed by the user, on your "
        "instructions.",
        setup={"tau2": domain, "task_id": raw["id"]},
        verifier={
            "kind": "tau2",
            "reward_basis": list(crit["reward_basis"]),
            "actions": tau2_tasks.gold_actions(raw),
            "communicate_info": list(crit.get("communicate_info") or []),
            "nl_assertions": list(crit.get("nl_assertions") or []),
        },
        max_steps=MAX_STEPS,
        public=PublicMetadata(domain=domain),
        metadata={
            "source": "tau2-bench",
            "domain": domain,
            "tau2_id": raw["id"],
            "split": tau2_tasks.split_of(domain).get(raw["id"], "none"),
            "reward_basis": list(crit["reward_basis"]),
        },
        oracle=Oracle(policy="tau2_gold"),
    )


@functools.cache
def tasks(domain: str) -> list[Task]:
    """Every tau2 task of ``domain`` as a palaestra Task (validated or not)."""
    made = [make_task(domain, raw) for raw in tau2_tasks.tasks(domain).values()]
    ids = [t.id for t in made]
    if len(set(ids)) != len(ids):
        raise ValueError(f"tau2 {domain}: two tasks share an id after making it URL-safe")
    return made


def retail_tasks() -> list[Task]:
    """Every retail task, validated or not (the record's candidates)."""
    return tasks("retail")


def telecom_tasks() -> list[Task]:
    return tasks("telecom")


def validate_task(
    task: Task, env: Tau2Env | None = None, *, adversaries: bool = True, search: int | None = None
) -> ValidationReport:
    """One task's report: the oracle, doing nothing, the mutants, the adversaries and (with
    them) the adversary search of :mod:`palaestra.envs.runtimes.dialogue.search` (``search``
    episodes, :data:`SEARCH_BUDGET` by default; 0: none), with telecom's device fixes."""
    env = env or Tau2Env()
    runner = family_runner(env, task, FAMILY)
    against = FAMILY.adversary_names() if adversaries else ()
    budget = SEARCH_BUDGET if search is None else search
    fixes = FIX_ALL if task.setup.get("tau2") == "telecom" else ()
    searched = None
    if adversaries and budget:
        searched = search_for(task, lambda p: play(env, task, p, strict=False), budget, fixes)
    return validate(task.verifier, runner, MUTATIONS, _mutate, adversaries=against, search=searched)


@contextlib.contextmanager
def _mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
    out = dict(state)
    if mutation["name"] == "unconfirmed_write":
        out["violations"] = [*state["violations"], "a write without the user's confirmation"]
    elif mutation["name"] == "said_nothing":
        out["said"] = []
        out["calls"] = [c for c in state["calls"] if c.get("by") != "assistant"]
        out["ended_by"] = None
    else:  # one field of the final world off: the first leaf, changed
        world = copy.deepcopy(state["world"])
        _nudge(world)
        out["world"] = world
        out["assertions"] = [{**a, "ok": False} for a in state["assertions"]]
    yield out


def _nudge(node: Any) -> bool:
    """Change the first scalar found in ``node`` (in place); False when there is none."""
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    for key, value in items:
        if isinstance(value, dict | list):
            if _nudge(value):
                return True
        else:
            node[key] = f"{value}-mutant"
            return True
    return False


def record(domain: str) -> ValidationRecord:
    """The domain's last full validation run, kept beside this file (``validation-<domain>.json``)
    and keyed by each task's whole content: a task changed since the run is left out until the
    next one (:func:`write_validation`)."""
    return ValidationRecord(
        Path(__file__).with_name(f"validation-{domain}.json"),
        f"tau2-{domain}",
        task_key,
        family="tau2",
        candidates=f"palaestra.envs.tau2.suites:{domain}_tasks",
    )


def validate_domain(
    domain: str, tasks_: list[Task] | None = None, *, adversaries: bool = True
) -> dict[str, Any]:
    """Execution-validate a domain's tasks (all by default): the report ``palaestra validate
    tau2-<domain>`` prints, with each dropped task's reason."""
    chosen = tasks_ if tasks_ is not None else tasks(domain)
    env = Tau2Env()
    try:
        return record(domain).run(chosen, lambda t: validate_task(t, env, adversaries=adversaries))
    finally:
        env.close()


def validate_suite(tasks_: list[Task] | None = None, *, adversaries: bool = True) -> dict[str, Any]:
    """The family's validation (``Family.validation``): ``tasks_`` (every task of every domain
    by default) validated domain by domain, the reports merged."""
    if tasks_ is None:
        domains: Iterable[str] = tau2_tasks.DOMAINS
    else:
        domains = sorted({t.setup["tau2"] for t in tasks_})
    reports = [
        validate_domain(
            d,
            None if tasks_ is None else [t for t in tasks_ if t.setup["tau2"] == d],
            adversaries=adversaries,
        )
        for d in domains
    ]
    if len(reports) == 1:
        return reports[0]
    merged = {key: sum(r[key] for r in reports) for key in ("total", "validated", "dropped")}
    return {
        "suite": "tau2",
        **merged,
        "seconds": round(sum(r["seconds"] for r in reports), 1),
        "tasks": {tid: rep for r in reports for tid, rep in r["tasks"].items()},
    }


def write_validation(domain: str) -> dict[str, Any]:
    """Validate every task of ``domain`` and record the run (about 10 s a domain): run it after
    changing the users, the gold assistants, the adversaries or the check
    (``palaestra validate tau2-<domain> --record``); the tests re-validate a sample against
    the record, so a stale one fails them."""
    return record(domain).write(validate_domain(domain))


def suite(domain: str) -> Suite:
    """The domain's tasks the recorded run validated, each with its report."""
    return Suite(
        name=f"tau2-{domain}",
        description=f"tau2-bench {domain} with a deterministic symbolic user; every task "
        "validated by its gold assistant and against the family's adversaries",
        tasks=record(domain).validated(tasks(domain)),
    )


@functools.cache
def retail() -> Suite:
    return suite("retail")


@functools.cache
def telecom() -> Suite:
    return suite("telecom")


if __name__ == "__main__":
    for name in tau2_tasks.DOMAINS:
        written = write_validation(name)
        print(f"tau2-{name}: {written['validated']} of {written['total']} validated")
