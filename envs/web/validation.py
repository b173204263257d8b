"""How the web family's synthesized tasks are validated (``Family.validation``): the synthesized
apps' plan (:class:`~palaestra.synth_apps.validation.SynthPlan`) on ``palaestra/web-v0``,
reading the accessibility tree. MiniWoB's tasks are scored by MiniWoB's own rewards and are not
validated here."""

from __future__ import annotations

from typing import Any

from palaestra.envs.web import FAMILY
from palaestra.policies import Policy
from palaestra.synth_apps.validation import SynthPlan
from palaestra.tasks import Task


def _plan_policy(task: Task, plan: list[dict[str, Any]]) -> Policy:
    return FAMILY.policy("plan", plan=plan)


PLAN = SynthPlan("web", "palaestra/web-v0", ("axtree", "url", "goal", "chat"), _plan_policy)
