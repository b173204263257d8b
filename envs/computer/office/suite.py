"""The office suites: ``office-calc``, ``office-writer``, ``office-impress`` and their union
``office``, tasks made of the templates the app modules declare.

A task is one template at one seed (id ``<template>/<seed>``: ``office/<template>/<seed>`` in
the union suite, ``office-calc/<template>/<seed>`` in its app's): the case's documents written
into the fresh home (``setup.binary``, base64) with the app started on the one it opens, the
instruction one of the template's phrasings chosen by the seed, the case's check spec as the
verifier and its GUI-only solution as the oracle (``replay``). The code solution, the
template's skills and its app are private metadata; the public metadata names the app only
(where the task is, never what it asks).

Decisions:

- Every seed of a template picks its phrasing by ``seed % len(phrasings)``, so a template's
  seeds use several phrasings and the wording says nothing the instruction's own words do not.
- The id names the template, as computer-basic's ids name their task: the instruction says
  what the work is in any case (every office task is feasible; there is no hidden category). So
  the template's name is read from the id (:func:`template_of`), never kept again as a private
  value the view would show (the leak test's rule).
- Each app has its own :class:`ValidationRecord` (``validation_<app>.json`` beside this file),
  so the three apps are recorded in parallel, and a suite lists only the tasks its record
  validated with the same key; ``office`` is the union of the three, validated by theirs.
- Cases are made once per process (:func:`cases`): generators write documents with the
  standard library in milliseconds, so no disk cache.
"""

from __future__ import annotations

import base64
import functools
import importlib
from pathlib import Path
from typing import Any

from palaestra.envs.computer.office.template import APPS, ArtifactError, Case, Template
from palaestra.tasks import Oracle, PublicMetadata, Task
from palaestra.verifiers.validation import ValidationRecord, digest

ENV_ID = "palaestra/computer-v0"
HOME = "/home/user"
#: the modules that declare each app's templates (``TEMPLATES``)
MODULES = {app: f"palaestra.envs.computer.office.{app}" for app in APPS}
#: the step budget of every task (the GUI oracles take a few dozen actions at most)
MAX_STEPS = 60
SOURCE = "palaestra.envs.computer.office.suite"


def templates(app: str) -> list[Template]:
    """The templates of ``app`` (its module's ``TEMPLATES``; none while the module is not
    written yet)."""
    try:
        module = importlib.import_module(MODULES[app])
    except ModuleNotFoundError as exc:
        if exc.name != MODULES[app]:
            raise
        return []
    found = list(getattr(module, "TEMPLATES", []))
    wrong = [t.name for t in found if t.app != app]
    if wrong:
        raise ValueError(f"{MODULES[app]}.TEMPLATES holds templates of another app: {wrong}")
    return found


@functools.cache
def _case(template: Template, seed: int) -> Case:
    try:
        return template.make(seed)
    except ArtifactError:
        raise
    except Exception as exc:  # a generator's bug names its template and seed
        raise ArtifactError(template.name, seed, f"{type(exc).__name__}: {exc}") from exc


def setup_of(template: Template, case: Case) -> dict[str, Any]:
    """The env's setup for a case: its documents, its text files, the app on its document."""
    return {
        "binary": {path: base64.b64encode(data).decode() for path, data in case.files.items()},
        "files": dict(case.text_files),
        "apps": [[template.app, f"{HOME}/{case.open}"]],
    }


def make_task(template: Template, seed: int) -> Task:
    case = _case(template, seed)
    phrasing = template.phrasings[seed % len(template.phrasings)]
    try:
        instruction = phrasing.format(**case.params)
    except (KeyError, IndexError, ValueError) as exc:
        raise ArtifactError(template.name, seed, f"phrasing {phrasing!r}: {exc!r}") from exc
    verifier = case.verifier
    if verifier.get("kind") != "all":
        verifier = {"kind": "all", "checks": [verifier]}
    return Task(
        id=f"{template.name}/{seed}",
        family="computer",
        env=ENV_ID,
        instruction=instruction,
        setup=setup_of(template, case),
        verifier=verifier,
        max_steps=max(MAX_STEPS, 2 * len(case.gui)),
        public=PublicMetadata(app=template.app),
        metadata={
            "source": SOURCE,
            "app": template.app,
            "skills": list(template.skills),
            "code_oracle": case.code,
            "open": case.open,
            "oracle": "gui",
            "claims_gui": False,
            "tags": ["computer"],
        },
        oracle=Oracle(policy="replay", data=case.gui),
    )


def template_of(task: Task) -> str:
    """The template a task was made from (its id's first part)."""
    return task.id.split("/")[0]


def is_office(task: Task) -> bool:
    return task.metadata.get("source") == SOURCE


def app_tasks(app: str) -> list[Task]:
    """Every candidate task of ``app``: each template at each of its seeds."""
    return [make_task(t, seed) for t in templates(app) for seed in t.seeds]


#: each app's candidates, by the name its record gives them (``office.suite:calc_tasks``)
calc_tasks, writer_tasks, impress_tasks = (functools.partial(app_tasks, app) for app in APPS)


def all_tasks() -> list[Task]:
    return [t for app in APPS for t in app_tasks(app)]


def task_key(task: Task) -> str:
    """What the task is: its instruction, setup, verifier, oracle and code oracle."""
    data = task.model_dump(include={"instruction", "setup", "verifier"})
    data["oracle"] = task.oracle.data if task.oracle is not None else None
    data["code"] = task.metadata.get("code_oracle")
    return digest(data)


#: each app's last full validation run (``palaestra validate office-<app> --record``)
RECORDS = {
    app: ValidationRecord(
        Path(__file__).with_name(f"validation_{app}.json"),
        f"office-{app}",
        task_key,
        family="computer",
        candidates=f"palaestra.envs.computer.office.suite:{app}_tasks",
    )
    for app in APPS
}


#: what a run over several apps' tasks (``palaestra validate office``) reports under; never
#: written: each app's record is the one the suites read
UNION = ValidationRecord(Path(__file__).with_name("validation_office.json"), "office", task_key)


def record_for(tasks: list[Task]) -> ValidationRecord:
    """The record a run over ``tasks`` (office tasks) reports under: its app's, or the union's."""
    apps = {str(t.metadata.get("app")) for t in tasks}
    return RECORDS[apps.pop()] if len(apps) == 1 and apps <= set(APPS) else UNION


def load_app(app: str) -> list[Task]:
    return RECORDS[app].validated(app_tasks(app))


#: each app's suite, by the name the family's descriptor gives it (``office.suite:load_calc``)
load_calc, load_writer, load_impress = (functools.partial(load_app, app) for app in APPS)


def load_suite() -> list[Task]:
    """``office``: the validated tasks of the three apps."""
    return [t for app in APPS for t in load_app(app)]
