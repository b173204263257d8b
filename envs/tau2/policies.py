"""The tau2 family's scripted policies, behind the one Policy protocol.

- ``tau2_gold``: the gold assistant (:mod:`.gold`), every task's oracle
  (``{"policy": "tau2_gold"}``): the gold actions and the messages they need, learning each
  value from the symbolic user;
- ``random`` and ``noop``: the dialogue runtime's
  (:mod:`palaestra.envs.runtimes.dialogue.policies`).

``ADVERSARIES`` are the dialogue runtime's cheap strategies as tau2 plays them
(:mod:`.adversaries`); execution validation plays every one and keeps a task only if each fails.
"""

from __future__ import annotations

from palaestra.envs.runtimes.dialogue.policies import noop, random_moves
from palaestra.envs.tau2.adversaries import ADVERSARIES
from palaestra.envs.tau2.gold import GoldAssistant
from palaestra.policies import PolicyFactory

__all__ = ["ADVERSARIES", "POLICIES"]

POLICIES: dict[str, PolicyFactory] = {
    "tau2_gold": GoldAssistant,
    "random": random_moves,
    "noop": noop,
}
