"""The CAD family's strategy space for adversary search: envelopes of the target, combined.

The named adversaries (:mod:`palaestra.envs.cad.policies`) each submit one envelope of the
target (its bounding box, top outline, convex hull, visual hull, turned profile, a box of its
volume). The search plays short programs of those pieces in sequence, which no named one plays:
two bodies unioned (a hull on a turned profile), a body carved by one side view only (the
front outline, or the right), a carve before a second body, each then submitted (or, stopped
early, never submitted). As for the named ones, the outlines are taken from the target solid
itself, exact, so they are at least as strong as an agent reading them off the target's renders
and the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.envs.cad import policies as P
from palaestra.envs.cad.suites import build_target
from palaestra.tasks import Task
from palaestra.verifiers.search import Memory, Search, StrategySpace, script

#: episodes searched per task: a CAD episode costs about 0.7 s (see docs/verifiers.md)
BUDGET = 3
PIECES: dict[str, Callable[[Any], list[str]]] = {
    "bbox": P.bbox_plan,
    "outline": P.outline_plan,
    "hull": P.hull_plan,
    "turned": P.turned_plan,
    "volume": P.volume_plan,
    "carve_front": lambda target: P._carve("front", target),
    "carve_right": lambda target: P._carve("right", target),
}


def space(task: Task) -> StrategySpace:
    target: list[Any] = []

    def piece(name: str) -> Callable[[Memory, int], list[str]]:
        def phase(memory: Memory, param: int) -> list[str]:
            if not target:
                target.append(build_target(task.setup))
            return PIECES[name](target[0])

        return phase

    return StrategySpace(
        [script(name, piece(name)) for name in PIECES],
        lambda memory, observation, info: None,
        end=["submit()"],
        cuts=(3,),
    )


def search_for(task: Task, play: Callable[[Any], Any], budget: int = BUDGET) -> Search:
    return Search.of(task, space(task), play, budget)
