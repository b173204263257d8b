"""CAD check kinds: geometry compared with the task's target on the real B-rep kernel.

The probe's ``read()`` gives ``{"part": Shape | None, "target": Shape}`` (worker-side objects,
never serialised). Every check compares the part with measurements of the *target solid*, so a
task stores only tolerances, not numbers that could drift from the geometry. Target
measurements are cached on the target object, which the worker keeps per task.

``cad_part`` bundles the leaves: it succeeds only when every child passes (IoU at least the
threshold *and* the dimensions and features right), and its score, the potential whose change
is the dense reward, pays for detail, not for the outline (:func:`part_score`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    features = _matched(
        list(_memo(target, "round_features", geometry.round_features)),
        list(geometry.round_features(part)),
        lambda a, b: a[2] == b[2] and abs(a[1] - b[1]) <= tol and _same_line(a[0], b[0]),
    )
    return _leaf("cad_dims", ok, detail, features)


@check_kind("cad_holes")
def cad_holes(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Holes: the same number, through or blind, with the same radii and (blind) depths."""
    part, target = _shapes(probe)
    tol = float(spec.get("tol", 0.1))

    def sig(hs: list[dict[str, Any]]) -> list[tuple[bool, float, float]]:
        return sorted((h["through"], h["radius"], 0.0 if h["through"] else h["depth"]) for h in hs)

    target_holes = _memo(target, "holes", geometry.holes)
    part_holes = geometry.holes(part)
    want, have = sig(target_holes), sig(part_holes)
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
        _matched(target_holes, part_holes, lambda a, b: _same_hole(a, b, tol)),
    )


def _same_hole(a: dict[str, Any], b: dict[str, Any], tol: float) -> bool:
    """The same hole: through or blind alike, radius (and a blind one's depth) within ``tol``,
    on the same axis line (so a hole drilled elsewhere is no credit)."""
    return (
        a["through"] == b["through"]
        and abs(a["radius"] - b["radius"]) <= tol
        and (a["through"] or abs(a["depth"] - b["depth"]) <= tol)
        and _same_line(a["axis"] + a["at"], b["axis"] + b["at"])
    )


def _same_line(a: Sequence[float], b: Sequence[float], tol: float = 0.1) -> bool:
    """Two axis lines given as (direction, point nearest the origin) are one line."""
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def _matched(want: Sequence[Any], have: Sequence[Any], same: Callable[[Any, Any], bool]) -> float:
    """The share of features found on both sides, each matched once (extra features on the
    part count against it): 1 when both have none."""
    if not want and not have:
        return 1.0
    free = list(have)
    found = 0
    for w in want:
        hit = next((i for i, h in enumerate(free) if same(w, h)), None)
        if hit is not None:
            free.pop(hit)
            found += 1
    return found / max(len(want), len(have))


@check_kind("cad_faces")
def cad_faces(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Topology: as many faces of each surface type (plane, cylinder, cone, torus, ...) as the
    target, so a missing chamfer (a cone or a plane), fillet or step shows even where its
    volume is too small for the IoU. Partial credit: the share of faces that pair up by type."""
    part, target = _shapes(probe)
    want = _memo(target, "face_types", geometry.face_types)
    have = geometry.face_types(part)
    common = sum((want & have).values())
    score = common / max(sum(want.values()), sum(have.values()), 1)
    ok = want == have
    detail = ", ".join(f"{n} {kind.lower()}" for kind, n in sorted(have.items())) or "no faces"
    return _leaf(
        "cad_faces", ok, f"faces: {detail}" + ("" if ok else " (the target's differ)"), score
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


#: what a part that fails any check can score at most: full marks are for a right part only
PARTIAL_CAP = 0.9


@check_kind("cad_part")
def cad_part(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    kids = [evaluate(c, probe) for c in spec["checks"]]
    passed = all(k.passed for k in kids)
    iou = next((k.score for k in kids if k.kind == "cad_iou"), None)
    if iou is None:
        return CheckResult(
            "cad_part", passed, sum(k.score for k in kids) / max(len(kids), 1), "", kids
        )
    _, target = _shapes(probe)
    base = _memo(target, "envelope_iou", geometry.envelope_iou)
    details = [k.score for k in kids if k.kind != "cad_iou"]
    score = part_score(passed, iou, base, details)
    detail = f"progress beyond the outline {detail_progress(iou, base):.3f} (its IoU {base:.3f})"
    return CheckResult("cad_part", passed, score, detail, kids)


def detail_progress(iou: float, base: float) -> float:
    """How far the part's IoU has gone from the best envelope's (``base``, 0) to the target
    (1): the geometry that reading the outline could not give."""
    if base >= 1 - 1e-6:  # the target is its own envelope: the outline is the whole answer
        return 0.0
    return min(1.0, max(0.0, (iou - base) / (1 - base)))


def part_score(passed: bool, iou: float, base: float, details: Sequence[float]) -> float:
    """The potential of a part: 1 when every check passes, else at most :data:`PARTIAL_CAP`
    times the progress beyond the envelope (:func:`detail_progress`), weighted half by the
    detail checks' partial credit (round features matched on their axes, holes matched in
    place, faces paired by surface type, bounding box, surface distance).

    Why this shape. Volumetric IoU alone pays for the outline: a plate's bounding box has IoU
    0.965 with the plate, holes and fillets being a few percent of its volume, so an envelope
    read off the views scored nearly full marks. Measuring IoU from the envelope's own IoU
    (the best of the bounding box, the extruded top outline, its convex hull, the visual hull
    of three views and the turned profile, all computed from the target) makes anything
    the outline gives away worth 0, and every step that models what the outline hides (a hole
    in place, a keyway, a shell) worth its share. The detail factor keeps the IoU from paying
    alone (a right-volume cut of the wrong shape gains less than the right feature), and it
    cannot pay without the IoU (the envelope passes the bounding-box check: still 0).

    The env's dense reward is the change of this potential per step, so an episode's rewards
    sum to the end state's score whatever the path: oscillating (undo/redo, adding and
    removing a feature) earns exactly nothing, and no repeated action farms reward.
    """
    if passed:
        return 1.0
    mean = sum(details) / len(details) if details else 1.0
    return PARTIAL_CAP * detail_progress(iou, base) * (0.5 + 0.5 * mean)
