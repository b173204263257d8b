"""The CAD family's scripted policies, found by :class:`palaestra.family.Family` in ``POLICIES``.

- ``replay``: plays a fixed action list; every CAD oracle is one
  (``{"policy": "replay", "data": ["new_sketch('XY')", ..., "submit()"]}``).
- ``noop``: submits the empty model at once (execution validation's do-nothing).
- ``random``: :class:`RandomPolicy`, valid modeling calls drawn with a seeded generator from
  what the observation shows.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from palaestra.envs.cad.actions import CAD_ACTIONS
from palaestra.policies import ConstantPolicy, Policy, PolicyFactory, ReplayPolicy
from palaestra.tasks import Task

#: sketch planes and selectors that exist on every part, for observations without topology
BASE_PLANES = ("XY", "XZ", "YZ")
FALLBACK_FACES = (">Z", "<Z", ">X", "<X", ">Y", "<Y")
FALLBACK_EDGES = ("edges|Z", "edges|X", "edges|Y", "edges of >Z")


class RandomPolicy:
    """A seeded random modeler that reads the observation the way an agent does.

    With no part and no sketch it opens a sketch on a base plane; with an open sketch it draws
    a shape (an empty sketch) or extrudes, cuts or draws more; with a part it sketches on, drills
    into, rounds or bevels the faces and edges the topology lists by id, mirrors, undoes, or
    submits. Sizes follow the part's bounding box (20 mm before there is one). Every action is
    valid for the action set (checked with ``CAD_ACTIONS.parse``); the kernel may still refuse
    one (a fillet larger than its edge), which comes back as ``last_action_error`` like an
    agent's mistake.
    """

    def __init__(self, seed: int = 0, submit_p: float = 0.05) -> None:
        self.seed = seed
        self.submit_p = submit_p
        self.rng = np.random.default_rng(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        name, args = self._choose(observation)
        action = {"name": name, "args": args}
        CAD_ACTIONS.parse(action)  # a policy bug, never an agent mistake, if this raises
        return action

    # ----- choices ------------------------------------------------------------------------
    def _choose(self, obs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        rng = self.rng
        props = _json(obs.get("properties"))
        topo = _json(obs.get("topology"))
        history = str(obs.get("history", ""))
        sketch = _open_sketch(history)
        if "properties" in obs:
            has_part = bool(props.get("has_part"))
        else:  # a narrower observation: guess from the calls that make material
            has_part = any(f"{op}(" in history for op in ("extrude", "revolve", "run_code"))
        size = max(props.get("bbox_size") or [0.0]) or 20.0

        def mm(lo: float = 0.1, hi: float = 0.5) -> float:
            return round(float(rng.uniform(lo, hi)) * size, 1)

        def xy() -> dict[str, float]:
            return {
                "x": round(float(rng.uniform(-0.3, 0.3)) * size, 1),
                "y": round(float(rng.uniform(-0.3, 0.3)) * size, 1),
            }

        if sketch is not None and (sketch == "empty" or rng.random() < 0.3):
            shape = rng.choice(["rectangle", "circle", "polygon", "slot"])
            if shape == "rectangle":
                return "rectangle", {"width": mm(0.2, 1.0), "height": mm(0.2, 1.0), **xy()}
            if shape == "circle":
                return "circle", {"radius": mm(0.05, 0.4), **xy()}
            if shape == "polygon":
                return "polygon", {"sides": int(rng.integers(3, 9)), "radius": mm(0.1, 0.5), **xy()}
            return "slot", {
                "length": mm(0.3, 1.0),
                "width": mm(0.05, 0.2),
                **xy(),
                "angle": float(rng.choice([0.0, 45.0, 90.0])),
            }
        if sketch is not None:
            mode = "cut" if has_part and rng.random() < 0.4 else "add"
            return "extrude", {
                "distance": mm(0.1, 0.6),
                "mode": mode,
                "direction": str(rng.choice(["normal", "reverse", "both"])),
            }
        if not has_part:
            return "new_sketch", {"plane": str(rng.choice(BASE_PLANES))}
        if rng.random() < self.submit_p:
            return "submit", {}
        faces = [f["id"] for f in topo.get("faces", []) if f.get("type") == "PLANE"]
        edges = [e["id"] for e in topo.get("edges", [])]
        face = str(rng.choice(faces or FALLBACK_FACES))
        kind = rng.choice(
            ["new_sketch", "hole", "fillet", "chamfer", "mirror", "undo"],
            p=[0.35, 0.2, 0.15, 0.1, 0.1, 0.1],
        )
        if kind == "new_sketch":
            return "new_sketch", {"plane": face}
        if kind == "hole":
            return "hole", {"face": face, "position": "0,0", "radius": mm(0.03, 0.15)}
        if kind in ("fillet", "chamfer"):
            edge = str(rng.choice(edges or FALLBACK_EDGES))
            key = "radius" if kind == "fillet" else "length"
            return str(kind), {"edges": edge, key: mm(0.01, 0.08)}
        if kind == "mirror":
            return "mirror", {"plane": str(rng.choice(BASE_PLANES))}
        return "undo", {}


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _open_sketch(history: str) -> str | None:
    """What the open sketch holds per the history's last line ("empty", the items), or None."""
    last = history.rsplit("\n", 1)[-1]
    if not last.startswith("(open sketch on "):
        return None
    return last.rstrip(")").rsplit(": ", 1)[-1]


def noop(**_: Any) -> Policy:
    """Submit the empty model at once."""
    return ConstantPolicy("submit()")


POLICIES: dict[str, PolicyFactory] = {
    "replay": ReplayPolicy,
    "noop": noop,
    "random": RandomPolicy,
}
