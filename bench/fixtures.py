"""Benchmark fixtures: envs that exist to measure the platform, not product families.

``palaestra-bench/Overhead-v0`` does almost no work per step (it adds to a counter), so timing it
through the gateway measures pure platform overhead: HTTP, JSON, the worker hop and the client.
Its suite ``palaestra-bench`` has a few counting tasks with verifiers and oracles so the demo
and tests exercise the whole scoring path. It is registered with ``fixture=True``; listings mark
it as such.

The kernel does not load them: who needs them says so. :func:`use_fixtures` names
:func:`register_fixtures` in ``PALAESTRA_PLUGINS``, so this process and every worker it starts
(workers inherit the variable; Ray's and Docker's are handed it) register them. The command line
does this for every command (``palaestra serve`` serves them, ``palaestra bench`` measures with
them) and the tests' ``conftest.py`` for the tests.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import Field

from palaestra.actions import Action, ActionSet, Param, primitive
from palaestra.envs.base import PalaestraEnv
from palaestra.options import EnvOptions
from palaestra.registry import PLUGINS_ENV_VAR, EnvSpec, load_plugins, register
from palaestra.spaces import FreeText
from palaestra.tasks import Oracle, PublicMetadata, Task, register_suite
from palaestra.verifiers import StateProbe

ENV_ID = "palaestra-bench/Overhead-v0"
SUITE = "palaestra-bench"
LIMIT = 1000
#: the ``PALAESTRA_PLUGINS`` entry that registers the fixtures
PLUGIN = f"{__name__}:register_fixtures"


class OverheadOptions(EnvOptions):
    """The counter's client options: a step costs nothing, so its budget may be huge."""

    max_steps: int | None = Field(default=None, ge=1, le=10**12)
    image_size: int = Field(default=0, ge=0, le=1024, description="Screenshot side (0: none)")


class _CounterProbe:
    def __init__(self, env: OverheadEnv) -> None:
        self._env = env

    def read(self) -> dict[str, Any]:
        return {"count": self._env.count}


class OverheadEnv(PalaestraEnv):
    """A counter. ``image_size`` > 0 adds a screenshot to measure image transport too."""

    family = "bench"
    action_set = ActionSet(
        [
            primitive("add", "Add n to the counter.", Param("n", "int", minimum=-10, maximum=10)),
            primitive("done", "Declare the task finished."),
        ],
        name="overhead",
    )

    def __init__(self, task: Any = None, *, image_size: int = 0, **kwargs: Any) -> None:
        super().__init__(task, **kwargs)
        self.image_size = image_size
        parts: dict[str, spaces.Space] = {
            "count": spaces.Discrete(2 * LIMIT + 1, start=-LIMIT),
            "goal": FreeText(1000),
            "last_action_error": FreeText(2000),
        }
        if image_size:
            parts["screenshot"] = spaces.Box(0, 255, (image_size, image_size, 3), np.uint8)
        self.observation_space = spaces.Dict(parts)
        self.count = 0

    def _setup(self, task: Task | None) -> None:
        self.count = int(task.setup.get("start", 0)) if task else 0

    def _apply(self, action: Action) -> bool:
        if action.name == "done":
            return True
        self.count = max(-LIMIT, min(LIMIT, self.count + action.args["n"]))
        return False

    def _observe(self) -> dict[str, Any]:
        obs: dict[str, Any] = {
            "count": self.count,
            "goal": self.task.instruction if self.task else "",
        }
        if self.image_size:
            obs["screenshot"] = self.render()
        return obs

    def render(self) -> np.ndarray:
        size = self.image_size or 64
        img = np.zeros((size, size, 3), np.uint8)
        img[:, :, 0] = np.arange(size, dtype=np.uint8)[None, :]
        img[:, :, 1] = (self.count * 7) % 256
        return img

    def state_probe(self) -> StateProbe:
        return _CounterProbe(self)


def counting_tasks() -> list[Task]:
    tasks = []
    for target in (3, 5, 10):
        tasks.append(
            Task(
                id=f"count-to-{target}",
                family="bench",
                env=ENV_ID,
                instruction=f"Make the counter show {target}, then call done().",
                setup={"start": 0},
                verifier={"kind": "equals", "path": "count", "value": target},
                max_steps=20,
                metadata={"source": "palaestra-bench", "difficulty": "trivial"},
                public=PublicMetadata(difficulty="trivial"),
                oracle=Oracle(
                    policy="replay",
                    data=[f"add({min(10, target - k)})" for k in range(0, target, 10)] + ["done()"],
                ),
            )
        )
    return tasks


def register_fixtures() -> None:
    register(
        EnvSpec(
            ENV_ID,
            "palaestra.bench.fixtures:OverheadEnv",
            family="bench",
            description="Benchmark fixture: a counter that measures pure platform overhead.",
            fixture=True,
            options="palaestra.bench.fixtures:OverheadOptions",
        )
    )
    register_suite(SUITE, counting_tasks, "Counting tasks on the overhead fixture")


def use_fixtures() -> None:
    """Register the fixtures in this process and in every worker it starts, by naming them in
    ``PALAESTRA_PLUGINS``; calling it twice is harmless."""
    refs = [ref.strip() for ref in os.environ.get(PLUGINS_ENV_VAR, "").split(",") if ref.strip()]
    if PLUGIN not in refs:
        os.environ[PLUGINS_ENV_VAR] = ",".join([*refs, PLUGIN])
    load_plugins()
