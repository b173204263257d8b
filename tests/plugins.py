"""Envs that exist only for the tests (registered through PALAESTRA_PLUGINS, fixture=True)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import Field

from palaestra.actions import Action, ActionSet, Param, primitive
from palaestra.envs.base import PalaestraEnv
from palaestra.errors import ActionError
from palaestra.family import Family, SuiteSpec
from palaestra.options import EnvOptions
from palaestra.policies import ConstantPolicy, ReplayPolicy, SpacePolicy
from palaestra.registry import EnvSpec
from palaestra.spaces import FreeText
from palaestra.tasks import Task, register_suite


class _Probe:
    def __init__(self, env: FaultyEnv) -> None:
        self.env = env

    def read(self) -> dict[str, Any]:
        if self.env.broken_probe:
            raise RuntimeError("probe exploded")
        return {"oks": self.env.oks}


class FaultyOptions(EnvOptions):
    """The test family's client options (misbehaving on request is the point of it)."""

    allow_faults: bool = Field(default=False, description="Let sleep() and crash() act")
    broken_probe: bool = Field(default=False, description="Make the state probe raise")


class FaultyEnv(PalaestraEnv):
    """Misbehaves on request: sleeps, raises, breaks its probe. Renders a small image."""

    family = "test"
    action_set = ActionSet(
        [
            primitive("ok", "Count one ok."),
            primitive(
                "sleep", "Block for a while.", Param("seconds", "float", minimum=0, maximum=60)
            ),
            primitive("crash", "Raise from env code."),
            primitive("finish", "End the episode."),
        ]
    )

    def __init__(
        self, task: Any = None, *, allow_faults: bool = False, broken_probe: bool = False, **kw: Any
    ) -> None:
        super().__init__(task, **kw)
        self.allow_faults = allow_faults
        self.broken_probe = broken_probe
        self.oks = 0
        self.observation_space = spaces.Dict(
            {
                "oks": spaces.Discrete(10_000),
                "screen": spaces.Box(0, 255, (8, 8, 3), np.uint8),
                "last_action_error": FreeText(2000),
            }
        )

    def _setup(self, task: Task | None) -> None:
        self.oks = 0

    def _apply(self, action: Action) -> bool:
        if action.name in ("sleep", "crash") and not self.allow_faults:
            raise ActionError(f"{action.name}() needs the option allow_faults=True")
        if action.name == "ok":
            self.oks += 1
        elif action.name == "sleep":
            time.sleep(action.args["seconds"])
        elif action.name == "crash":
            raise RuntimeError("boom")
        return action.name == "finish"

    def _observe(self) -> dict[str, Any]:
        return {"oks": self.oks, "screen": self.render()}

    def render(self) -> np.ndarray:
        img = np.zeros((8, 8, 3), np.uint8)
        img[..., 0] = min(255, self.oks)
        img[0, 0] = (1, 2, 3)
        return img

    def state_probe(self) -> _Probe:
        return _Probe(self)


def web_test_tasks() -> list[Task]:
    """Tasks on the test site (a copy made by conftest, with a file that never finishes)."""
    site = os.environ.get("PALAESTRA_TEST_SITE", str(Path(__file__).parent / "envs/web/site"))
    home = Task(
        id="home",
        family="web",
        env="palaestra/web-v0",
        instruction="Go to the second page.",
        setup={
            "sites": {"site": site},
            "start_url": "{site}/index.html",
            "viewport": [640, 480],
        },
        verifier={"kind": "regex", "path": "url", "pattern": "page2"},
        max_steps=20,
    )
    # under-specified: the card number is held by the simulated user (ask_user)
    ask = home.model_copy(
        update={
            "id": "ask",
            "instruction": "Pay with the card the user wants.",
            "setup": {**home.setup, "user": {"card number": "4929123412341234"}},
        }
    )
    return [home, ask]


def faulty_tasks() -> list[Task]:
    """Count to three and finish; scored by the test family's own check kind."""
    return [
        Task(
            id="count-3",
            family="test",
            env="palaestra-test/Faulty-v0",
            instruction="Say ok three times, then finish.",
            verifier={"kind": "test_oks", "at_least": 3},
            max_steps=10,
            oracle={"policy": "replay", "data": ["ok()", "ok()", "ok()", "finish()"]},
        )
    ]


#: The test family's scripted policies, behind the one Policy protocol (``oracle`` is generic).
POLICIES = {
    "replay": ReplayPolicy,
    "noop": lambda: ConstantPolicy("finish()"),
    "random": lambda seed=0: SpacePolicy(FaultyEnv.action_set.space(), seed),
}

#: A whole family in one descriptor: what `docs/adding-a-family.md` walks through. Its env, suite,
#: policies (this module) and check kind (tests/plugin_checks.py) are found through it alone.
FAMILY = Family(
    name="test",
    envs=(
        EnvSpec(
            "palaestra-test/Faulty-v0",
            "tests.plugins:FaultyEnv",
            family="test",
            description="Test fixture: sleeps, crashes and breaks on request.",
            fixture=True,
        ),
    ),
    suites=(SuiteSpec("faulty", faulty_tasks, "Counting tasks of the test family"),),
    policies="tests.plugins",
    checks=("tests.plugin_checks",),
    options="tests.plugins:FaultyOptions",
    description="The tests' own family.",
)


def register_web_test_suite() -> None:
    """A web-family suite that only the tests use (pages that misbehave)."""
    register_suite("webtest", web_test_tasks, "Pages that misbehave, for the web env's tests")
