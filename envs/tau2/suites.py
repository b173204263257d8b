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

import functools
import hashlib
import re
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.dialogue.tasks import TaskForm
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.env import ENV_ID
from palaestra.tasks import Oracle, Suite, Task
from palaestra.verifiers.validation import ValidationRecord, task_key

#: assistant moves per episode (tau2 stops a simulation at 200 messages of either side)
MAX_STEPS = 100
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


#: what every tau2 task says alike (the dialogue runtime's brief and public metadata)
FORM = TaskForm(family="tau2", env=ENV_ID, source="tau2-bench", party="user", max_steps=MAX_STEPS)


def make_task(domain: str, raw: dict[str, Any]) -> Task:
    crit = raw["evaluation_criteria"]
    return FORM.task(
        task_id(domain, raw["id"]),
        domain,
        f"customer-service agent of an {TITLES[domain]}",
        note="; in telecom, the user's phone can only be changed by the user, on your instructions",
        setup={"tau2": domain, "task_id": raw["id"]},
        verifier={
            "kind": "tau2",
            "reward_basis": list(crit["reward_basis"]),
            "actions": tau2_tasks.gold_actions(raw),
            "communicate_info": list(crit.get("communicate_info") or []),
            "nl_assertions": list(crit.get("nl_assertions") or []),
        },
        metadata={
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


def record(domain: str) -> ValidationRecord:
    """The domain's last full validation run, kept beside this file (``validation-<domain>.json``)
    and keyed by each task's whole content: a task changed since the run is left out until the
    next one (``palaestra validate tau2-<domain> --record``; how a task is validated is
    :mod:`palaestra.envs.tau2.validation`)."""
    return ValidationRecord(
        Path(__file__).with_name(f"validation-{domain}.json"),
        f"tau2-{domain}",
        task_key,
        family="tau2",
        candidates=f"palaestra.envs.tau2.suites:{domain}_tasks",
    )


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
