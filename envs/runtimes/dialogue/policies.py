"""The policies every dialogue family offers besides its own scripted assistants: ``random``
(valid moves drawn from the action set, seeded) and ``noop`` (the conversation ended at once,
as execution validation's do-nothing run does)."""

from __future__ import annotations

from palaestra.envs.runtimes.dialogue.env import ACTIONS, end
from palaestra.policies import ConstantPolicy, Policy, SpacePolicy


def random_moves(seed: int = 0) -> Policy:
    return SpacePolicy(ACTIONS.space(), seed)


def noop(seed: int = 0) -> Policy:
    return ConstantPolicy(end())
