"""How the mobile family's synthesized tasks are validated (``Family.validation``): the
synthesized apps' plan (:class:`~palaestra.synth_apps.validation.SynthPlan`) on the embedded
phone (``palaestra/mobile-v0``), reading the element list; a plan is played in the task's app,
named by its title."""

from __future__ import annotations

from typing import Any

from palaestra.envs.mobile import FAMILY
from palaestra.policies import Policy
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.validation import SynthPlan
from palaestra.tasks import Task


def _plan_policy(task: Task, plan: list[dict[str, Any]]) -> Policy:
    return FAMILY.policy("plan", plan=plan, app=spec_for(task.setup["app"]).title)


PLAN = SynthPlan(
    "mobile",
    "palaestra/mobile-v0",
    ("ui_elements", "foreground_app", "goal", "chat"),
    _plan_policy,
)
