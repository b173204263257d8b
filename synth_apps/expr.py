"""A small, safe expression language for app rules, effects and task generators.

Specs are data, yet rules need logic ("no booking when ``record.seats_left < input.passengers``",
"a fee after ``record.date - days(1)``"). Expressions are Python syntax parsed with ``ast`` and
evaluated by walking the tree over an allow-list of node types and functions: no attribute of a
Python object, no import, no call outside :data:`FUNCTIONS`. The same evaluator runs in the app
(enforcing a rule), in the task generator (predicting an end state) and in validation, so the
three cannot disagree about what a rule means.
"""

from __future__ import annotations

import ast
import datetime as dt
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any


class ExprError(ValueError):
    """An expression that does not parse, names something unknown, or fails on its values."""


def days(n: float) -> dt.timedelta:
    return dt.timedelta(days=n)


def hours(n: float) -> dt.timedelta:
    return dt.timedelta(hours=n)


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def _datetime(d: Any, t: Any = "00:00") -> dt.datetime:
    if isinstance(d, dt.datetime):
        return d
    return dt.datetime.combine(_date(d), dt.time.fromisoformat(str(t)))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "days": days,
    "hours": hours,
    "date": _date,
    "datetime": _datetime,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "len": len,
    "int": int,
    "float": float,
    "str": str,
    "lower": lambda s: str(s).lower(),
    "upper": lambda s: str(s).upper(),
}

_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


@lru_cache(maxsize=4096)
def parse(source: str) -> ast.Expression:
    """Parse once and check every node against the allow-list (errors name the construct)."""
    try:
        tree = ast.parse(str(source), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot parse {source!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise ExprError(f"in {source!r}: only plain function calls are allowed")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExprError(f"in {source!r}: names starting with '_' are not allowed")
        elif not isinstance(node, _ALLOWED):
            raise ExprError(f"in {source!r}: {type(node).__name__} is not allowed")
    return tree


_ALLOWED = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.keyword,
    ast.And,
    ast.Or,
    ast.Not,
    ast.USub,
    ast.UAdd,
    *_BIN,
    *_CMP,
)


def names(source: str) -> set[str]:
    """Top-level names an expression reads (``record``, ``input``, ...), functions excluded."""
    calls = {
        n.func.id
        for n in ast.walk(parse(source))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    return {n.id for n in ast.walk(parse(source)) if isinstance(n, ast.Name) and n.id not in calls}


def evaluate(
    source: str, scope: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]] = FUNCTIONS
) -> Any:
    """Evaluate ``source`` with ``scope`` (mappings are read with ``a.b`` or ``a['b']``)."""
    try:
        return _eval(parse(source).body, scope, functions)
    except ExprError:
        raise
    except Exception as exc:
        raise ExprError(f"{source!r} failed: {type(exc).__name__}: {exc}") from None


def _eval(node: ast.AST, scope: Mapping[str, Any], fns: Mapping[str, Callable[..., Any]]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise ExprError(f"unknown name {node.id!r}; known: {sorted(scope)}")
    if isinstance(node, ast.Attribute):
        return _get(_eval(node.value, scope, fns), node.attr)
    if isinstance(node, ast.Subscript):
        return _get(_eval(node.value, scope, fns), _eval(node.slice, scope, fns))
    if isinstance(node, ast.BinOp):
        return _BIN[type(node.op)](_eval(node.left, scope, fns), _eval(node.right, scope, fns))
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, scope, fns)
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        value: Any = is_and
        for item in node.values:
            value = _eval(item, scope, fns)
            if bool(value) != is_and:
                return value
        return value
    if isinstance(node, ast.Compare):
        left = _eval(node.left, scope, fns)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, scope, fns)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        branch = node.body if _eval(node.test, scope, fns) else node.orelse
        return _eval(branch, scope, fns)
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, scope, fns) for e in node.elts]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):  # parse() allows no other
        name = node.func.id
        if name not in fns:
            raise ExprError(f"unknown function {name}(); known: {sorted(fns)}")
        args = [_eval(a, scope, fns) for a in node.args]
        kwargs = {k.arg: _eval(k.value, scope, fns) for k in node.keywords if k.arg}
        return fns[name](*args, **kwargs)
    raise ExprError(f"{type(node).__name__} is not allowed")


def _get(value: Any, key: Any) -> Any:
    if isinstance(value, Mapping):
        if key not in value:
            raise ExprError(f"no field {key!r}; has {sorted(value)}")
        return value[key]
    if isinstance(value, list | tuple | str):
        return value[key]
    raise ExprError(f"cannot read {key!r} of a {type(value).__name__}")


def _holes(template: str) -> list[tuple[str, str | None]]:
    """A template as (literal text, hole expression or None) pairs."""
    parts: list[tuple[str, str | None]] = []
    i = 0
    while i < len(template):
        start = template.find("{", i)
        if start < 0:
            parts.append((template[i:], None))
            break
        end = template.find("}", start)
        if end < 0:
            raise ExprError(f"unclosed '{{' in template {template!r}")
        parts.append((template[i:start], template[start + 1 : end]))
        i = end + 1
    return parts


def render(
    template: str, scope: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]] = FUNCTIONS
) -> str:
    """Fill ``{expr}`` holes of a text template (instructions, messages) with the evaluator."""
    return "".join(text + filled for text, filled in _filled(template, scope, functions))


def holes(
    template: str, scope: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]] = FUNCTIONS
) -> list[str]:
    """What each hole becomes: the grounded values a reworded instruction must keep."""
    return [filled for _, filled in _filled(template, scope, functions) if filled]


def _filled(
    template: str, scope: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]]
) -> list[tuple[str, str]]:
    return [
        (text, show(evaluate(hole, scope, functions)) if hole is not None else "")
        for text, hole in _holes(template)
    ]


def show(value: Any) -> str:
    """How a value reads on screen and in instructions: one format for the app and the tasks."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()[:10] if isinstance(value, dt.date) else value.strftime("%H:%M")
    return "" if value is None else str(value)
