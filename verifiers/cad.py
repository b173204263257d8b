"""CAD check kinds: geometry compared with the task's target on the real B-rep kernel.

The probe's ``read()`` gives ``{"part": Shape | None, "target": Shape}`` (worker-side objects,
never serialised). Every check compares the part with measurements of the *target solid*, so a
task stores only tolerances, not numbers that could drift from the geometry. Target
measurements are cached on the target object, which the worker keeps per task.

``cad_part`` bundles the leaves the way the issue scores a part: its score is the IoU (so the
dense reward, the change of the score, is the change of IoU), and it succeeds only when every
child passes (IoU at least the threshold *and* the dimensions and features right).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.verifiers import geometry
from palaestra.verifiers.base import CheckResult, StateProbe, check_kind, evaluate


def _memo(shape: Any, key: str, fn: Callable[[Any], Any]) -> Any:
    attr = f"_palaestra_{key}"
    if shape is None:
        return fn(shape)
    if not hasattr(shape, attr):
        setattr(shape, attr, fn(shape))
    return getattr(shape, attr)


def _shapes(probe: StateProbe) -> tuple[Any, Any]:
    state = probe.read()
    return state.get("part"), state["target"]


def _leaf(kind: str, passed: bool, detail: str, score: float | None = None) -> CheckResult:
    return CheckResult(kind, passed, float(passed) if score is None else score, detail)


@check_kind("cad_iou")
def cad_iou(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    part, target = _shapes(probe)
    value = geometry.iou(part, target)
    threshold = float(spec.get("min", 0.95))
    return _leaf("cad_iou", value >= threshold, f"IoU {value:.4f} (need {threshold})", value)


@check_kind("cad_bbox")
def cad_bbox(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    part, target = _shapes(probe)
    tol = float(spec.get("tol", 0.1))
    if part is None or not geometry.solids_of(part):
        return _leaf("cad_bbox", False, "no part")
    pb, tb = part.bounding_box(), target.bounding_box()
    worst = max(
        max(abs(a - b) for a, b in zip(tuple(pb.min), tuple(tb.min), strict=True)),
        max(abs(a - b) for a, b in zip(tuple(pb.max), tuple(tb.max), strict=True)),
    )
    return _leaf("cad_bbox", worst <= tol, f"bounding box off by up to {worst:.3f} mm (tol {tol})")


@check_kind("cad_dims")
def cad_dims(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Key dimensions: the radii of every round feature (holes, bores, bosses, fillets)."""
    part, target = _shapes(probe)
    tol = float(spec.get("tol", 0.05))
    want = sorted(_memo(target, "radii", geometry.cylinder_radii).elements())
    have = sorted(geometry.cylinder_radii(part).elements())
    ok = len(want) == len(have) and all(abs(a - b) <= tol for a, b in zip(want, have, strict=True))
    verdict = "matching" if ok else "not matching"
    detail = f"{len(have)} round feature radii, {verdict} the target's {len(want)}"
    return _leaf("cad_dims", ok, detail)


@check_kind("cad_holes")
def cad_holes(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Holes: the same number, through or blind, with the same radii and (blind) depths."""
    part, target = _shapes(probe)
    tol = float(spec.get("tol", 0.1))

    def sig(hs: list[dict[str, Any]]) -> list[tuple[bool, float, float]]:
        return sorted((h["through"], h["radius"], 0.0 if h["through"] else h["depth"]) for h in hs)

    want = sig(_memo(target, "holes", geometry.holes))
    have = sig(geometry.holes(part))
    ok = len(want) == len(have) and all(
        a[0] == b[0] and abs(a[1] - b[1]) <= tol and abs(a[2] - b[2]) <= tol
        for a, b in zip(want, have, strict=True)
    )
    nt = sum(1 for h in have if h[0])
    return _leaf(
        "cad_holes",
        ok,
        f"{nt} through and {len(have) - nt} blind hole(s); the target has "
        f"{sum(1 for h in want if h[0])} and {sum(1 for h in want if not h[0])}"
        + ("" if ok else " (or their sizes differ)"),
    )


@check_kind("cad_chamfer_distance")
def cad_chamfer_distance(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    part, target = _shapes(probe)
    ratio = float(spec.get("max_ratio", 0.02))
    limit = ratio * target.bounding_box().diagonal
    pts_t = _memo(target, "points", geometry.surface_points)
    dist = geometry.chamfer_distance(geometry.surface_points(part), pts_t)
    return _leaf(
        "cad_chamfer_distance", dist <= limit, f"Chamfer distance {dist:.3f} mm (limit {limit:.3f})"
    )


@check_kind("cad_valid")
def cad_valid(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    part, _ = _shapes(probe)
    n = len(geometry.solids_of(part))
    ok = geometry.is_valid(part) and n == int(spec.get("solids", 1))
    return _leaf("cad_valid", ok, f"{n} solid(s), valid={geometry.is_valid(part)}")


@check_kind("cad_part")
def cad_part(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    kids = [evaluate(c, probe) for c in spec["checks"]]
    iou = next((k.score for k in kids if k.kind == "cad_iou"), None)
    score = iou if iou is not None else sum(k.score for k in kids) / max(len(kids), 1)
    return CheckResult("cad_part", all(k.passed for k in kids), score, "", kids)
