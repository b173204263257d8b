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
import hashlib
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


def _as_date(value: Any, fn: str) -> dt.date:
    """A date, datetime or ISO date string as a date; anything else is the caller's mistake."""
    try:
        return _date(value)
    except (TypeError, ValueError):
        raise ExprError(f"{fn}(): {value!r} is not a date (a date or 'YYYY-MM-DD')") from None


_CLOCK = ("%H:%M", "%I:%M%p", "%I%p")  # 21:45, 1:30pm, 8pm (AndroidWorld writes all three)


def _as_time(value: Any, fn: str) -> dt.time:
    if isinstance(value, dt.datetime):
        return value.time()
    if isinstance(value, dt.time):
        return value
    for fmt in _CLOCK:
        try:
            return dt.datetime.strptime(str(value).strip().lower(), fmt).time()
        except ValueError:
            continue
    raise ExprError(f"{fn}(): {value!r} is not a time ('HH:MM', '1:30pm' or '8pm')")


def weekday(d: Any) -> str:
    """The day's English name, 'Monday' ... 'Sunday'."""
    return _as_date(d, "weekday").strftime("%A")


def week_start(d: Any) -> dt.date:
    """The Monday of the date's week (AndroidWorld: "assume the week starts from Monday")."""
    day = _as_date(d, "week_start")
    return day - dt.timedelta(days=day.weekday())


def month_day(d: Any) -> str:
    """'October 18': AndroidWorld's "<month name> <day>" (no zero padding)."""
    day = _as_date(d, "month_day")
    return f"{day:%B} {day.day}"


def strftime(d: Any, fmt: str) -> str:
    """A date, datetime or time formatted with a C ``strftime`` pattern (at most 64 chars)."""
    if not isinstance(fmt, str) or len(fmt) > 64:
        raise ExprError(f"strftime(): the format must be a text of at most 64 chars, not {fmt!r}")
    if isinstance(d, dt.datetime | dt.date | dt.time):
        return d.strftime(fmt)
    text = str(d)
    if "T" in text or " " in text.strip():
        try:
            return dt.datetime.fromisoformat(text).strftime(fmt)
        except ValueError:
            pass
    return _as_date(d, "strftime").strftime(fmt)


def minutes(t: Any) -> int:
    """Minutes since midnight of a time ('09:30' -> 570; '1:30pm' and '8pm' read too)."""
    clock = _as_time(t, "minutes")
    return clock.hour * 60 + clock.minute


def add_minutes(t: Any, n: Any) -> str:
    """'HH:MM' ``n`` minutes later (or earlier); a result outside the same day is an error, since
    a wrapped time (an event ending before it starts) would silently be wrong."""
    if isinstance(n, bool) or not isinstance(n, int | float):
        raise ExprError(f"add_minutes(): the minutes must be a number, not {n!r}")
    total = minutes(t) + int(n)
    if not 0 <= total < 24 * 60:
        raise ExprError(f"add_minutes({t!r}, {n!r}) leaves the day ({total} minutes)")
    return f"{total // 60:02d}:{total % 60:02d}"


def ampm(t: Any) -> str:
    """A time as AndroidWorld's prompts write it: '13:30' -> '1:30pm', '08:00' -> '8:00am'."""
    clock = _as_time(t, "ampm")
    return f"{(clock.hour % 12) or 12}:{clock.minute:02d}{'am' if clock.hour < 12 else 'pm'}"


def join(items: Any, sep: str = ", ") -> str:
    """Values as one text, each as it reads on screen: ['a', 'b'] -> 'a, b'."""
    if isinstance(items, str | bytes) or not isinstance(items, list | tuple):
        raise ExprError(f"join(): expected a list, not {type(items).__name__}")
    return str(sep).join(show(i) for i in items)


def pluck(rows: Any, field: str) -> list[Any]:
    """One field of each row: ``join(pluck(records, 'title'))`` names picked rows in order."""
    if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, list | tuple):
        raise ExprError(f"pluck(): expected a list of rows, not {type(rows).__name__}")
    return [_get(r, field) for r in rows]


def spoken_dates(d: Any, today: Any) -> list[str]:
    """Every unambiguous way to say the date relative to ``today``, as AndroidWorld rewords a
    date in its prompts: 'October 18', 'October 18 2023', and when they apply 'today',
    'tomorrow', 'yesterday', 'this Friday' (1-6 days ahead), 'the Friday after next' (8-14
    days ahead). AndroidWorld also says a bare 'Friday' for a day up to a week back or ahead;
    we leave that out, since the same word then names two dates."""
    day, now = _as_date(d, "spoken_date"), _as_date(today, "spoken_date")
    out = [month_day(day), f"{month_day(day)} {day.year}"]
    ahead = (day - now).days
    out += {0: ["today"], 1: ["tomorrow"], -1: ["yesterday"]}.get(ahead, [])
    if 1 <= ahead <= 6:
        out.append(f"this {weekday(day)}")
    elif 8 <= ahead <= 14:
        out.append(f"the {weekday(day)} after next")
    return out


def spoken_date(d: Any, today: Any, salt: Any = "") -> str:
    """One of :func:`spoken_dates`, chosen by a hash of (date, today, salt): deterministic with
    no random generator, so it reads the same in the generator, the app and validation. Pass a
    drawn ``salt`` (``randint(0, 99)``) to vary the wording between tasks with the same date."""
    options = spoken_dates(d, today)
    key = f"{_as_date(d, 'spoken_date')}|{_as_date(today, 'spoken_date')}|{salt}"
    return options[int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % len(options)]


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
    "weekday": weekday,
    "week_start": week_start,
    "month_day": month_day,
    "strftime": strftime,
    "minutes": minutes,
    "add_minutes": add_minutes,
    "ampm": ampm,
    "join": join,
    "pluck": pluck,
    "spoken_date": spoken_date,
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
