# ruff: noqa: E501  (the generated scripts keep one statement per line, as a person writes them)
"""Eight parametric part families, each giving a spec, a target script and a semantic oracle.

A family draws its parameters from a seeded generator, so the suite is reproducible from seeds
alone and a task stores only ``{"part_family", "params"}``: the target solid is rebuilt on the
worker (never shipped, never pickled). Each family writes the same part twice, independently:

- ``script``: plain build123d code, the way a coding agent would write it (``run_code``
  baseline). The *target* is built from it, so the oracle is checked against a different
  construction, not against itself;
- ``oracle``: the semantic action sequence a designer would click through.

A family's drawing (:class:`Drawing`) writes both, and the spec, from the same parameters in
one function, so the two constructions can be read side by side. Where two families share a
feature (a block with rounded vertical edges; a hub, its bore and a circle of holes), one
function writes that feature for both, in both constructions.

``wrong`` changes one key dimension (a hole radius, a depth, a wall): the validation runs the
oracle with it and the verifier must reject the result.

Conventions every spec states: millimetres, the part's bottom on z = 0 unless the spec says
otherwise, centred on the Z axis. Numbers are rounded to 0.5 mm so a spec reads like a drawing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Params = dict[str, Any]


def _h(x: float) -> float:
    """Round to a half millimetre (a drawing's precision)."""
    return float(round(x * 2) / 2)


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return _h(rng.uniform(lo, hi))


def _uniform(rng: np.random.Generator, **ranges: tuple[float, float]) -> Params:
    """Dimensions drawn uniformly from their ranges, to the half millimetre. The draws are made
    in the order given: the seeds make the suite, so reordering them changes every task."""
    return {key: _u(rng, lo, hi) for key, (lo, hi) in ranges.items()}


def _n(x: float) -> str:
    return f"{x:g}"


MINZ = "align=(Align.CENTER, Align.CENTER, Align.MIN)"


@dataclass(frozen=True)
class Drawing:
    """A part at given parameters: its spec, its build123d script (which leaves the part in
    ``result``; the import is the family's) and its oracle's semantic actions."""

    spec: str
    script: str
    oracle: list[str]


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    sample: Callable[[np.random.Generator], Params]
    draw: Callable[[Params], Drawing]
    wrong: Callable[[Params], Params]

    def spec(self, p: Params) -> str:
        return self.draw(p).spec

    def script(self, p: Params) -> str:
        return "from build123d import *\n" + self.draw(p).script

    def oracle(self, p: Params) -> list[str]:
        return self.draw(p).oracle


def _block(name: str, p: Params, height: str, fillet: bool = True) -> tuple[str, list[str]]:
    """A ``L`` x ``W`` block on z = 0, its vertical edges rounded by ``rf`` if ``fillet``:
    where the plate, the enclosure and the hinge leaf start, in script lines and in actions."""
    script = f"{name} = Box({_n(p['L'])}, {_n(p['W'])}, {_n(p[height])}, {MINZ})\n"
    actions = [
        "new_sketch('XY')",
        f"rectangle({_n(p['L'])}, {_n(p['W'])})",
        f"extrude({_n(p[height])})",
    ]
    if fillet:
        script += f"{name} = fillet({name}.edges().filter_by(Axis.Z), radius={_n(p['rf'])})\n"
        actions.append(f"fillet('edges|Z', {_n(p['rf'])})")
    return script, actions


def _hub_sample(
    rng: np.random.Generator,
    disc: float,
    ratio: tuple[float, float],
    height: tuple[float, float],
    bore: float,
    holes: tuple[int, int],
) -> Params:
    """Flange and gear blank proportion their hubs alike (the hub's radius a share of the
    disc's, the bore a share of the hub's), so both draw them here, in the same order."""
    radius = _h(disc * rng.uniform(*ratio))
    return {
        "Rh": radius,
        "Hh": _u(rng, *height),
        "rb": _h(radius * bore),
        "n": int(rng.integers(*holes)),
    }


def _hub(name: str, p: Params, disc: str, circle: str, hole: str) -> tuple[str, list[str]]:
    """A hub of radius ``Rh`` and height ``Hh`` on a disc ``disc`` thick, the bore ``rb``
    through both and ``n`` holes of radius ``hole`` on a circle of radius ``circle`` through
    the disc: the flange and the gear blank alike, in script lines and in actions."""
    t, rc = _n(p[disc]), _n(p[circle])
    script = (
        f"{name} += Pos(0, 0, {t}) * Cylinder({_n(p['Rh'])}, {_n(p['Hh'])}, {MINZ})\n"
        f"{name} -= Cylinder({_n(p['rb'])}, {_n(p[disc] + p['Hh'])}, {MINZ})\n"
        f"{name} -= PolarLocations({rc}, {p['n']}) * Cylinder({_n(p[hole])}, {t}, {MINZ})\n"
    )
    actions = [
        f"new_sketch('XY', {t})",
        f"circle({_n(p['Rh'])})",
        f"extrude({_n(p['Hh'])})",
        f"hole('>Z', '0,0', {_n(p['rb'])})",
        f"hole('@{rc},0,{t}', '{rc},0', {_n(p[hole])})",
        f"pattern('polar', {p['n']}, axis='Z')",
    ]
    return script, actions


# ----- 1. plate with a hole pattern -------------------------------------------------------
def _plate_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, L=(60, 120), W=(40, 80), T=(4, 10))
    p["nx"], p["ny"] = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    p |= _uniform(rng, m=(8, 12), r=(2, 3.5), rf=(3, 6))
    p["sx"] = _h((p["L"] - 2 * p["m"]) / (p["nx"] - 1))
    p["sy"] = _h((p["W"] - 2 * p["m"]) / (p["ny"] - 1))
    return p


def _plate(p: Params) -> Drawing:
    block, block_actions = _block("plate", p, "T")
    x0 = -p["sx"] * (p["nx"] - 1) / 2
    y0 = -p["sy"] * (p["ny"] - 1) / 2
    return Drawing(
        spec=f"A flat plate {_n(p['L'])} x {_n(p['W'])} x {_n(p['T'])} mm (X x Y x Z), centred on "
        f"the origin in X and Y, bottom face on z = 0. Round its four vertical corner edges with "
        f"radius {_n(p['rf'])} mm. Drill a {p['nx']} x {p['ny']} grid of through holes of radius "
        f"{_n(p['r'])} mm, {_n(p['sx'])} mm apart along X and {_n(p['sy'])} mm apart along Y, "
        f"the grid centred on the plate.",
        script=block
        + f"""holes = GridLocations({_n(p["sx"])}, {_n(p["sy"])}, {p["nx"]}, {p["ny"]}) * Cylinder({_n(p["r"])}, {_n(p["T"])}, {MINZ})
result = plate - holes
""",
        oracle=[
            *block_actions,
            f"hole('>Z', '{_n(x0)},{_n(y0)}', {_n(p['r'])})",
            f"pattern('linear', {p['nx']}, {_n(p['sx'])}, 'X')",
            f"pattern('linear', {p['ny']}, {_n(p['sy'])}, 'Y')",
        ],
    )


# ----- 2. L-bracket with fillets ----------------------------------------------------------
def _bracket_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, A=(40, 70), H=(30, 60), t=(5, 10), W=(20, 40), ri=(2, 5))
    p["r"] = _u(rng, 2, min(4, p["W"] / 5))
    return p


def _bracket(p: Params) -> Drawing:
    a, h, t, w = p["A"], p["H"], p["t"], p["W"]
    xh, zh = (a + t) / 2, (h + t) / 2
    sa, sh, st = _n(a), _n(h), _n(t)
    pts = f"0,0 {sa},0 {sa},{st} {st},{st} {st},{sh} 0,{sh}"
    return Drawing(
        spec=f"An L-bracket of {_n(t)} mm thick plate, {_n(w)} mm wide along Y (centred on y = 0). "
        f"The horizontal leg lies on z = 0 and runs from x = 0 to x = {_n(a)}; the vertical leg "
        f"stands at x = 0..{_n(t)} and rises to z = {_n(h)}. Fillet the inside corner edge "
        f"(x = {_n(t)}, z = {_n(t)}) with radius {_n(p['ri'])} mm. Drill one through hole of "
        f"radius {_n(p['r'])} mm in each leg, centred across the width: in the horizontal leg at "
        f"x = {_n(xh)}, in the vertical leg at z = {_n(zh)}.",
        script=f"""profile = Polygon((0, 0), ({sa}, 0), ({sa}, {st}), ({st}, {st}), ({st}, {sh}), (0, {sh}), align=None)
body = extrude(Plane.XZ * profile, amount={_n(w / 2)}, both=True)
inner = body.edges().filter_by(Axis.Y).sort_by_distance(Vector({st}, 0, {st}))[0]
body = fillet(inner, radius={_n(p["ri"])})
body -= Pos({_n(xh)}, 0, {_n(t / 2)}) * Cylinder({_n(p["r"])}, {st})
body -= Pos({_n(t / 2)}, 0, {_n(zh)}) * Rot(0, 90, 0) * Cylinder({_n(p["r"])}, {st})
result = body
""",
        oracle=[
            "new_sketch('XZ')",
            f"polygon('{pts}')",
            f"extrude({_n(w)}, direction='both')",
            f"fillet('@{st},0,{st}', {_n(p['ri'])})",
            f"hole('@{_n(xh)},0,{st}', '{_n(xh)},0', {_n(p['r'])})",
            f"hole('<X', '0,{_n(zh)}', {_n(p['r'])})",
        ],
    )


# ----- 3. flange with a bolt circle -------------------------------------------------------
def _flange_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, R=(30, 50), T=(6, 12))
    p |= _hub_sample(rng, p["R"], (0.4, 0.5), (8, 20), 0.5, (4, 9))
    p["rbolt"] = _u(rng, 2.5, 4.5)
    p["Rbc"] = _h((p["Rh"] + p["R"]) / 2)
    return p


def _flange(p: Params) -> Drawing:
    hub, hub_actions = _hub("body", p, "T", "Rbc", "rbolt")
    return Drawing(
        spec=f"A round flange: a disc of radius {_n(p['R'])} mm and thickness {_n(p['T'])} mm on "
        f"z = 0, centred on the Z axis, with a hub of radius {_n(p['Rh'])} mm rising "
        f"{_n(p['Hh'])} mm above the disc. A bore of radius {_n(p['rb'])} mm runs through hub "
        f"and disc. {p['n']} bolt holes of radius {_n(p['rbolt'])} mm go through the disc on a "
        f"bolt circle of radius {_n(p['Rbc'])} mm, evenly spaced, the first on the +X axis.",
        script=f"body = Cylinder({_n(p['R'])}, {_n(p['T'])}, {MINZ})\n" + hub + "result = body\n",
        oracle=[
            "new_sketch('XY')",
            f"circle({_n(p['R'])})",
            f"extrude({_n(p['T'])})",
            *hub_actions,
        ],
    )


# ----- 4. stepped shaft with a keyway -----------------------------------------------------
def _shaft_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, r1=(8, 14), l1=(25, 45))
    p["r2"] = _h(p["r1"] - rng.uniform(2, 4))
    p["l2"] = _u(rng, 15, 30)
    p["r3"] = _h(p["r2"] - rng.uniform(1.5, 3))
    p["l3"] = _u(rng, 10, 25)
    p["kw"] = _h(p["r1"] * 0.5)
    p["kd"] = _h(p["kw"] / 2)
    p["kl"] = _h(p["l1"] * 0.6)
    p["c"] = 1.0
    return p


def _shaft(p: Params) -> Drawing:
    z1, z2 = p["l1"], p["l1"] + p["l2"]
    z3 = z2 + p["l3"]
    r1, r2, r3 = p["r1"], p["r2"], p["r3"]
    pts = [(0, 0), (r1, 0), (r1, z1), (r2, z1), (r2, z2), (r3, z2), (r3, z3), (0, z3)]
    profile = ", ".join(f"({_n(x)}, {_n(z)})" for x, z in pts)
    polygon = " ".join(f"{_n(x)},{_n(z)}" for x, z in pts)
    return Drawing(
        spec=f"A stepped shaft along +Z from z = 0, three coaxial steps on the Z axis: radius "
        f"{_n(p['r1'])} mm for {_n(p['l1'])} mm, then radius {_n(p['r2'])} mm for "
        f"{_n(p['l2'])} mm, then radius {_n(p['r3'])} mm for {_n(p['l3'])} mm (to z = "
        f"{_n(z2 + p['l3'])}). A keyway on the +X side of the first step: a slot "
        f"{_n(p['kl'])} mm long (along Z) and {_n(p['kw'])} mm wide, centred at z = "
        f"{_n(p['l1'] / 2)}, cut {_n(p['kd'])} mm deep measured from x = {_n(p['r1'])}. "
        f"Chamfer the top end's edge by {_n(p['c'])} mm.",
        script=f"""profile = Polygon({profile}, align=None)
shaft = revolve(Plane.XZ * profile, Axis.Z)
key = Plane.YZ.offset({_n(p["r1"])}) * Pos(0, {_n(p["l1"] / 2)}) * Rot(0, 0, 90) * SlotOverall({_n(p["kl"])}, {_n(p["kw"])})
shaft -= extrude(key, amount={_n(p["kd"])}, dir=(-1, 0, 0))
shaft = chamfer(shaft.edges().sort_by(Axis.Z)[-1], length={_n(p["c"])})
result = shaft
""",
        oracle=[
            "new_sketch('XZ')",
            f"polygon('{polygon}')",
            "revolve(360, 'Z')",
            f"new_sketch('YZ', {_n(p['r1'])})",
            f"slot({_n(p['kl'])}, {_n(p['kw'])}, 0, {_n(p['l1'] / 2)}, 90)",
            f"extrude({_n(p['kd'])}, mode='cut', direction='reverse')",
            f"chamfer('>Z', {_n(p['c'])})",
        ],
    )


# ----- 5. hollow enclosure ----------------------------------------------------------------
def _box_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, L=(50, 100), W=(40, 70), H=(25, 45), t=(1.5, 3))
    p["rf"] = _u(rng, p["t"] + 2, 8)
    p["r"] = _u(rng, 3, 5)
    return p


def _box(p: Params) -> Drawing:
    block, block_actions = _block("box", p, "H")
    return Drawing(
        spec=f"An open-top enclosure: outside {_n(p['L'])} x {_n(p['W'])} x {_n(p['H'])} mm (X x "
        f"Y x Z), centred on the origin in X and Y, bottom on z = 0, vertical outside corners "
        f"rounded with radius {_n(p['rf'])} mm, hollowed to {_n(p['t'])} mm walls and floor with "
        f"the top face open. A cable hole of radius {_n(p['r'])} mm goes through the -X wall at "
        f"y = 0, z = {_n(p['H'] / 2)}.",
        script=block
        + f"""box = offset(box, amount=-{_n(p["t"])}, openings=box.faces().sort_by(Axis.Z)[-1])
box -= Pos({_n(-p["L"] / 2)}, 0, {_n(p["H"] / 2)}) * Rot(0, 90, 0) * Cylinder({_n(p["r"])}, {_n(2 * p["t"] + 2)})
result = box
""",
        oracle=[
            *block_actions,
            f"shell('>Z', {_n(p['t'])})",
            f"hole('<X', '0,{_n(p['H'] / 2)}', {_n(p['r'])}, {_n(p['t'] + 1)})",
        ],
    )


# ----- 6. spur-gear blank -----------------------------------------------------------------
def _gear_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, Ro=(25, 45), F=(8, 15))
    p |= _hub_sample(rng, p["Ro"], (0.35, 0.45), (5, 10), 0.45, (4, 7))
    p["Rc"] = _h((p["Rh"] + p["Ro"]) / 2)
    p["rl"] = _h(min((p["Ro"] - p["Rh"]) * 0.22, 2 * 3.1416 * p["Rc"] / p["n"] * 0.3))
    p["c"] = 1.0
    return p


def _gear(p: Params) -> Drawing:
    hub, hub_actions = _hub("gear", p, "F", "Rc", "rl")
    ro, f = _n(p["Ro"]), _n(p["F"])
    return Drawing(
        spec=f"A spur-gear blank: a disc of outside radius {_n(p['Ro'])} mm and face width "
        f"{_n(p['F'])} mm on z = 0, centred on the Z axis, both outer rim edges chamfered "
        f"{_n(p['c'])} mm; a hub of radius {_n(p['Rh'])} mm rising {_n(p['Hh'])} mm above the "
        f"disc; a bore of radius {_n(p['rb'])} mm through everything; {p['n']} lightening holes "
        f"of radius {_n(p['rl'])} mm through the disc on a circle of radius {_n(p['Rc'])} mm, "
        f"evenly spaced, the first on the +X axis.",
        script=f"""gear = Cylinder({ro}, {f}, {MINZ})
gear = chamfer(gear.edges().filter_by(GeomType.CIRCLE), length={_n(p["c"])})
"""
        + hub
        + "result = gear\n",
        oracle=[
            "new_sketch('XY')",
            f"circle({ro})",
            f"extrude({f})",
            f"chamfer('edges%CIRCLE', {_n(p['c'])})",
            *hub_actions,
        ],
    )


# ----- 7. standoff ------------------------------------------------------------------------
def _standoff_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, R=(4, 8), L=(12, 30))
    p["rh"] = _u(rng, 1.5, p["R"] * 0.5)
    p["d"] = _u(rng, 5, min(10, p["L"] - 3))
    p["ls"] = _u(rng, 5, 10)
    return p


def _standoff(p: Params) -> Drawing:
    return Drawing(
        spec=f"A male-female hex standoff along Z: a hexagonal body {_n(p['L'])} mm long from "
        f"z = 0, its corners on a circle of radius {_n(p['R'])} mm (a corner on +X); a blind "
        f"hole of radius {_n(p['rh'])} mm and depth {_n(p['d'])} mm in the top end on the axis; a "
        f"round stud of radius {_n(p['rh'])} mm and length {_n(p['ls'])} mm below z = 0.",
        script=f"""body = extrude(RegularPolygon({_n(p["R"])}, 6), amount={_n(p["L"])})
body -= Pos(0, 0, {_n(p["L"] - p["d"])}) * Cylinder({_n(p["rh"])}, {_n(p["d"])}, {MINZ})
body += Pos(0, 0, {_n(-p["ls"])}) * Cylinder({_n(p["rh"])}, {_n(p["ls"])}, {MINZ})
result = body
""",
        oracle=[
            "new_sketch('XY')",
            f"polygon(sides=6, radius={_n(p['R'])})",
            f"extrude({_n(p['L'])})",
            f"hole('>Z', '0,0', {_n(p['rh'])}, {_n(p['d'])})",
            "new_sketch('XY')",
            f"circle({_n(p['rh'])})",
            f"extrude({_n(p['ls'])}, direction='reverse')",
        ],
    )


# ----- 8. hinge leaf ----------------------------------------------------------------------
def _hinge_sample(rng: np.random.Generator) -> Params:
    p = _uniform(rng, L=(40, 80), W=(20, 35), t=(2, 4))
    p["Rk"] = _h(p["t"] * rng.uniform(1.0, 1.3) + 0.5)
    p["rp"] = _h(p["Rk"] * 0.45) or 1.0
    p["rm"] = _u(rng, 1.5, 2.5)
    p["nh"] = int(rng.integers(2, 4))
    p["cl"] = 0.5
    return p


def _hinge(p: Params) -> Drawing:
    block, block_actions = _block("leaf", p, "t", fillet=False)
    seg = p["L"] / 5
    gaps = [-p["L"] / 2 + 1.5 * seg, -p["L"] / 2 + 3.5 * seg]
    s = _h((p["L"] - 16) / (p["nh"] - 1))
    x0, ym = -s * (p["nh"] - 1) / 2, -p["W"] / 4
    w2, t2, rk, cl = p["W"] / 2, p["t"] / 2, p["Rk"], p["cl"]
    cuts = ", ".join(_n(g) for g in gaps)
    return Drawing(
        spec=f"A hinge leaf: a plate {_n(p['L'])} x {_n(p['W'])} x {_n(p['t'])} mm (X x Y x Z), "
        f"centred in X and Y, bottom on z = 0, with a knuckle cylinder of radius {_n(p['Rk'])} mm "
        f"along its +Y edge (axis along X at y = {_n(p['W'] / 2)}, z = {_n(p['t'] / 2)}, full "
        f"length). The knuckle row is split in five equal {_n(seg)} mm segments; the 2nd and 4th "
        f"are cut away, together with a {_n(p['cl'])} mm clearance into the plate (each cut "
        f"spans y = {_n(p['W'] / 2 - p['Rk'] - p['cl'])}..{_n(p['W'] / 2 + p['Rk'])}). A pin hole "
        f"of radius {_n(p['rp'])} mm runs along the knuckle axis through everything. "
        f"{p['nh']} through mounting holes of radius {_n(p['rm'])} mm at y = {_n(ym)}, "
        f"{_n(s)} mm apart along X, centred.",
        script=block
        + f"""leaf += Pos(0, {_n(w2)}, {_n(t2)}) * Rot(0, 90, 0) * Cylinder({_n(rk)}, {_n(p["L"])})
for x in ({cuts}):
    leaf -= Pos(x, {_n(w2 - cl / 2)}, {_n(t2)}) * Box({_n(p["L"] / 5)}, {_n(2 * rk + cl)}, {_n(4 * rk)})
leaf -= Pos(0, {_n(w2)}, {_n(t2)}) * Rot(0, 90, 0) * Cylinder({_n(p["rp"])}, {_n(p["L"])})
leaf -= [Pos({_n(x0)} + i * {_n(s)}, {_n(ym)}, 0) * Cylinder({_n(p["rm"])}, {_n(p["t"])}, {MINZ}) for i in range({p["nh"]})]
result = leaf
""",
        oracle=[
            *block_actions,
            f"new_sketch('YZ', {_n(-p['L'] / 2)})",
            f"circle({_n(rk)}, {_n(w2)}, {_n(t2)})",
            f"extrude({_n(p['L'])})",
            f"new_sketch('XY', {_n(t2)})",
            f"rectangle({_n(p['L'] / 5)}, {_n(2 * rk + cl)}, {_n(gaps[0])}, {_n(w2 - cl / 2)})",
            f"extrude({_n(4 * rk)}, mode='cut', direction='both')",
            f"pattern('linear', 2, {_n(2 * p['L'] / 5)}, 'X')",
            f"hole('<X', '{_n(-w2)},{_n(t2)}', {_n(p['rp'])})",
            f"hole('@{_n(x0)},{_n(ym)},{_n(p['t'])}', '{_n(x0)},{_n(ym)}', {_n(p['rm'])})",
            f"pattern('linear', {p['nh']}, {_n(s)}, 'X')",
        ],
    )


def _bump(key: str, by: float) -> Callable[[Params], Params]:
    return lambda p: {**p, key: _h(p[key] + by)}


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("plate", "plate with hole pattern", _plate_sample, _plate, _bump("r", 1.0)),
        Family("bracket", "L-bracket with fillets", _bracket_sample, _bracket, _bump("ri", 2.0)),
        Family("flange", "flange with bolt circle", _flange_sample, _flange, _bump("rbolt", 1.0)),
        Family("shaft", "stepped shaft with keyway", _shaft_sample, _shaft, _bump("r2", 1.0)),
        Family("enclosure", "hollow enclosure", _box_sample, _box, _bump("t", 1.0)),
        Family("gear", "spur-gear blank", _gear_sample, _gear, _bump("rb", 1.5)),
        Family("standoff", "standoff", _standoff_sample, _standoff, _bump("d", 3.0)),
        Family("hinge", "hinge leaf", _hinge_sample, _hinge, _bump("rp", 0.5)),
    )
}
