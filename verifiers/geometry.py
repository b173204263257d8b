"""Measurements of a solid: verifier logic, which the CAD env also shows in its observation.

Everything is computed by the kernel (OpenCascade through build123d): volumes and areas from
its mass properties, IoU from its booleans, holes from the cylindrical faces' real geometry. The
verifier and the agent therefore read the same numbers, and a check that fails can be explained
with what the agent already sees. The kernel's tessellation (:func:`mesh`) lives here too: the
surface samples of the Chamfer distance are drawn from it, and the env's renders reuse it.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
from build123d import GeomType, Shape, Vector

ROUND = 3


def r(x: float) -> float:
    return round(float(x), ROUND) + 0.0


def solids_of(shape: Shape | None) -> list[Any]:
    return list(shape.solids()) if shape is not None else []


def volume(shape: Shape | None) -> float:
    return float(shape.volume) if shape is not None and solids_of(shape) else 0.0


def bbox_size(shape: Shape | None) -> tuple[float, float, float]:
    if shape is None or not solids_of(shape):
        return (0.0, 0.0, 0.0)
    bb = shape.bounding_box()
    return (bb.size.X, bb.size.Y, bb.size.Z)


def is_valid(shape: Shape | None) -> bool:
    return shape is not None and bool(shape.is_valid)


def properties(shape: Shape | None) -> dict[str, Any]:
    """The decision-relevant summary the agent sees after every step."""
    if shape is None or not solids_of(shape):
        return {"has_part": False, "volume": 0.0, "solids": 0}
    bb = shape.bounding_box()
    return {
        "has_part": True,
        "volume": r(shape.volume),
        "area": r(shape.area),
        "bbox_min": [r(bb.min.X), r(bb.min.Y), r(bb.min.Z)],
        "bbox_max": [r(bb.max.X), r(bb.max.Y), r(bb.max.Z)],
        "bbox_size": [r(bb.size.X), r(bb.size.Y), r(bb.size.Z)],
        "solids": len(solids_of(shape)),
        "faces": len(shape.faces()),
        "edges": len(shape.edges()),
        "valid": is_valid(shape),
        "holes": hole_summary(shape),
    }


def topology(shape: Shape | None, limit: int = 60) -> dict[str, list[dict[str, Any]]]:
    """Faces and edges with the ids selectors accept, cut at ``limit`` each for prompt size."""
    if shape is None:
        return {"faces": [], "edges": []}
    faces = []
    for i, f in enumerate(shape.faces()[:limit]):
        item: dict[str, Any] = {"id": f"f{i}", "type": f.geom_type.name, "center": _v(f.center())}
        item["area"] = r(f.area)
        if f.geom_type == GeomType.PLANE:
            item["normal"] = _v(f.normal_at())
        elif f.geom_type == GeomType.CYLINDER:
            item["radius"] = r(_radius(f))
        faces.append(item)
    edges = []
    for i, e in enumerate(shape.edges()[:limit]):
        item = {"id": f"e{i}", "type": e.geom_type.name, "center": _v(e.center())}
        item["length"] = r(e.length)
        if e.geom_type == GeomType.CIRCLE:
            item["radius"] = r(e.radius)
        edges.append(item)
    return {"faces": faces, "edges": edges}


def _radius(face: Any) -> float:
    from OCP.BRepAdaptor import BRepAdaptor_Surface

    return BRepAdaptor_Surface(face.wrapped).Cylinder().Radius()


def _v(v: Vector) -> list[float]:
    return [r(v.X), r(v.Y), r(v.Z)]


def iou(a: Shape | None, b: Shape | None) -> float:
    """Volumetric intersection over union with the kernel's boolean intersection."""
    va, vb = volume(a), volume(b)
    if va <= 0 or vb <= 0 or a is None or b is None:
        return 0.0
    try:
        inter = a & b
        vi = float(inter.volume) if inter is not None else 0.0
    except Exception:
        return 0.0
    union = va + vb - vi
    return max(0.0, min(1.0, vi / union)) if union > 0 else 0.0


def cylinder_radii(shape: Shape | None) -> Counter[float]:
    """Radii of the full-turn cylindrical features (holes, bores, bosses, fillets merged by
    axis), rounded to 0.01 mm: what a drawing would dimension."""
    out: Counter[float] = Counter()
    for (_axis, radius, _concave), _group in _cylinder_groups(shape).items():
        out[radius] += 1
    return out


def face_types(shape: Shape | None) -> Counter[str]:
    """How many faces of each surface type (PLANE, CYLINDER, CONE, ...) the solid has."""
    return Counter(f.geom_type.name for f in shape.faces()) if shape is not None else Counter()


def round_features(shape: Shape | None) -> list[tuple[tuple[float, ...], float, bool]]:
    """Every round feature as (axis line: direction and the point nearest the origin, radius,
    concave): where a feature is as well as its size, for credit feature by feature."""
    return list(_cylinder_groups(shape))


def _cylinder_groups(shape: Shape | None) -> dict[tuple[Any, float, bool], list[Any]]:
    """Cylindrical faces grouped by (axis line, radius, concave): one group is one feature."""
    from OCP.BRepAdaptor import BRepAdaptor_Surface

    groups: dict[tuple[Any, float, bool], list[Any]] = {}
    if shape is None:
        return groups
    for f in shape.faces():
        if f.geom_type != GeomType.CYLINDER:
            continue
        cyl = BRepAdaptor_Surface(f.wrapped).Cylinder()
        ax = cyl.Axis()
        d = ax.Direction()
        dvec = np.array([d.X(), d.Y(), d.Z()])
        if dvec[np.argmax(np.abs(dvec))] < 0:
            dvec = -dvec
        loc = ax.Location()
        base = np.array([loc.X(), loc.Y(), loc.Z()])
        c = f.center()
        pt = np.array([c.X, c.Y, c.Z])
        n = f.normal_at(c)
        radial = pt - base - (pt - base).dot(dvec) * dvec
        concave = bool(np.dot([n.X, n.Y, n.Z], radial) < 0)
        p = base - base.dot(dvec) * dvec  # the axis line's point nearest the origin
        line = np.round(np.concatenate([dvec, p]), 2)  # the axis: direction and point
        key = (tuple(line.tolist()), round(cyl.Radius(), 2), concave)
        groups.setdefault(key, []).append(f)
    return groups


def holes(shape: Shape | None) -> list[dict[str, Any]]:
    """Round holes: concave cylindrical surfaces turning a full circle, through or blind.

    A hole is told from a boss by its normals pointing at the axis; it is through when the
    points just beyond both ends of its axis are outside the material.
    """
    from OCP.BRepTools import BRepTools

    out: list[dict[str, Any]] = []
    if shape is None or not solids_of(shape):
        return out
    for (key, radius, concave), faces in _cylinder_groups(shape).items():
        span = 0.0
        lo, hi = math.inf, -math.inf
        dvec = np.array(key[:3])
        for f in faces:
            umin, umax, _vmin, _vmax = BRepTools.UVBounds_s(f.wrapped)
            span += umax - umin
            bb = f.bounding_box()
            for corner in (bb.min, bb.max):
                t = np.dot([corner.X, corner.Y, corner.Z], dvec)
                lo, hi = min(lo, t), max(hi, t)
        if not concave or span < 2 * math.pi - 1e-3:
            continue
        axis_pt = np.array(key[3:])
        eps = max(0.05, radius * 0.05)
        ends = [axis_pt + (lo - eps) * dvec, axis_pt + (hi + eps) * dvec]
        outside = [not shape.is_inside(Vector(*map(float, e))) for e in ends]
        out.append(
            {
                "radius": radius,
                "depth": r(hi - lo),
                "through": all(outside),
                "axis": [r(x) for x in dvec],
                "at": [r(x) for x in axis_pt],
            }
        )
    return out


def hole_summary(shape: Shape | None) -> dict[str, int]:
    found = holes(shape)
    through = sum(1 for h in found if h["through"])
    return {"through": through, "blind": len(found) - through}


def mesh(shape: Shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertices, triangles, face index of each triangle), cached on the shape."""
    cached = getattr(shape, "_palaestra_mesh", None)
    if cached is not None:
        return cached
    from OCP.BRep import BRep_Tool
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.TopAbs import TopAbs_Orientation
    from OCP.TopLoc import TopLoc_Location

    bb = shape.bounding_box()
    diag = max(bb.diagonal, 1e-6)
    BRepMesh_IncrementalMesh(shape.wrapped, diag * 0.004, False, 0.35, True)
    verts: list[np.ndarray] = []
    tris: list[np.ndarray] = []
    fids: list[np.ndarray] = []
    offset = 0
    for i, face in enumerate(shape.faces()):
        loc = TopLoc_Location()
        poly = BRep_Tool.Triangulation_s(face.wrapped, loc)
        if poly is None:
            continue
        trsf = loc.Transformation()
        nodes = [poly.Node(k).Transformed(trsf) for k in range(1, poly.NbNodes() + 1)]
        verts.append(np.array([(p.X(), p.Y(), p.Z()) for p in nodes], np.float64))
        t = np.array([poly.Triangle(k).Get() for k in range(1, poly.NbTriangles() + 1)], np.int64)
        t = t.reshape(-1, 3) - 1 + offset
        if face.wrapped.Orientation() == TopAbs_Orientation.TopAbs_REVERSED:
            t = t[:, [0, 2, 1]]
        tris.append(t)
        fids.append(np.full(len(t), i, np.int64))
        offset += len(nodes)
    if not tris:
        out = (np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros(0, np.int64))
    else:
        out = (np.concatenate(verts), np.concatenate(tris), np.concatenate(fids))
    shape._palaestra_mesh = out
    return out


def surface_points(shape: Shape | None, n: int = 1500, seed: int = 0) -> np.ndarray:
    """Points sampled uniformly by area on the tessellated surface (deterministic)."""
    if shape is None or not solids_of(shape):
        return np.zeros((0, 3))
    verts, tris, _ = mesh(shape)
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    areas = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    if areas.sum() <= 0:
        return np.zeros((0, 3))
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(areas), size=n, p=areas / areas.sum())
    u, v = rng.random(n), rng.random(n)
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    return a[pick] + u[:, None] * (b[pick] - a[pick]) + v[:, None] * (c[pick] - a[pick])


def chamfer_distance(pa: np.ndarray, pb: np.ndarray) -> float:
    """Symmetric mean nearest-neighbour distance between two point samples, in mm."""
    if len(pa) == 0 or len(pb) == 0:
        return math.inf
    from scipy.spatial import cKDTree

    da, _ = cKDTree(pb).query(pa)
    db, _ = cKDTree(pa).query(pb)
    return float((da.mean() + db.mean()) / 2)


# ----- envelopes: what a part's outline alone gives away --------------------------------------
#: a view: the world axis it looks along and the two world axes its drawing shows (u, v); the
#: same frames as the renders' top, front and right tiles and as sketches on XY, XZ and YZ
VIEWS: dict[str, tuple[int, tuple[int, int]]] = {
    "top": (2, (0, 1)),
    "front": (1, (0, 2)),
    "right": (0, (1, 2)),
}
#: an outline's points as ``"u,v u,v ..."`` stay under this (a sketch polygon's argument limit)
OUTLINE_CHARS = 3800

Outline = list[tuple[float, float]]


def outlines(shape: Shape, view: str, max_chars: int = OUTLINE_CHARS) -> list[Outline]:
    """The outer outlines of the solid's silhouette seen along a view's axis (holes of the
    silhouette filled: a through hole shows in the view, but the outline is what a quick look
    gives), each a closed polygon in the view's (u, v) millimetres, simplified until its
    ``"u,v ..."`` text fits ``max_chars``. Cached on the shape, per view."""
    key = f"_palaestra_outline_{view}"
    cached = getattr(shape, key, None)
    if cached is not None:
        return cached
    import shapely

    _, (i, j) = VIEWS[view]
    verts, tris, _ = mesh(shape)
    flat = verts[tris][:, :, [i, j]]
    a, b, c = flat[:, 0], flat[:, 1], flat[:, 2]
    area = 0.5 * np.abs(
        (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    )
    union = shapely.union_all(shapely.polygons(flat[area > 1e-9])).buffer(0)
    parts = [shapely.Polygon(p.exterior) for p in getattr(union, "geoms", [union]) if p.area > 1e-3]
    out: list[Outline] = []
    for part in parts:
        tol = 0.01
        while True:
            ring = _ring(part.simplify(tol))
            if len(outline_text(ring)) <= max_chars or tol > 5:
                break
            tol *= 2
        out.append(ring)
    setattr(shape, key, out)
    return out


def _ring(polygon: Any) -> Outline:
    """A polygon's exterior, counter-clockwise (a sketch face's normal then follows its
    plane's), rounded to the micrometre, without the closing repeat."""
    from shapely.geometry.polygon import orient

    return [(r(x), r(y)) for x, y in orient(polygon, 1.0).exterior.coords[:-1]]


def outline_text(ring: Outline) -> str:
    """An outline as a sketch polygon's ``points`` argument."""
    return " ".join(f"{u:g},{v:g}" for u, v in ring)


def half_profile(shape: Shape) -> list[Outline]:
    """The profile a turned part is revolved from, read off its front and right outlines: each
    outline's halves on either side of the Z axis, folded onto x >= 0 and united (so a notch
    seen on one side only, e.g. a keyway, does not cut into the revolved envelope)."""
    import shapely
    from shapely import affinity

    right_half = shapely.box(0, -1e6, 1e6, 1e6)
    left_half = shapely.box(-1e6, -1e6, 0, 1e6)
    pieces = []
    for view in ("front", "right"):
        for ring in outlines(shape, view):
            poly = shapely.Polygon(ring)
            pieces.append(poly.intersection(right_half))
            pieces.append(affinity.scale(poly.intersection(left_half), -1, 1, origin=(0, 0)))
    union = shapely.union_all(pieces).buffer(0)
    return [
        _ring(p)
        for p in getattr(union, "geoms", [union])
        if isinstance(p, shapely.Polygon) and p.area > 1e-3
    ]


def hull_outline(shape: Shape) -> list[Outline]:
    """The convex hull of the top outline (one polygon)."""
    import shapely

    points = [p for ring in outlines(shape, "top") for p in ring]
    hull = shapely.MultiPoint(points).convex_hull
    return [_ring(hull)]


def envelopes(shape: Shape) -> dict[str, Shape]:
    """Solids that contain the part and are read off its outline alone, the way a reward
    hacker would approximate it from the views: the bounding box, the top outline extruded
    over the part's height, that outline's convex hull extruded, the visual hull (the
    intersection of the top, front and right outlines, each extruded through the part) and the
    front outline's half revolved about Z (a turned part)."""
    from build123d import Axis, Box, Plane, Polygon, Pos, extrude, revolve

    bb = shape.bounding_box()
    lo, hi = bb.min, bb.max
    height = hi.Z - lo.Z
    reach = 4 * max(bb.diagonal, 1.0)

    def prism(rings: list[Outline], view: str) -> Any:
        plane = {"top": Plane.XY.offset(lo.Z), "front": Plane.XZ, "right": Plane.YZ}[view]
        solids = [
            extrude(plane * Polygon(*ring, align=None), amount=height)
            if view == "top"
            else extrude(plane * Polygon(*ring, align=None), amount=reach, both=True)
            for ring in rings
            if len(ring) >= 3
        ]
        return _fuse(solids)

    out: dict[str, Shape] = {
        "bbox": Pos(*((lo + hi) * 0.5)) * Box(*bbox_size(shape)),
    }
    builders = {
        "outline": lambda: prism(outlines(shape, "top"), "top"),
        "hull": lambda: prism(hull_outline(shape), "top"),
        "views": lambda: (
            prism(outlines(shape, "top"), "top")
            & prism(outlines(shape, "front"), "front")
            & prism(outlines(shape, "right"), "right")
        ),
        "turned": lambda: _fuse(
            [revolve(Plane.XZ * Polygon(*ring, align=None), Axis.Z) for ring in half_profile(shape)]
        ),
    }
    for name, build in builders.items():
        try:
            solid = build()
        except Exception:  # an outline the kernel cannot close is no envelope: skipped
            continue
        if solid is not None and solids_of(solid):
            out[name] = solid
    return out


def envelope_iou(shape: Shape) -> float:
    """The best IoU any :func:`envelopes` solid reaches with the part: how much of the score
    the outline alone gives away (cached on the shape)."""
    cached = getattr(shape, "_palaestra_envelope_iou", None)
    if cached is None:
        cached = max((_envelope_iou(e, shape) for e in envelopes(shape).values()), default=0.0)
        shape._palaestra_envelope_iou = cached
    return cached


def _envelope_iou(envelope: Shape, shape: Shape) -> float:
    """An envelope's IoU with the part it was read from, erring high: an envelope holds the
    part, so its IoU is the volume ratio, and the kernel's boolean, which can fail where the
    two share faces (a hinge's visual hull gave an empty intersection), is only taken when it
    says more. An IoU too high makes the score stricter, never looser."""
    outer = volume(envelope)
    ratio = min(volume(shape) / outer, 1.0) if outer > 0 else 0.0
    return max(iou(envelope, shape), ratio)


def _fuse(solids: list[Any]) -> Any:
    out = solids[0]
    for s in solids[1:]:
        out = out + s
    return out
