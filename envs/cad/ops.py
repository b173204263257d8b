"""The modeling operations on an immutable :class:`CadState`, with kernel errors as sentences.

Every operation returns a new state and leaves the old one untouched (build123d's algebra
mode builds new shapes), so undo and fork are just a matter of keeping the old states, and an
operation that fails changes nothing, as the env contract demands.

Sketch frames on faces: on a face facing up (+Z) u, v are world X, Y; facing down, X and -Y
(the frame stays right-handed with its normal pointing out of the part); on a side face v
points up (+Z) and u is the horizontal direction that makes the frame right-handed; on an
oblique face the kernel's own face frame is used. The origin is the world origin projected
onto the face's plane, so u, v read as world coordinates on axis-aligned faces.

Bounded work: the kernel runs in the worker and holds the GIL through each call (OCP does not
release it), so no clock in the worker can stop a call that runs too long, and a call that runs
past the worker's heartbeat gets the worker, and every session on it, killed. Each call is
bounded by its inputs instead: the action schemas bound every number (lengths within
``MAX_MM``, at most ``MAX_SIDES`` sides, ``MAX_COUNT`` copies; NaN and infinities refused here),
and no step may leave a part of more than ``MAX_FACES`` faces or a sketch of more than
``MAX_FACES`` edges, with the cost of a pattern or mirror checked *before* the kernel is called,
so every input of every call is a bounded shape. On a part at the bound (1,100 faces of
120-gon bosses) the longest the worker's other threads waited through any step, its
observation included, was 3.2 s on a 2-core machine at load 12, inside the 15 s heartbeat
(docs/security.md). Arbitrary work (scripts) runs in the sandbox under a wall clock
(:mod:`palaestra.envs.cad.sandbox`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from build123d import (
    Align,
    Axis,
    Circle,
    Compound,
    Cylinder,
    Face,
    GeomType,
    Location,
    Part,
    Plane,
    Polygon,
    Pos,
    Rectangle,
    RegularPolygon,
    Rot,
    Shape,
    Sketch,
    SlotOverall,
    Vector,
    chamfer,
    extrude,
    fillet,
    mirror,
    offset,
    revolve,
)

from palaestra.actions import Action
from palaestra.envs.cad.actions import MAX_COUNT
from palaestra.envs.cad.selectors import edges_of, select
from palaestra.errors import ActionError
from palaestra.verifiers import geometry

_PLANES = {"XY": Plane.XY, "XZ": Plane.XZ, "YZ": Plane.YZ}
_AXES = {"X": Axis.X, "Y": Axis.Y, "Z": Axis.Z}
EPS = 1e-6
#: the bounds that keep every kernel call short, beside the schemas' (module docstring)
MAX_FACES = 1200
MAX_EDGES = 500  # edges one fillet or chamfer may round
MAX_SHELL_FACES = 300  # a shell (an offset of every face) costs far more per face than a boolean


@dataclass(frozen=True)
class CadState:
    """What the model is after some steps: the part, the open sketch and the last feature."""

    part: Shape | None = None
    plane: Plane | None = None
    plane_text: str = ""
    sketch: Sketch | None = None
    sketch_items: tuple[str, ...] = ()
    #: the solid the last feature added or cut, and how (``pattern`` repeats it)
    tool: Shape | None = None
    tool_mode: str = ""


def fmt(x: float) -> str:
    x = float(x) + 0.0  # no "-0"
    text = f"{x:.0f}" if abs(x) >= 1e4 else f"{x:.4g}"
    return "0" if text == "-0" else text


def _vec(v: Vector) -> str:
    return f"({fmt(v.X)}, {fmt(v.Y)}, {fmt(v.Z)})"


def _positive(action: str, **values: float) -> None:
    for name, value in values.items():
        if not (value > 0) or not math.isfinite(value):
            raise ActionError(f"{action}: {name} must be a positive length in mm, got {value:g}")


def _bounded(shape: Shape, what: str, kind: str = "faces") -> Shape:
    """Refuse a result over the complexity bound: every later call takes it as an input."""
    n = len(shape.faces() if kind == "faces" else shape.edges())
    if n > MAX_FACES:
        raise ActionError(
            f"{what} would give a {'part' if kind == 'faces' else 'sketch'} of {n} {kind}, over "
            f"the limit of {MAX_FACES}; the model is unchanged"
        )
    return shape


def _kernel(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a kernel call; an exception becomes an ActionError sentence naming the operation."""
    try:
        return fn(*args, **kwargs)
    except ActionError:
        raise
    except Exception as exc:
        text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise ActionError(f"the CAD kernel could not {what}: {text}") from None


def _summary(shape: Shape | None) -> str:
    if shape is None or not shape.solids():
        return "the part is empty"
    s = geometry.bbox_size(shape)
    n = len(shape.solids())
    solids = "1 solid" if n == 1 else f"{n} separate solids (not joined!)"
    return (
        f"the part is {fmt(s[0])} x {fmt(s[1])} x {fmt(s[2])} mm, volume {fmt(shape.volume)} mm³, "
        f"{solids}, {len(shape.faces())} faces"
    )


def face_plane(face: Face, text: str) -> Plane:
    if face.geom_type != GeomType.PLANE:
        raise ActionError(f"{text!r} is a {face.geom_type.name.lower()} face; it must be planar")
    n = face.normal_at()
    o = face.center()
    if abs(abs(n.Z) - 1) < 1e-6:
        x = Vector(1, 0, 0)
    elif abs(n.Z) < 1e-6:
        x = Vector(0, 0, 1).cross(n).normalized()
    else:
        return Plane(face)
    origin = n * o.dot(n)  # the world origin projected onto the face's plane
    return Plane(origin=origin, x_dir=x, z_dir=n)


def _one_face(part: Shape | None, text: str) -> Face:
    faces = select(part, text, "faces")
    if len(faces) != 1:
        raise ActionError(f"{text!r} selects {len(faces)} faces; this needs exactly one")
    return faces[0]


def _frame_text(plane: Plane) -> str:
    return f"u along {_vec(plane.x_dir)}, v along {_vec(plane.y_dir)}, normal {_vec(plane.z_dir)}"


# ----- sketching ----------------------------------------------------------------------------
def new_sketch(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    name, off = a["plane"].strip(), a["offset"]
    if name.upper() in _PLANES:
        plane = _PLANES[name.upper()]
    else:
        plane = face_plane(_one_face(st.part, name), name)
    if off:
        plane = plane.offset(off)
    return (
        replace(st, plane=plane, plane_text=name, sketch=None, sketch_items=()),
        f"new sketch on {name}"
        + (f" offset {fmt(off)} mm" if off else "")
        + f": origin {_vec(plane.origin)}, {_frame_text(plane)}",
    )


def _add_shape(st: CadState, shape: Any, what: str, mode: str) -> tuple[CadState, str]:
    if st.plane is None:
        raise ActionError(f"there is no open sketch: call new_sketch(...) before drawing a {what}")
    located = st.plane * shape
    if mode == "subtract":
        if st.sketch is None:
            raise ActionError(f"cannot subtract a {what} from an empty sketch")
        sketch = _kernel(f"subtract the {what}", lambda: st.sketch - located)
        if not sketch.faces():
            raise ActionError(f"subtracting the {what} leaves nothing in the sketch")
    else:
        sketch = (
            located
            if st.sketch is None
            else _kernel(f"add the {what}", lambda: st.sketch + located)
        )
    sketch = Sketch(sketch.wrapped) if not isinstance(sketch, Sketch) else sketch
    _bounded(sketch, f"the {what}", "edges")
    items = (*st.sketch_items, f"{'-' if mode == 'subtract' else '+'}{what}")
    area = sum(f.area for f in sketch.faces())
    return (
        replace(st, sketch=sketch, sketch_items=items),
        f"sketch now has {len(sketch.faces())} region(s), area {fmt(area)} mm²",
    )


def rectangle(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    _positive("rectangle", width=a["width"], height=a["height"])
    shape = Pos(a["x"], a["y"]) * Rectangle(a["width"], a["height"])
    return _add_shape(st, shape, f"{fmt(a['width'])} x {fmt(a['height'])} rectangle", a["mode"])


def circle(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    _positive("circle", radius=a["radius"])
    shape = Pos(a["x"], a["y"]) * Circle(a["radius"])
    return _add_shape(st, shape, f"circle r{fmt(a['radius'])}", a["mode"])


def _parse_points(text: str) -> list[tuple[float, float]]:
    pts = []
    for chunk in text.replace(";", " ").split():
        try:
            x, y = (float(v) for v in chunk.split(","))
        except ValueError:
            raise ActionError(
                f"polygon: cannot read point {chunk!r}; write 'x,y x,y ...'"
            ) from None
        pts.append((x, y))
    if len(pts) > 1 and pts[0] == pts[-1]:
        pts.pop()
    return pts


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _self_intersection(pts: list[tuple[float, float]]) -> tuple[int, int] | None:
    n = len(pts)
    for i in range(n):
        a, b = pts[i], pts[(i + 1) % n]
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # neighbours share a vertex
            c, d = pts[j], pts[(j + 1) % n]
            d1, d2 = _cross(a, b, c), _cross(a, b, d)
            d3, d4 = _cross(c, d, a), _cross(c, d, b)
            if d1 * d2 < 0 and d3 * d4 < 0:
                return i, j
    return None


def polygon(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    if a["sides"]:
        if a["points"]:
            raise ActionError("polygon: give points, or sides and radius, not both")
        if a["sides"] < 3:
            raise ActionError(
                f"polygon: a regular polygon needs at least 3 sides, got {a['sides']}"
            )
        _positive("polygon", radius=a["radius"])
        shape = Pos(a["x"], a["y"]) * RegularPolygon(a["radius"], a["sides"])
        return _add_shape(st, shape, f"{a['sides']}-gon r{fmt(a['radius'])}", a["mode"])
    pts = _parse_points(a["points"])
    if len(pts) < 3:
        raise ActionError("polygon: give at least 3 points 'x,y x,y x,y', or sides and radius")
    if len(set(pts)) != len(pts):
        raise ActionError("polygon: a point is repeated; every vertex must be distinct")
    crossing = _self_intersection(pts)
    if crossing:
        i, j = crossing
        raise ActionError(
            f"polygon: edge {i + 1} ({pts[i]} to {pts[(i + 1) % len(pts)]}) crosses edge {j + 1} "
            f"({pts[j]} to {pts[(j + 1) % len(pts)]}); a profile must not self-intersect"
        )
    area = abs(sum(_cross((0, 0), pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts)))) / 2
    if area < EPS:
        raise ActionError("polygon: the points are collinear, so the polygon has no area")
    shape = Pos(a["x"], a["y"]) * Polygon(*pts, align=None)
    return _add_shape(st, shape, f"{len(pts)}-point polygon", a["mode"])


def slot(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    _positive("slot", length=a["length"], width=a["width"])
    if a["length"] <= a["width"]:
        raise ActionError(
            f"slot: the length ({fmt(a['length'])}) must exceed the width ({fmt(a['width'])}); "
            "for a round hole draw a circle"
        )
    shape = Pos(a["x"], a["y"]) * Rot(0, 0, a["angle"]) * SlotOverall(a["length"], a["width"])
    return _add_shape(st, shape, f"{fmt(a['length'])} x {fmt(a['width'])} slot", a["mode"])


# ----- features ---------------------------------------------------------------------------
def _need_sketch(st: CadState, action: str) -> Sketch:
    if st.sketch is None or st.plane is None:
        raise ActionError(
            f"{action} needs a sketch: start one with new_sketch(...) and draw a shape on it"
        )
    return st.sketch


def _combine(st: CadState, tool: Shape, mode: str, what: str) -> tuple[CadState, str]:
    if st.part is not None:
        _cost(what, tool, 1, st.part)
    before = geometry.volume(st.part)
    if mode == "cut":
        if st.part is None:
            raise ActionError(f"{what}: there is no part to cut yet; use mode='add' first")
        part = _kernel(f"cut ({what})", lambda: st.part - tool)
        delta = before - geometry.volume(part)
        if delta <= EPS * max(before, 1):
            raise ActionError(
                f"{what}: the cut removed nothing, the tool does not overlap the part "
                "(check the direction: a sketch on a face cuts into the part with "
                "direction='reverse')"
            )
        change = f"removed {fmt(delta)} mm³"
    else:
        part = tool if st.part is None else _kernel(f"join ({what})", lambda: st.part + tool)
        change = f"added {fmt(geometry.volume(part) - before)} mm³"
    _bounded(part, what)
    if not geometry.is_valid(part):
        raise ActionError(f"{what} gave an invalid solid; the model is unchanged")
    part = _clean(part)
    state = replace(st, part=part, tool=tool, tool_mode=mode)
    return state, f"{what}: {change}; {_summary(part)}"


def _clean(part: Shape) -> Shape:
    """Always a Part (a compound of the solids), whatever the operation or import returned."""
    if isinstance(part, Part):
        return part
    return Part(Compound(part.solids()).wrapped)


def do_extrude(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    sketch = _need_sketch(st, "extrude")
    _positive("extrude", distance=a["distance"])
    assert st.plane is not None
    d, direction = a["distance"], a["direction"]
    normal = st.plane.z_dir if direction != "reverse" else -st.plane.z_dir
    if direction == "both":
        tool = _kernel("extrude", extrude, sketch, amount=d / 2, dir=normal, both=True)
    else:
        tool = _kernel("extrude", extrude, sketch, amount=d, dir=normal)
    where = "both ways" if direction == "both" else f"along {_vec(normal)}"
    state, text = _combine(st, tool, a["mode"], f"extrude {fmt(d)} mm {where}")
    return replace(state, sketch=None, sketch_items=()), text


def do_revolve(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    sketch = _need_sketch(st, "revolve")
    angle = a["angle"]
    if not (0 < angle <= 360):
        raise ActionError(f"revolve: the angle must be in (0, 360] degrees, got {angle:g}")
    axis = _AXES[a["axis"]]
    tool = _kernel("revolve", revolve, sketch, axis=axis, revolution_arc=angle)
    if not geometry.is_valid(tool) or geometry.volume(tool) <= EPS:
        raise ActionError(
            f"revolve: the profile crosses or touches the {a['axis']} axis, which gives no valid "
            "solid; keep the profile on one side of the axis"
        )
    state, text = _combine(st, tool, a["mode"], f"revolve {fmt(angle)}° about {a['axis']}")
    return replace(state, sketch=None, sketch_items=()), text


def _uv(text: str) -> tuple[float, float]:
    try:
        u, v = (float(x) for x in text.replace(" ", "").split(","))
    except ValueError:
        raise ActionError(f"hole: position must be 'u,v' such as '10,-5', got {text!r}") from None
    return u, v


def do_hole(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    _positive("hole", radius=a["radius"])
    if a["depth"] < 0:
        raise ActionError(f"hole: depth must be positive, or 0 for through, got {a['depth']:g}")
    face = _one_face(st.part, a["face"])
    plane = face_plane(face, a["face"])
    u, v = _uv(a["position"])
    centre = plane.from_local_coords((u, v, 0))
    gap = face.distance_to(centre)
    if gap > 1e-3 or not face.is_inside(centre):
        bb = face.bounding_box()
        raise ActionError(
            f"hole: position {u:g},{v:g} is not on face {a['face']!r} (the face spans "
            f"{_vec(bb.min)} to {_vec(bb.max)} in world coordinates)"
        )
    assert st.part is not None
    depth = a["depth"] or 2 * st.part.bounding_box().diagonal
    start = centre + plane.z_dir * 0.01
    drill = Plane(origin=start, x_dir=plane.x_dir, z_dir=-plane.z_dir)
    tool = drill * Cylinder(
        a["radius"], depth + 0.01, align=(Align.CENTER, Align.CENTER, Align.MIN)
    )
    kind = "through hole" if not a["depth"] else f"hole {fmt(a['depth'])} mm deep"
    return _combine(st, tool, "cut", f"{kind} r{fmt(a['radius'])} at {_vec(centre)}")


def _edge_room(part: Shape, edges: list[Any]) -> tuple[float, float, bool]:
    """What limits a fillet: (room, edge length, shared) for the tightest edge touching the
    selected ones; an edge rounded at both of its ends offers only half its length."""
    best = (math.inf, math.inf, False)
    ends = [v for s in edges for v in s.vertices()]
    for e in edges_of(part):
        if any(e.is_same(s) for s in edges):
            continue
        touching = sum(1 for v in e.vertices() if any(v.distance_to(w) < 1e-6 for w in ends))
        if touching:
            room = e.length / 2 if touching > 1 else e.length
            if room < best[0]:
                best = (room, e.length, touching > 1)
    return best


def _round_edges(st: CadState, a: dict[str, Any], name: str) -> tuple[CadState, str]:
    size = a["radius"] if name == "fillet" else a["length"]
    label = "radius" if name == "fillet" else "length"
    _positive(name, **{label: size})
    edges = select(st.part, a["edges"], "edges")
    assert st.part is not None
    if len(edges) > MAX_EDGES:
        raise ActionError(f"{name}: {len(edges)} edges selected; at most {MAX_EDGES} at once")
    fn = fillet if name == "fillet" else chamfer
    before = geometry.volume(st.part)
    try:
        part = fn(edges, size)
        ok = geometry.is_valid(part) and abs(geometry.volume(part) - before) > EPS
    except Exception:
        ok = False
    if not ok:
        room, length, shared = _edge_room(st.part, edges)
        if room <= size * 1.01:
            where = (
                f"the {fmt(room)} mm left on the {fmt(length)} mm edge next to it, which is "
                "rounded at both ends"
                if shared
                else f"the {fmt(length)} mm edge next to the {len(edges)} selected edge(s)"
            )
            raise ActionError(
                f"{name} {label} {fmt(size)} is larger than {where}; "
                f"try a {label} under {fmt(room)} mm"
            )
        raise ActionError(
            f"the kernel could not {name} {len(edges)} edge(s) with {label} {fmt(size)} mm: "
            "walls or nearby features leave no room; try a smaller size or fewer edges"
        )
    part = _clean(_bounded(part, name))
    return (
        replace(st, part=part, tool=None, tool_mode=""),
        f"{name} {len(edges)} edge(s) {label} {fmt(size)}: {_summary(part)}",
    )


def do_shell(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    _positive("shell", thickness=a["thickness"])
    faces = select(st.part, a["face"], "faces")
    assert st.part is not None
    if len(st.part.faces()) > MAX_SHELL_FACES:
        raise ActionError(
            f"shell: the part has {len(st.part.faces())} faces; a shell takes parts of at most "
            f"{MAX_SHELL_FACES} (shell first, then add the detail)"
        )
    t = a["thickness"]
    thinnest = min(geometry.bbox_size(st.part))
    if 2 * t >= thinnest:
        raise ActionError(
            f"shell: walls of {fmt(t)} mm leave no cavity in a part only {fmt(thinnest)} mm thick"
        )
    try:
        part = offset(st.part, amount=-t, openings=faces)
        ok = geometry.is_valid(part) and geometry.volume(part) < geometry.volume(st.part) - EPS
    except Exception:
        ok = False
    if not ok:
        raise ActionError(
            f"the kernel could not shell the part with {fmt(t)} mm walls: usually a fillet "
            f"radius smaller than the wall or a feature thinner than {fmt(t)} mm is in the way"
        )
    part = _clean(_bounded(part, "shell"))
    return (
        replace(st, part=part, tool=None, tool_mode=""),
        f"shell {fmt(t)} mm, {len(faces)} face(s) open: {_summary(part)}",
    )


def _cost(what: str, shape: Shape, copies: int, part: Shape | None = None) -> None:
    """Refuse before the kernel runs when its inputs (``copies`` of ``shape``, and the part it
    joins) pass the face bound: a boolean's time grows with the faces it is given."""
    n = len(shape.faces()) * copies + (len(part.faces()) if part is not None else 0)
    if n > MAX_FACES:
        copied = f"{copies} copies of " if copies > 1 else ""
        joined = " and the part" if part is not None else ""
        raise ActionError(
            f"{what}: {copied}{len(shape.faces())} faces{joined} make {n} faces, over the "
            f"limit of {MAX_FACES}; the model is unchanged"
        )


def do_mirror(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    if st.part is None:
        raise ActionError("mirror: there is no part to mirror yet")
    _cost("mirror", st.part, 2)
    plane = _PLANES[a["plane"]].offset(a["offset"])
    copy = _kernel("mirror", mirror, st.part, about=plane)
    return _combine(st, copy, "add", f"mirror about {a['plane']}")


def do_pattern(st: CadState, a: dict[str, Any]) -> tuple[CadState, str]:
    if st.tool is None:
        raise ActionError(
            "pattern repeats the last extrude, revolve, hole, mirror or pattern, and the last "
            "step was not one of them (fillet, chamfer and shell cannot be patterned)"
        )
    n = a["count"]
    if not 2 <= n <= MAX_COUNT:
        raise ActionError(f"pattern: count must be between 2 and {MAX_COUNT}, got {n}")
    _cost("pattern", st.tool, n, st.part)
    axis = _AXES[a["axis"]]
    copies = []
    if a["kind"] == "linear":
        if a["spacing"] == 0:
            raise ActionError("pattern: a linear spacing of 0 puts every copy in one place")
        step = axis.direction * a["spacing"]
        copies = [Location(step * i) * st.tool for i in range(1, n)]
        what = f"linear pattern x{n} every {fmt(a['spacing'])} mm along {a['axis']}"
    else:
        angle = a["angle"]
        if not (0 < abs(angle) <= 360):
            raise ActionError(f"pattern: the polar angle must be in (0, 360], got {angle:g}")
        inc = angle / n if abs(angle) == 360 else angle / (n - 1)
        copies = [st.tool.rotate(axis, inc * i) for i in range(1, n)]
        what = f"polar pattern x{n} over {fmt(angle)}° about {a['axis']}"
    fused = _kernel("pattern", lambda: st.tool.fuse(*copies))
    return _combine(st, fused, st.tool_mode, what)


def apply(st: CadState, action: Action) -> tuple[CadState, str]:
    """Carry out one modeling action; ActionError (world unchanged) for a mistake."""
    fn = OPS.get(action.name)
    if fn is None:
        raise ActionError(f"{action.name} is not a modeling operation")
    for name, value in action.args.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ActionError(f"{action.name}: {name} must be a finite number, got {value}")
    if action.name == "fillet":
        return _round_edges(st, action.args, "fillet")
    if action.name == "chamfer":
        return _round_edges(st, action.args, "chamfer")
    return fn(st, action.args)


OPS: dict[str, Any] = {
    "new_sketch": new_sketch,
    "rectangle": rectangle,
    "circle": circle,
    "polygon": polygon,
    "slot": slot,
    "extrude": do_extrude,
    "revolve": do_revolve,
    "hole": do_hole,
    "fillet": _round_edges,
    "chamfer": _round_edges,
    "shell": do_shell,
    "mirror": do_mirror,
    "pattern": do_pattern,
}
