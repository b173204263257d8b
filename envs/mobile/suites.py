"""The shipped phone suite, ``phone``: synthesized phone tasks on every built-in app domain.

The tasks are made by the synthesis pipeline (``family="mobile"``) from fixed seeds,
execution-validated on the embedded phone, and **committed** as one JSON file beside this module
(``phone.json``, every task carrying its validation report). This module only loads it; its
maker is synthesis, above the families (:mod:`palaestra.synthesis.phone`). Re-make it with::

    python -m palaestra.synthesis.phone

Why committed rather than generated at first use with a content-hash cache (as the usersim
suite is): validating a phone task drives Chromium through the oracle, noop, the mutants and six
adversaries (the last build: 40 candidates in 420 s on a busy 2-core machine), so the suite costs
minutes to make, and a cache keyed by the code that plays the tasks would be invalidated by every
change to the app runtime, re-spending those minutes inside ``make test`` and at a user's first
``palaestra eval``. A committed file loads in milliseconds, is the same on every machine, and is
reproducible: the seeds are fixed and validation runs serially (``parallel=1``), so which
candidates are kept does not depend on timing. ``tests/envs/mobile/test_suite.py`` checks that
the file still matches what the generator makes from those seeds, and plays an oracle.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from palaestra.errors import InvalidRequest
from palaestra.tasks import Suite, Task, task_from_file
from palaestra.verifiers.validation import digest

SUITE = "phone"
FILE = Path(__file__).with_name("phone.json")
DESCRIPTION = (
    "Synthesized phone tasks on every built-in app domain (bank, calendar, email, shop, "
    "train), two app variants each, AndroidWorld actions; every task execution-validated on "
    "the embedded phone."
)


@functools.cache
def suite() -> Suite:
    """The registered loader: the committed tasks (only validated ones are ever written)."""
    data = json.loads(FILE.read_text())
    tasks = [task_from_file(t, str(FILE)) for t in data["tasks"]]
    return Suite(name=SUITE, description=DESCRIPTION, tasks=tasks)


# ----- AndroidWorld replicas ------------------------------------------------------------------
#
# ``androidworld-replica`` (the phone) and ``androidworld-replica-web`` (the apps' desktop layout,
# ``web: true`` apps only): AndroidWorld's task templates re-hosted on synthesized replicas of its
# apps (``synth_apps/replicas/``), a task per template and seed (``<Template>/<seed>``) and per
# ask variant (``<Template>/<seed>-ask``). Committed for the reasons above; made incrementally by
# ``python -m palaestra.synthesis.androidworld``. Each task's validation report keeps its key
# (:func:`replica_key`: the task and the spec files it uses) and the code digest it was validated
# under, so editing one app's YAML leaves the other apps' verdicts standing; a task whose spec
# files changed since is left out until the maker validates it again.

REPLICA = "androidworld-replica"
REPLICA_WEB = "androidworld-replica-web"
REPLICA_FILES = {
    REPLICA: Path(__file__).with_name("androidworld_replica.json"),
    REPLICA_WEB: Path(__file__).with_name("androidworld_replica_web.json"),
}
REPLICA_DESCRIPTIONS = {
    REPLICA: "AndroidWorld's task templates on synthesized replicas of its apps (Simple Calendar "
    "Pro, Markor, Broccoli, Pro Expense, ...), several seeds each plus ask-the-user variants; "
    "every task execution-validated on the embedded phone.",
    REPLICA_WEB: "AndroidWorld's task templates on the desktop (web) layout of the replicas that "
    "make sense on the web (calendar, expenses, recipes, notes, tasks); every task "
    "execution-validated in the browser.",
}


def spec_file(app: str) -> Path:
    """The spec file a task's ``app`` names: a replica, a built-in domain, or a file path."""
    from palaestra.synth_apps import spec

    for folder in (spec.DOMAINS_DIR, spec.REPLICAS_DIR):  # as load_spec looks them up
        path = folder / f"{app}.yaml"
        if path.is_file():
            return path
    if Path(app).is_file():
        return Path(app)
    raise InvalidRequest(f"no replica, domain or spec file {app!r}", field="setup.app")


def spec_apps(task: Task) -> list[str]:
    """The apps a task uses: its own and every app it plants rows in."""
    planted = [str(p.get("app") or task.setup["app"]) for p in task.setup.get("plant") or []]
    return sorted({str(task.setup["app"]), *planted})


def replica_key(task: Task, mutations: Any = None) -> str:
    """What a replica task's verdict depends on besides the runtime code: the task (without its
    report), its mutants (``mutations``; the report's when None) and the content of every spec
    file it uses (:func:`spec_apps`)."""
    if mutations is None:
        mutations = (task.validation or {}).get("mutations", [])
    files = {
        app: hashlib.sha256(spec_file(app).read_bytes()).hexdigest() for app in spec_apps(task)
    }
    return digest(
        {
            "task": task.model_dump(mode="json", exclude={"validation"}),
            "mutations": mutations,
            "specs": files,
        }
    )


@functools.cache
def replica_templates() -> dict[str, str]:
    """Every replica template's name -> its app's spec name (what ids and suite files name),
    read from the spec files' ``tasks[*].name`` alone: a load needs the names, not the apps
    (one app's spec error is that app's tasks' business, not every template's)."""
    import yaml

    from palaestra.synth_apps.spec import REPLICAS_DIR, replica_names

    out = {}
    for app in replica_names():
        data = yaml.safe_load((REPLICAS_DIR / f"{app}.yaml").read_text()) or {}
        out.update({str(t["name"]): app for t in data.get("tasks") or [] if t.get("name")})
    return out


def load_replicas(path: Path, name: str, templates: Mapping[str, str] | None = None) -> Suite:
    """A replica suite file's validated tasks whose key still holds. A task naming a template
    no replica has (``metadata.aw_template``) is an error naming it (and the nearest known
    one): a suite file that names templates must name real ones."""
    data = json.loads(path.read_text()) if path.exists() else {"tasks": []}
    tasks = []
    for item in data["tasks"]:
        task = task_from_file(item, path.name)
        known = replica_templates() if templates is None else templates
        template = str(task.metadata.get("aw_template", ""))
        if template not in known:
            near = difflib.get_close_matches(template, list(known), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise InvalidRequest(
                f"{path.name}: task {task.id!r} names AndroidWorld template {template!r}, which "
                f"no replica app (synth_apps/replicas/) has{hint}",
                task=task.id,
                field="metadata.aw_template",
            )
        report = task.validation or {}
        if report.get("validated") and report.get("key") == replica_key(task):
            tasks.append(task)
    return Suite(name=name, description=REPLICA_DESCRIPTIONS.get(name, ""), tasks=tasks)


def replica_suite() -> Suite:
    """The registered loader of ``androidworld-replica``."""
    return load_replicas(REPLICA_FILES[REPLICA], REPLICA)


def replica_web_suite() -> Suite:
    """The registered loader of ``androidworld-replica-web``."""
    return load_replicas(REPLICA_FILES[REPLICA_WEB], REPLICA_WEB)
