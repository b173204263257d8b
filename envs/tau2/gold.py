"""The gold assistant of a tau2 task (the ``tau2_gold`` oracle): each domain's script, by task.

The gold assistant plays the task's gold actions with the messages they need, learning every
value it needs from the user, as a real agent must (so its pass rate measures the symbolic
user): :func:`.retail_gold.play`, :func:`.telecom_gold.play`, generators a
:class:`~palaestra.policies.CoroutinePolicy` plays.
"""

from __future__ import annotations

from typing import Any

from palaestra.envs.tau2 import tasks
from palaestra.policies import CoroutinePolicy
from palaestra.tasks import Task


def _script(task: Task | None) -> Any:
    domain = task.setup.get("tau2") if task is not None else None
    if task is None or domain not in ("retail", "telecom"):
        raise ValueError("the tau2 gold assistant plays a tau2 task (setup['tau2'])")
    raw = tasks.get(domain, task.setup["task_id"])
    if domain == "retail":
        from palaestra.envs.tau2 import retail_gold

        return retail_gold.play(raw)
    from palaestra.envs.tau2 import telecom_gold

    return telecom_gold.play(raw)


def GoldAssistant(seed: int = 0) -> CoroutinePolicy:
    """The gold assistant (its moves do not depend on ``seed``: the user's wording may)."""
    return CoroutinePolicy(_script)
