"""What a synthesized app does, without HTTP: a form's values read and checked, an operation's
rules checked and its effects carried out on the session's database.

One reading for the app host (:mod:`palaestra.synth_apps.app`, which serves the forms) and for
the task generator's simulation (:mod:`palaestra.synth_apps.generate`), so a generated verifier
expects exactly what the app does.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any

from palaestra.synth_apps import data, expr
from palaestra.synth_apps.spec import AppSpec, EffectSpec, FieldSpec, OperationSpec

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class RuleViolation(Exception):
    """An operation's rule refused it; the message is the rule's, for the user."""


def options(ds: data.Scope, f: FieldSpec, where: str | None = None) -> list[tuple[Any, str]]:
    """What a choice field offers: (submitted value, shown text) pairs."""
    if f.type == "enum":
        return [(c, c) for c in f.choices or []]
    if f.type == "bool":
        return [("1", "yes"), ("0", "no")]
    if f.type == "ref":
        rows = ds.rows(f.ref_entity, where, today=ds.spec.today)
        return [(r["id"], ds.display(f.ref_entity, r)) for r in rows]
    return []


def input_scope(ds: data.Scope, op: OperationSpec, values: dict[str, str]) -> dict[str, Any]:
    """Submitted form values, checked as the form checks them (ValueError names the problem),
    as the ``input`` an operation's rules and effects read: one reading for the app and for
    the task generator's simulation."""
    scope: dict[str, Any] = {}
    for name, f in op.inputs().items():
        try:
            value = parse_field(f, values.get(name, ""), ds)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if f.type == "ref":
            row = ds.row(f.ref_entity, value) if value is not None else None
            scope[f"{name}_id"] = value
            scope[name] = ds.display(f.ref_entity, row) if row else ""
            scope[f"{name}_row"] = row or {}
        else:
            scope[name] = data.to_py(f, data.to_db(f, value))
    return scope


def apply(
    spec: AppSpec,
    conn: Any,
    op: OperationSpec,
    record: dict[str, Any] | None,
    inputs: dict[str, Any],
) -> str:
    """Check the rules and carry out the effects; one function for the app and the planner.

    Raises RuleViolation (nothing changed) or returns the success message.
    """
    ds = data.Scope(spec, conn)
    scope: dict[str, Any] = {"input": inputs, "today": spec.today, "now": app_now(spec)}
    if record is not None:
        scope["record"] = record
    fns = db_functions(ds, scope)
    for key, source in op.let.items():
        scope[key] = expr.evaluate(source, scope, fns)
    for rule in op.rules:
        if not expr.evaluate(rule.require, scope, fns):
            raise RuleViolation(rule.message)
    created: dict[str, Any] = {}
    for effect in op.effects:
        target = effect_target(effect, op.entity)
        if effect.where is not None:  # update/clear of the rows where it holds, one by one
            for row in ds.rows(target):
                scope["target"] = row  # the functions read this scope too (count, total)
                if expr.evaluate(effect.where, scope, fns):
                    _write(spec, conn, effect, target, row["id"], scope, fns)
            scope.pop("target", None)
            continue
        if effect.create:
            given = _values(spec, effect, target, scope, fns)
            count = conn.execute(f"SELECT count(*) FROM {target}").fetchone()[0]
            seed = int(hashlib.sha256(f"{target}:{count}".encode()).hexdigest()[:8], 16)
            ids = {n: [r[0] for r in conn.execute(f"SELECT id FROM {n}")] for n in spec.entities}
            row = data.Generator(spec, seed).row(target, given, ds, ids)
            rid = data.insert(conn, target, row)
            created = ds.row(target, rid) or {}
            scope["created"] = created
        elif effect.clear:
            conn.execute(f"DELETE FROM {target}")
        elif record is None:  # the spec check gives 'record' effects an entity, the app a row
            raise ValueError(f"an effect on 'record' of {target} without the row")
        else:
            _write(spec, conn, effect, target, record["id"], scope, fns)
    return expr.render(op.success, scope, fns)


def effect_target(effect: EffectSpec, entity: str | None) -> str:
    """The table an effect writes: what it names, else the operation's own entity."""
    named = effect.create or effect.clear or effect.update or effect.delete
    return str(entity if named in (None, "record") else named)


def _values(spec: AppSpec, effect: EffectSpec, target: str, scope: dict, fns: dict) -> dict:
    e = spec.entities[target]
    given = {}
    for col, source in effect.values.items():
        f = e.fields[col] if col in e.fields else FieldSpec(type="int")  # a ref's <name>_id
        given[col] = data.to_db(f, expr.evaluate(source, scope, fns))
    return given


def _write(
    spec: AppSpec, conn: Any, effect: EffectSpec, target: str, rid: int, scope: dict, fns: dict
) -> None:
    """Update (with the effect's values) or delete one row."""
    if effect.update:
        given = _values(spec, effect, target, scope, fns)
        sets = ", ".join(f"{c} = ?" for c in given)
        conn.execute(f"UPDATE {target} SET {sets} WHERE id = ?", (*given.values(), rid))
    else:
        conn.execute(f"DELETE FROM {target} WHERE id = ?", (rid,))


def db_functions(ds: data.Scope, scope: dict[str, Any]) -> dict[str, Any]:
    """Aggregates over the session's rows, for rules and for info tasks' answers; ``where``,
    ``value`` and ``order`` are expressions that see the outer scope (``record``, ``input``,
    ``let``, ``plant``, ``today`` ..., read when called, so keys added later count) plus ``row``,
    e.g. a conflict check ``count('event', "row.date == input.date and row.start < input.end")
    == 0``. Rows come in the entity's list order.

    ``count(entity, where)``, ``total(entity, value, where)`` (rounded to cents);
    ``titles(entity, where)`` the rows' display texts; ``values(entity, field, where)`` a
    field's distinct values; ``sum(entity, value, where)`` (ints stay ints);
    ``min_of``/``max_of(entity, value, where)``; ``first``/``last(entity, where, order)`` the
    row with the smallest/largest ``order`` (ties: list order). An empty match is an error for
    min_of/max_of/first/last: there is no answer to give."""

    def entity_of(fn: str, entity: Any) -> Any:
        if entity not in ds.spec.entities:
            raise expr.ExprError(
                f"{fn}(): no entity {entity!r}; the app has {sorted(ds.spec.entities)}"
            )
        return ds.spec.entities[entity]

    def matching(entity: str, where: str, fn: str = "count") -> list[dict[str, Any]]:
        entity_of(fn, entity)
        return [r for r in ds.rows(entity) if expr.evaluate(where, {**scope, "row": r})]

    def of(value: str, row: dict[str, Any]) -> Any:
        return expr.evaluate(value, {**scope, "row": row})

    def count(entity: str, where: str = "True") -> int:
        return len(matching(entity, where))

    def total(entity: str, value: str, where: str = "True") -> float:
        return round(
            sum(float(expr.evaluate(value, {**scope, "row": r})) for r in matching(entity, where)),
            2,
        )

    def titles(entity: str, where: str = "True") -> list[str]:
        return [ds.display(entity, r) for r in matching(entity, where, "titles")]

    def values(entity: str, field: str, where: str = "True") -> list[Any]:
        if field not in entity_of("values", entity).fields:
            raise expr.ExprError(
                f"values(): {entity} has no field {field!r}; "
                f"it has {sorted(ds.spec.entities[entity].fields)}"
            )
        out: list[Any] = []
        for r in matching(entity, where, "values"):
            if r[field] not in out:
                out.append(r[field])
        return out

    def numbers(fn: str, entity: str, value: str, where: str) -> list[Any]:
        out = [of(value, r) for r in matching(entity, where, fn)]
        for v in out:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise expr.ExprError(f"{fn}(): {value!r} is {v!r}, not a number")
        return out

    def total_of(entity: str, value: str, where: str = "True") -> int | float:
        found = numbers("sum", entity, value, where)
        return sum(found) if all(isinstance(v, int) for v in found) else round(sum(found), 2)

    def extreme(fn: str, entity: str, value: str, where: str) -> Any:
        found = [of(value, r) for r in matching(entity, where, fn)]
        if not found:
            raise expr.ExprError(f"{fn}(): no {entity} row where {where!r}")
        try:
            return min(found) if fn == "min_of" else max(found)
        except TypeError:
            raise expr.ExprError(f"{fn}(): the values of {value!r} do not compare") from None

    def pick(fn: str, entity: str, where: str, order: str) -> dict[str, Any]:
        rows = matching(entity, where, fn)
        if not rows:
            raise expr.ExprError(f"{fn}(): no {entity} row where {where!r}")
        keyed = [(of(order, r), i) for i, r in enumerate(rows)]
        try:
            best = min(keyed) if fn == "first" else max(keyed, key=lambda k: (k[0], -k[1]))
        except TypeError:
            raise expr.ExprError(f"{fn}(): the values of {order!r} do not compare") from None
        return rows[best[1]]

    return {
        **expr.FUNCTIONS,
        "count": count,
        "total": total,
        "titles": titles,
        "values": values,
        "sum": total_of,
        "min_of": lambda entity, value, where="True": extreme("min_of", entity, value, where),
        "max_of": lambda entity, value, where="True": extreme("max_of", entity, value, where),
        "first": lambda entity, where="True", order="row.id": pick("first", entity, where, order),
        "last": lambda entity, where="True", order="row.id": pick("last", entity, where, order),
    }


def app_now(spec: AppSpec) -> dt.datetime:
    return dt.datetime.combine(spec.today, dt.time(9, 0))


def to_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_field(f: FieldSpec, raw: str, ds: data.Scope) -> Any:
    """A form value checked against its field; ValueError says what is wrong, for the user."""
    raw = raw.strip()
    if raw == "":
        if f.type == "bool":
            return False
        if f.required:
            raise ValueError("this field is required")
        return None
    try:
        if f.type == "int":
            value: Any = int(raw)
        elif f.type in ("float", "money"):
            value = float(raw)
        elif f.type == "date":
            value = dt.date.fromisoformat(raw)
        elif f.type == "time":
            value = dt.time.fromisoformat(raw).strftime("%H:%M")
        elif f.type == "datetime":
            value = dt.datetime.fromisoformat(raw)
        elif f.type == "bool":
            value = raw in ("on", "1", "true", "yes")
        elif f.type == "ref":
            value = int(raw)
        else:
            value = raw
    except ValueError:
        raise ValueError(f"{raw!r} is not a valid {f.type}") from None
    if f.type in ("int", "float", "money"):
        if f.min is not None and value < f.min:
            raise ValueError(f"must be at least {f.min:g}")
        if f.max is not None and value > f.max:
            raise ValueError(f"must be at most {f.max:g}")
    if f.type == "enum" and value not in (f.choices or []):
        raise ValueError(f"choose one of {', '.join(f.choices or [])}")
    if f.type == "email" and not _EMAIL.match(value):
        raise ValueError("is not an email address")
    if f.type == "ref" and value not in {v for v, _ in options(ds, f, f.where)}:
        raise ValueError("choose one of the listed options")
    return value


def matches(f: FieldSpec, name: str, row: dict[str, Any], value: str) -> bool:
    if f.type == "ref":
        return str(row[f"{name}_id"]) == value
    if f.type == "bool":
        return str(int(bool(row[name]))) == value
    if f.type in ("str", "text", "email"):
        return value.casefold() in str(row[name] or "").casefold()
    return expr.show(row[name]) == value
