"""The private label each shipped suite's leak test tries to predict from the task views.

A label function returns a task's private category, or None to leave the task out (an info
task of a synthesized app is a question by its nature; whether an action is feasible is the
secret)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from palaestra.tasks import Task


def feasibility(t: Task) -> str | None:
    kind = t.metadata.get("kind")
    return None if kind == "info" else ("infeasible" if kind == "infeasible" else "feasible")


def tagged_infeasible(t: Task) -> str:
    return "infeasible" if "infeasible" in t.metadata.get("tags", []) else "feasible"


def tau2_issue(t: Task) -> str:
    return re.match(r"\[(\w+)\]", t.metadata["tau2_id"]).group(1)  # type: ignore[union-attr]


def tau2_fault(t: Task) -> str:
    """The first fault of the task's set (tau2 names them in its id, joined by ``|``)."""
    return re.sub(r"^\[\w+\]|\[PERSONA:.*\]$", "", t.metadata["tau2_id"]).split("|")[0]


def tau2_persona(t: Task) -> str:
    return re.search(r"\[PERSONA:(\w+)\]", t.metadata["tau2_id"]).group(1)  # type: ignore[union-attr]


def gold_actions(t: Task) -> str:
    return "+".join(sorted({a["name"] for a in t.verifier.get("actions", [])})) or "none"


LABELS: dict[str, dict[str, Callable[[Task], Any]]] = {
    "phone": {"feasible": feasibility},
    "synth-web": {"feasible": feasibility},
    "usersim": {
        "grantable": lambda t: bool(t.metadata["grantable"]),
        "intent": lambda t: t.metadata["intent"],
    },
    "tau2-telecom": {"issue": tau2_issue, "fault": tau2_fault, "persona": tau2_persona},
    "tau2-retail": {"gold actions": gold_actions},
    "androidworld-replica": {"feasible": feasibility},
    "androidworld-replica-web": {"feasible": feasibility},
    "computer-basic": {"feasible": tagged_infeasible},
    "osworld-os": {"feasible": tagged_infeasible},
}


def synth_candidates(per_variant: int = 24, seeds: int = 4) -> list[Task]:
    """Tasks the synthesis generator makes from every built-in app (two variants, a few seeds),
    before validation: many more than a shipped suite holds, so a phrasing, a value or a share
    of tasks that only one category's templates have shows."""
    from palaestra.synth_apps.generate import GenerationError, TaskGenerator
    from palaestra.synth_apps.spec import domain_names, load_spec

    out: list[Task] = []
    for name in domain_names():
        spec = load_spec(name)
        for variant in (0, 1):
            gen = TaskGenerator(spec, variant=variant, layout="mobile")
            for seed in range(seeds):
                try:
                    made = gen.generate(per_variant, seed=seed, prefix=f"s{seed}-")
                except GenerationError:
                    continue
                out += [m.task for m in made]
    return out
