"""The web family's baselines: ``random`` (valid clicks and words, seeded) and ``noop``."""

from __future__ import annotations

import random
from typing import Any

from palaestra.envs.runtimes.axtree import action, click, fill, find, parse
from palaestra.tasks import Task

#: what a random agent clicks: elements of these roles that carry a bid
CLICKABLE = ("button", "link", "textbox", "checkbox", "radio", "generic", "option")
WORDS = ("yes", "hello", "42", "submit")


class RandomPolicy:
    """Valid actions drawn from the observation, seeded: a click on a random element of the tree,
    one time in five a random word typed into it (``noop(0)`` when the tree shows none)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = random.Random(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        nodes = find(parse(observation.get("axtree", "")), CLICKABLE)
        if not nodes:
            return action("noop", 0)
        node = self.rng.choice(nodes)
        if self.rng.random() < 0.2:
            return fill(node, self.rng.choice(WORDS))
        return click(node)


#: the do-nothing policy: it says at once that it is done (what execution validation runs)
NOOP = "done()"
