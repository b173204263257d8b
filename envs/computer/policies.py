"""The computer family's scripted policies, found by :class:`palaestra.family.Family` in
``POLICIES``.

- ``replay``: plays a fixed action list; every computer oracle is one
  (``{"policy": "replay", "data": ["run_shell('mkdir -p ~/projects/alpha')"]}``).
- ``noop``: does nothing at all, so the episode is scored as the task set it up (execution
  validation's do-nothing: no action, then the verifier). It ends the episode without a step;
  the runner verifies.
- ``random``: :class:`RandomPolicy`, seeded GUI actions on the screen the observation shows.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from palaestra.envs.computer.actions import COMPUTER_ACTIONS
from palaestra.policies import Policy, PolicyFactory, ReplayPolicy
from palaestra.tasks import Task

#: keys a random user presses: harmless on any app (no logout, no window-manager chords)
KEYS = ("Return", "Tab", "Escape", "BackSpace", "Up", "Down", "Left", "Right", "ctrl+a", "ctrl+s")


class RandomPolicy:
    """Seeded random GUI input, the desktop's random agent: clicks, double and right clicks,
    pointer moves, scrolls, typed words and key presses, at points inside the screenshot of the
    observation (so every one is valid for the action set and on this session's screen). It
    never runs code: random shell text has no place on a desktop baseline."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        screen = observation.get("screenshot")
        height, width = np.shape(screen)[:2] if screen is not None else (768, 1024)

        def point() -> dict[str, int]:
            return {"x": int(rng.integers(0, width)), "y": int(rng.integers(0, height))}

        name = str(
            rng.choice(
                ["click", "double_click", "right_click", "move", "scroll", "type_text", "key"],
                p=[0.3, 0.1, 0.05, 0.1, 0.1, 0.2, 0.15],
            )
        )
        args: dict[str, Any]
        if name in ("click", "double_click", "right_click", "move"):
            args = point()
        elif name == "scroll":
            args = {**point(), "dy": int(rng.integers(-5, 6))}
        elif name == "type_text":
            letters = rng.choice(list(string.ascii_lowercase), size=int(rng.integers(1, 9)))
            args = {"text": "".join(letters)}
        else:
            args = {"combo": str(rng.choice(KEYS))}
        action = {"name": name, "args": args}
        COMPUTER_ACTIONS.parse(action)  # a policy bug, never an agent mistake, if this raises
        return action


def noop(**_: Any) -> Policy:
    """No action at all: the episode is scored as the task set it up."""
    return ReplayPolicy([])


POLICIES: dict[str, PolicyFactory] = {
    "replay": ReplayPolicy,
    "noop": noop,
    "random": RandomPolicy,
}
