"""The CAD action set: semantic modeling operations a designer would name.

Lengths are millimetres and angles degrees. Sketch coordinates ``(x, y)`` are the plane's own
``u, v``: on ``XY`` they are world X, Y; on ``XZ`` world X, Z; on ``YZ`` world Y, Z; on a face,
u and v follow the rule of :mod:`palaestra.envs.cad.ops` (v points up on side faces), and the
feedback of ``new_sketch`` states the frame. The schemas bound every number from above (lengths
within ``MAX_MM``, at most ``MAX_SIDES`` sides and ``MAX_COUNT`` copies), so no argument can
make a kernel call in the worker run long (:mod:`palaestra.envs.cad.ops`); a value past a bound
is the action's ``last_action_error`` naming it. Whether a value makes sense for the part
(positive sizes, a hole on its face) is checked in the ops, so that mistake comes back as a
sentence about the part, not as a schema error.
"""

from __future__ import annotations

from palaestra.actions import ActionSet, Param, Primitive, primitive

#: the largest length or coordinate (mm), sides of a regular polygon, copies of a pattern
MAX_MM = 10_000.0
MAX_SIDES = 120
MAX_COUNT = 100


def _num(name: str, description: str, default: float | None = None, limit: float = MAX_MM) -> Param:
    """A float within +-limit: a length in mm (the default) or an angle in degrees."""
    if default is None:
        return Param(name, "float", description, minimum=-limit, maximum=limit)
    return Param(name, "float", description, default, -limit, limit)


_X = _num("x", "sketch u of the centre", 0.0)
_Y = _num("y", "sketch v of the centre", 0.0)
_SKMODE = Param(
    "mode", "str", "add to or subtract from the sketch", "add", None, None, ("add", "subtract")
)
_MODE = Param("mode", "str", "add material or cut it away", "add", None, None, ("add", "cut"))
_AXIS = Param("axis", "str", "a world axis through the origin", "Z", None, None, ("X", "Y", "Z"))


def _mm(name: str, what: str = "", default: float | None = None) -> Param:
    """A length: every one is in millimetres, and says so the same way."""
    return _num(name, f"{what} (mm)" if what else "mm", default)


def _shape(name: str, description: str, *sizes: Param, turn: tuple[Param, ...] = ()) -> Primitive:
    """Every sketch shape ends with the same placement (centre x, y, a turn if it has one, then
    add or subtract), so an agent that has drawn one shape knows how to place the next."""
    return primitive(name, description, *sizes, _X, _Y, *turn, _SKMODE)


def _edge_finish(name: str, description: str, edges: str, size: str) -> Primitive:
    """Fillet and chamfer are one edge finish with two profiles: which edges, and one size."""
    return primitive(name, description, Param("edges", "str", edges, max_length=400), _mm(size))


CAD_ACTIONS = ActionSet(
    [
        primitive(
            "new_sketch",
            "Start a sketch on XY, XZ or YZ, or on a planar face given by a selector (e.g. '>Z').",
            Param("plane", "str", "XY, XZ, YZ or a face selector", default="XY", max_length=200),
            _mm("offset", "shift along the plane normal", default=0.0),
        ),
        _shape(
            "rectangle",
            "Draw a rectangle centred at (x, y).",
            _mm("width", "size along u"),
            _mm("height", "size along v"),
        ),
        _shape("circle", "Draw a circle centred at (x, y).", _num("radius", "")),
        _shape(
            "polygon",
            "Draw a polygon from points 'x1,y1 x2,y2 ...', or a regular one (sides, radius).",
            Param("points", "str", "vertices 'x,y x,y ...'", default="", max_length=4000),
            Param("sides", "int", "regular polygon: number of sides", 0, 0, MAX_SIDES),
            _mm("radius", "regular polygon: circumradius", default=0.0),
        ),
        _shape(
            "slot",
            "Draw a slot (stadium) of overall length and width, turned by angle degrees.",
            _mm("length", "overall length"),
            _mm("width", "width"),
            turn=(_num("angle", "rotation in the sketch plane (degrees)", 0.0, 360.0),),
        ),
        primitive(
            "extrude",
            "Extrude the sketch: add material, or cut it from the part.",
            _num("distance", "mm; with direction='both' the total, split evenly"),
            _MODE,
            Param(
                "direction",
                "str",
                "along the plane normal, against it, or both ways",
                "normal",
                None,
                None,
                ("normal", "reverse", "both"),
            ),
        ),
        primitive(
            "revolve",
            "Revolve the sketch about a world axis through the origin.",
            _num("angle", "degrees", 360.0, 360.0),
            _AXIS,
            _MODE,
        ),
        primitive(
            "hole",
            "Drill a round hole into a planar face at position 'u,v' of the face's sketch frame.",
            Param("face", "str", "a face selector, e.g. '>Z'", max_length=200),
            Param(
                "position",
                "str",
                "'u,v' on the face (same frame as new_sketch(face))",
                max_length=100,
            ),
            _mm("radius"),
            _num("depth", "mm; 0 drills through the whole part", 0.0),
        ),
        _edge_finish("fillet", "Round edges.", "an edge selector, e.g. 'edges|Z'", "radius"),
        _edge_finish("chamfer", "Bevel edges.", "an edge selector", "length"),
        primitive(
            "shell",
            "Hollow the part with walls of a thickness, leaving the selected face(s) open.",
            Param("face", "str", "the face(s) to open, e.g. '>Z'", max_length=400),
            _mm("thickness", "wall thickness"),
        ),
        primitive(
            "mirror",
            "Mirror the part about a world plane (optionally offset) and join the copy.",
            Param("plane", "str", default="YZ", choices=("XY", "XZ", "YZ")),
            _mm("offset", "plane position along its normal", default=0.0),
        ),
        primitive(
            "pattern",
            "Repeat the last feature (extrude, revolve, hole or pattern): linear along an "
            "axis, or polar about it.",
            Param("kind", "str", default="linear", choices=("linear", "polar")),
            Param("count", "int", "instances including the original", 2, 2, MAX_COUNT),
            _mm("spacing", "linear: distance between instances", default=10.0),
            _AXIS,
            _num("angle", "polar: total angle (360 spreads evenly)", 360.0, 360.0),
        ),
        primitive("undo", "Go back one modeling step."),
        primitive(
            "inspect",
            "Ask about the model: 'properties', 'topology', 'holes', 'history', "
            "'select <selector>', 'export step' or 'export stl' (file text in 'inspect').",
            Param("query", "str", default="properties", max_length=400),
        ),
        primitive("submit", "Finish: the current part is your answer."),
        primitive(
            "run_code",
            "Run a build123d Python script in a sandbox; it must assign the part to `result`, "
            "which becomes the current model.",
            Param("script", "str", "Python using build123d (and math)", max_length=20_000),
        ),
    ],
    name="cad",
)
