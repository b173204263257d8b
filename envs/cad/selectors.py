"""Readable face and edge selectors, so an agent never handles a kernel pointer.

The grammar borrows CadQuery's string selectors, which models have seen in countless scripts,
and adds the ids the observation lists and a nearest-to-a-point form that survives topology
renumbering (ids change whenever a boolean rebuilds the solid; a point on a face does not):

    [faces|edges] TERM [or TERM ...]     one or several terms, united
    A of B                               A-kind elements lying on what B selects
                                         ("edges of >Z" = the edges of the top face)
    TERM: >Z <Z       furthest/nearest along an axis (every element tied within 1e-3 mm)
          |Z          edges parallel to Z / faces whose normal is parallel to Z
          #Z          edges perpendicular to Z / faces whose normal is perpendicular to Z
          +Z -Z       faces whose normal points along +Z / -Z (edges: not applicable)
          %LINE %CIRCLE %PLANE %CYLINDER %CONE %TORUS %BSPLINE   geometry type
          f3 e12 f1,f4  ids listed in the observation's topology
          @x,y,z      the element nearest to that point
          *           every element

Seam edges (the kernel's cut line along a full cylinder) are never selected by direction
terms: they are not real edges for a designer and filleting them always fails.
"""

from __future__ import annotations

import re
from typing import Any

from build123d import Edge, Face, GeomType, Shape, Vector

from palaestra.errors import ActionError

_AXES = {"X": Vector(1, 0, 0), "Y": Vector(0, 1, 0), "Z": Vector(0, 0, 1)}
_TYPES = {g.name: g for g in GeomType}
_TIE = 1e-3


def faces_of(shape: Shape | None) -> list[Face]:
    return list(shape.faces()) if shape is not None else []


def edges_of(shape: Shape | None) -> list[Edge]:
    return list(shape.edges()) if shape is not None else []


def is_seam(edge: Edge, shape: Shape) -> bool:
    """An edge that one curved face meets on both sides (a full cylinder's seam line)."""
    from OCP.BRep import BRep_Tool

    curved = getattr(shape, "_palaestra_curved", None)
    if curved is None:
        curved = [f.wrapped for f in shape.faces() if f.geom_type != GeomType.PLANE]
        shape._palaestra_curved = curved
    return any(BRep_Tool.IsClosed_s(edge.wrapped, f) for f in curved)


def select(shape: Shape | None, text: str, kind: str) -> list[Any]:
    """Elements of ``kind`` ("faces" or "edges") that ``text`` selects; ActionError if none."""
    if shape is None:
        raise ActionError(f"there is no part yet, so {text!r} selects no {kind}")
    text = text.strip()
    if not text:
        raise ActionError(f"an empty selector selects no {kind}; try '>Z' or an id like f0")
    if " of " in text:
        outer, _, inner = text.partition(" of ")
        parents = select(shape, inner, "faces" if _kind_of(inner, "faces") == "faces" else kind)
        pool_kind, outer_sel = _split_kind(outer, kind)
        pool: list[Any] = []
        for parent in parents:
            for item in parent.faces() if pool_kind == "faces" else parent.edges():
                if not any(item.is_same(p) for p in pool):
                    pool.append(item)
        found = _apply_terms(shape, pool, outer_sel or "*", pool_kind, text)
    else:
        pool_kind, sel = _split_kind(text, kind)
        pool = faces_of(shape) if pool_kind == "faces" else edges_of(shape)
        found = _apply_terms(shape, pool, sel, pool_kind, text)
    if pool_kind != kind:
        raise ActionError(f"{text!r} selects {pool_kind}, but this action needs {kind}")
    if not found:
        n = len(pool)
        prefix = "f" if kind == "faces" else "e"
        raise ActionError(
            f"no {kind} match {text!r} (the part has {n} {kind}, ids {prefix}0..{prefix}{n - 1} "
            f"in the topology listing)"
        )
    return found


def _kind_of(text: str, default: str) -> str:
    return _split_kind(text, default)[0]


def _split_kind(text: str, default: str) -> tuple[str, str]:
    text = text.strip()
    for word in ("faces", "edges"):
        if text.startswith(word):
            return word, text[len(word) :].strip()
    return default, text


def _apply_terms(shape: Shape, pool: list[Any], sel: str, kind: str, text: str) -> list[Any]:
    out: list[Any] = []
    for term in re.split(r"\s+or\s+", sel.strip()):
        for item in _term(shape, pool, term.strip(), kind, text):
            if not any(item.is_same(o) for o in out):
                out.append(item)
    return out


def _axis(letter: str, text: str) -> Vector:
    if letter.upper() not in _AXES:
        raise ActionError(f"selector {text!r}: the axis must be X, Y or Z, not {letter!r}")
    return _AXES[letter.upper()]


def _term(shape: Shape, pool: list[Any], term: str, kind: str, text: str) -> list[Any]:
    if term in ("*", ""):
        return list(pool)
    if re.fullmatch(r"([fe]\d+)(\s*,\s*[fe]\d+)*", term):
        picked = []
        for ref in re.split(r"\s*,\s*", term):
            want = "faces" if ref[0] == "f" else "edges"
            items = faces_of(shape) if want == "faces" else edges_of(shape)
            i = int(ref[1:])
            if want != kind:
                raise ActionError(f"{ref!r} is a {want[:-1]} id, but this selects {kind}")
            if i >= len(items):
                raise ActionError(
                    f"there is no {ref} (the part has {len(items)} {kind}: "
                    f"{ref[0]}0..{ref[0]}{len(items) - 1})"
                )
            if any(items[i].is_same(p) for p in pool):
                picked.append(items[i])
        return picked
    if term.startswith("@"):
        try:
            x, y, z = (float(v) for v in term[1:].split(","))
        except ValueError:
            raise ActionError(f"selector {term!r}: a point is @x,y,z, e.g. @0,0,5") from None
        point = Vector(x, y, z)
        return [min(pool, key=lambda s: s.distance_to(point))] if pool else []
    if term.startswith("%"):
        name = term[1:].upper()
        if name not in _TYPES:
            raise ActionError(f"selector {term!r}: the type must be one of {sorted(_TYPES)}")
        return [s for s in pool if s.geom_type == _TYPES[name]]
    m = re.fullmatch(r"([<>|#+-])\s*([A-Za-z])", term)
    if not m:
        raise ActionError(
            f"cannot read selector {text!r}: use >Z, <X, |Z, #Y, +Z, -X, %CIRCLE, ids such "
            f"as f3 or e1,e5, @x,y,z, or 'edges of >Z'"
        )
    op, axis = m.group(1), _axis(m.group(2), text)
    if op in "<>":
        if not pool:
            return []
        keyed = [(s.center().dot(axis), s) for s in pool]
        best = max(k for k, _ in keyed) if op == ">" else min(k for k, _ in keyed)
        return [s for k, s in keyed if abs(k - best) <= _TIE]
    if kind == "faces":
        out = []
        for f in pool:
            if f.geom_type != GeomType.PLANE:
                continue
            d = f.normal_at().dot(axis)
            if (
                (op == "|" and abs(abs(d) - 1) < 1e-6)
                or (op == "#" and abs(d) < 1e-6)
                or (op == "+" and d > 1 - 1e-6)
                or (op == "-" and d < -1 + 1e-6)
            ):
                out.append(f)
        return out
    if op in "+-":
        raise ActionError(f"selector {term!r}: +/- pick faces by normal; for edges use | or #")
    out = []
    for e in pool:
        if e.geom_type != GeomType.LINE or is_seam(e, shape):
            continue
        d = abs((e.end_point() - e.start_point()).normalized().dot(axis))
        if (op == "|" and abs(d - 1) < 1e-6) or (op == "#" and d < 1e-6):
            out.append(e)
    return out
