"""The CAD family's scripted policies, found by :class:`palaestra.family.Family` in ``POLICIES``.

- ``replay``: plays a fixed action list; every CAD oracle is one
  (``{"policy": "replay", "data": ["new_sketch('XY')", ..., "submit()"]}``).
- ``noop``: submits the empty model at once (execution validation's do-nothing).
- ``random``: :class:`RandomPolicy`, valid modeling calls drawn with a seeded generator from
  what the observation shows.

``ADVERSARIES`` are the cheap strategies a reward hacker would try, each generic (the same
code for every part): submit the target's bounding box, its top outline extruded, that
outline's convex hull extruded, its visual hull (top, front and right outlines intersected), its
turned profile, a box of the right volume, nothing at all; or farm the dense reward by undoing
and redoing a rewarded step. Execution validation plays every one, and a task ships only if
each fails it (success false and rewards summed at most 0.1). An agent reads the outlines off
the target's renders and the spec; the adversaries take them from the target solid itself
(:func:`palaestra.verifiers.geometry.outlines`), which is exact, so they are at least as strong
as an agent approximating from pixels.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from palaestra.envs.cad.actions import CAD_ACTIONS
from palaestra.envs.cad.suites import build_target
from palaestra.policies import ConstantPolicy, Policy, PolicyFactory, ReplayPolicy
from palaestra.tasks import Task
from palaestra.verifiers import geometry

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


# ----- adversaries ------------------------------------------------------------------------
Plan = Callable[[Any], list[str]]


class PlannedPolicy:
    """Plays the actions ``plan(target solid)`` gives at reset, then submits."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.inner = ReplayPolicy([])

    def reset(self, task: Task | None) -> None:
        if task is None:
            raise ValueError("an adversary needs the task it attacks")
        self.inner = ReplayPolicy([*self.plan(build_target(task.setup)), "submit()"])
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return self.inner.act(observation, info)


def _f(x: float) -> str:
    return f"{round(float(x), 3):g}"


def _box(target: Any) -> tuple[Any, Any, tuple[float, float, float]]:
    bb = target.bounding_box()
    return bb.min, bb.max, geometry.bbox_size(target)


def _extruded(rings: list[geometry.Outline], target: Any) -> list[str]:
    """Outlines in the top view, extruded over the target's height."""
    lo, hi, _ = _box(target)
    return [
        f"new_sketch('XY', {_f(lo.Z)})",
        *[f"polygon('{geometry.outline_text(r)}')" for r in rings],
        f"extrude({_f(hi.Z - lo.Z)})",
    ]


def _carve(view: str, target: Any) -> list[str]:
    """Cut away everything outside the target's outline in a side view."""
    lo, hi, size = _box(target)
    plane, (i, j) = {"front": "XZ", "right": "YZ"}[view], geometry.VIEWS[view][1]
    big = 4 * max(size) + 10
    centre = [(a + b) / 2 for a, b in zip(tuple(lo), tuple(hi), strict=True)]
    return [
        f"new_sketch('{plane}')",
        f"rectangle({_f(big)}, {_f(big)}, {_f(centre[i])}, {_f(centre[j])})",
        *[
            f"polygon('{geometry.outline_text(r)}', mode='subtract')"
            for r in geometry.outlines(target, view)
        ],
        f"extrude({_f(big)}, mode='cut', direction='both')",
    ]


def bbox_plan(target: Any) -> list[str]:
    """The bounding box as a box: no holes, no fillets, IoU 0.965 on a plate."""
    lo, hi, (sx, sy, sz) = _box(target)
    return [
        f"new_sketch('XY', {_f(lo.Z)})",
        f"rectangle({_f(sx)}, {_f(sy)}, {_f((lo.X + hi.X) / 2)}, {_f((lo.Y + hi.Y) / 2)})",
        f"extrude({_f(sz)})",
    ]


def volume_plan(target: Any) -> list[str]:
    """A box on the target's footprint, its height set so its volume is the target's."""
    lo, hi, (sx, sy, _) = _box(target)
    height = geometry.volume(target) / max(sx * sy, 1e-9)
    return [
        f"new_sketch('XY', {_f(lo.Z)})",
        f"rectangle({_f(sx)}, {_f(sy)}, {_f((lo.X + hi.X) / 2)}, {_f((lo.Y + hi.Y) / 2)})",
        f"extrude({_f(height)})",
    ]


def outline_plan(target: Any) -> list[str]:
    """The top view's outer outline extruded: a plate's outline without its holes."""
    return _extruded(geometry.outlines(target, "top"), target)


def hull_plan(target: Any) -> list[str]:
    return _extruded(geometry.hull_outline(target), target)


def views_plan(target: Any) -> list[str]:
    """The visual hull: the top outline extruded, carved by the front and right outlines."""
    return [*outline_plan(target), *_carve("front", target), *_carve("right", target)]


def turned_plan(target: Any) -> list[str]:
    """The front and right outlines' profile revolved about Z (a lathe part's envelope)."""
    out = []
    for ring in geometry.half_profile(target):
        out += [
            "new_sketch('XZ')",
            f"polygon('{geometry.outline_text(ring)}')",
            "revolve(360, 'Z')",
        ]
    return out


def farm_plan(target: Any, toggles: int = 2) -> list[str]:
    """The bounding box, then undo and redo its extrusion over and over: a reward paid per
    step for a level (not for a change) would pay again at every redo."""
    steps = bbox_plan(target)
    return [*steps, *["undo()", steps[-1]] * toggles]


class RepeatPolicy:
    """The oracle's first rewarded step repeated: its actions up to the first that makes
    material (the base body), then undo and that action again, over and over."""

    def __init__(self, toggles: int = 2) -> None:
        self.toggles = toggles
        self.inner = ReplayPolicy([])

    def reset(self, task: Task | None) -> None:
        oracle = list(task.oracle.data or []) if task is not None and task.oracle else []
        cut = next(
            (i for i, a in enumerate(oracle) if str(a).startswith(("extrude(", "revolve("))), -1
        )
        first = [str(a) for a in oracle[: cut + 1]]
        again = ["undo()", first[-1]] * self.toggles if first else []
        self.inner = ReplayPolicy([*first, *again, "submit()"])
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return self.inner.act(observation, info)


def _planned(plan: Plan) -> PolicyFactory:
    return lambda **_: PlannedPolicy(plan)


#: each name -> a factory; execution validation plays them all (``palaestra.family``)
ADVERSARIES: dict[str, PolicyFactory] = {
    "bbox": _planned(bbox_plan),
    "outline": _planned(outline_plan),
    "hull": _planned(hull_plan),
    "views": _planned(views_plan),
    "turned": _planned(turned_plan),
    "volume": _planned(volume_plan),
    "claim": lambda **_: ConstantPolicy("submit()"),
    "farm": _planned(farm_plan),
    "repeat": lambda **_: RepeatPolicy(),
}

#: adversaries whose point is the dense reward: validation plays them with it on
DENSE_ADVERSARIES = ("farm", "repeat")

POLICIES: dict[str, PolicyFactory] = {
    "replay": ReplayPolicy,
    "noop": noop,
    "random": RandomPolicy,
}
