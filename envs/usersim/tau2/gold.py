"""The gold assistant of a tau2 task (the ``tau2_gold`` oracle): each domain's, by the task.

The gold assistant plays the task's gold actions with the messages they need, learning every
value it needs from the user, as a real agent must (so its pass rate measures the symbolic
user): :class:`~.retail_gold.RetailGold`, :class:`~.telecom_gold.TelecomGold`.
"""

from __future__ import annotations

from typing import Any

from palaestra.policies import Policy
from palaestra.tasks import Task


class GoldAssistant:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.inner: Policy | None = None

    def reset(self, task: Task | None) -> None:
        domain = task.setup.get("tau2") if task is not None else None
        if domain == "retail":
            from palaestra.envs.usersim.tau2.retail_gold import RetailGold

            self.inner = RetailGold()
        elif domain == "telecom":
            from palaestra.envs.usersim.tau2.telecom_gold import TelecomGold

            self.inner = TelecomGold()
        else:
            raise ValueError("the tau2 gold assistant plays a tau2 task (setup['tau2'])")
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        assert self.inner is not None, "reset(task) first"
        return self.inner.act(observation, info)
