"""An AppSpec's data: the SQLite schema, seeded rows, and rows as expression scopes.

Seeding is reproducible: Faker and ``random`` are seeded from the data seed, entities are filled
in reference order, and a template database is built once per (spec, seed) and then copied for
every session (a file copy takes well under a millisecond for these sizes, which is what makes
reset fast). Ref columns are stored as ``<field>_id``; dates as ISO text, so SQL checks written by
the task generator read naturally.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import random
import sqlite3
import string
import tempfile
import threading
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from faker import Faker

from palaestra.errors import InvalidRequest
from palaestra.synth_apps import expr
from palaestra.synth_apps.spec import AppSpec, EntitySpec, FieldSpec

SQL_TYPES = {
    "int": "INTEGER",
    "float": "REAL",
    "money": "REAL",
    "bool": "INTEGER",
    "ref": "INTEGER",
}
_TEMPLATES: dict[tuple[str, int], Path] = {}
_LOCK = threading.Lock()


def column(name: str, f: FieldSpec) -> str:
    return f"{name}_id" if f.type == "ref" else name


def schema(spec: AppSpec) -> list[str]:
    statements = []
    for name in spec.seed_order():
        cols = ["id INTEGER PRIMARY KEY"]
        for fname, f in spec.entities[name].fields.items():
            col = f"{column(fname, f)} {SQL_TYPES.get(f.type, 'TEXT')}"
            if f.type == "ref":
                col += f" REFERENCES {f.to}(id)"
            cols.append(col)
        statements.append(f"CREATE TABLE {name} ({', '.join(cols)})")
    return statements


def to_db(f: FieldSpec, value: Any) -> Any:
    """A Python value as stored: one conversion for seeding, forms and effects."""
    if value is None or value == "":
        return None
    if f.type in ("int", "ref"):
        return int(value)
    if f.type == "float":
        return float(value)
    if f.type == "money":
        return round(float(value), 2)
    if f.type == "bool":
        return int(value in (True, 1, "1", "true", "on", "yes"))
    if f.type == "date":
        return expr._date(value).isoformat()
    if f.type == "time":
        return dt.time.fromisoformat(str(value)).strftime("%H:%M")
    if f.type == "datetime":
        if isinstance(value, str) and len(value) > 10:  # "2026-12-01 08:30" (a form, a plant)
            value = dt.datetime.fromisoformat(value)
        return expr._datetime(value).strftime("%Y-%m-%d %H:%M")
    return str(value)


def to_py(f: FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    if f.type == "bool":
        return bool(value)
    if f.type == "date":
        return dt.date.fromisoformat(value)
    if f.type == "datetime":
        return dt.datetime.fromisoformat(value)
    if f.type == "money":
        return round(float(value), 2)
    return value


def connect(path: str | Path, readonly: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}{'?mode=ro' if readonly else ''}"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


class Scope:
    """Rows read as expression scopes: refs as display text, ``<f>_id`` and ``<f>_row``."""

    def __init__(self, spec: AppSpec, conn: sqlite3.Connection) -> None:
        self.spec = spec
        self.conn = conn

    def row(self, entity: str, row_id: int, depth: int = 1) -> dict[str, Any] | None:
        raw = self.conn.execute(f"SELECT * FROM {entity} WHERE id = ?", (row_id,)).fetchone()
        return None if raw is None else self.scope(entity, dict(raw), depth)

    def scope(self, entity: str, raw: Mapping[str, Any], depth: int = 1) -> dict[str, Any]:
        e = self.spec.entities[entity]
        out: dict[str, Any] = {"id": raw.get("id")}
        for fname, f in e.fields.items():
            if f.type == "ref":
                ref_id = raw.get(f"{fname}_id")
                out[f"{fname}_id"] = ref_id
                ref = self.row(f.ref_entity, ref_id, depth - 1) if ref_id is not None else None
                out[fname] = self.display(f.ref_entity, ref) if ref else ""
                if depth > 0:
                    out[f"{fname}_row"] = ref or {}
            else:
                out[fname] = to_py(f, raw.get(fname))
        return out

    def display(self, entity: str, row: Mapping[str, Any]) -> str:
        return expr.show(row.get(self.spec.entities[entity].display))

    def rows(self, entity: str, where: str | None = None, **extra: Any) -> list[dict[str, Any]]:
        e = self.spec.entities[entity]
        order = e.order or "id"
        raws = self.conn.execute(f"SELECT * FROM {entity} ORDER BY {order}, id").fetchall()
        rows = [self.scope(entity, dict(r)) for r in raws]
        if where:
            rows = [r for r in rows if expr.evaluate(where, {"record": r, **extra})]
        return rows


class Generator:
    """Values for fields: seed data, and fields an effect leaves unset (a booking reference)."""

    def __init__(self, spec: AppSpec, seed: int, fake: Faker | None = None) -> None:
        self.spec = spec
        self.rng = random.Random(seed)
        self.fake = fake or Faker()
        self.fake.seed_instance(seed)

    def value(self, f: FieldSpec, row: Mapping[str, Any], ids: Mapping[str, list[int]]) -> Any:
        rng, today = self.rng, self.spec.today
        if f.values:
            return rng.choice(f.values)
        if f.expr:
            return expr.evaluate(f.expr, {"row": row, "today": today})
        if f.faker:
            return getattr(self.fake, f.faker)()
        if f.pattern:
            return "".join(
                str(rng.randint(0, 9))
                if c == "#"
                else rng.choice(string.ascii_uppercase)
                if c == "?"
                else c
                for c in f.pattern
            )
        if f.default is not None:
            return f.default
        lo, hi = f.min, f.max
        match f.type:
            case "int":
                return rng.randint(int(lo or 0), int(hi if hi is not None else 100))
            case "float":
                return rng.uniform(lo or 0.0, hi if hi is not None else 100.0)
            case "money":
                return (
                    round(
                        rng.uniform(1.0 if lo is None else lo, hi if hi is not None else 100.0) * 2
                    )
                    / 2
                )
            case "bool":
                return rng.random() < 0.5
            case "date":
                return today + dt.timedelta(
                    days=rng.randint(int(lo or 0), int(30 if hi is None else hi))
                )
            case "time":
                return dt.time(
                    rng.randint(int(lo or 0), int(23 if hi is None else hi)),
                    rng.randrange(0, 60, 5),
                )
            case "datetime":
                day = today + dt.timedelta(
                    days=rng.randint(int(lo or 0), int(30 if hi is None else hi))
                )
                return dt.datetime.combine(day, dt.time(rng.randint(8, 19), rng.choice((0, 30))))
            case "enum":
                return rng.choice(f.choices or [""])
            case "email":
                return self.fake.email()
            case "text":
                return self.fake.sentence(nb_words=10)
            case "ref":
                return rng.choice(ids[f.ref_entity]) if ids.get(f.ref_entity) else None
        return self.fake.word()

    def row(
        self,
        entity: str,
        given: Mapping[str, Any],
        scope: Scope,
        ids: Mapping[str, list[int]],
    ) -> dict[str, Any]:
        """A full row as stored: ``given`` values (db form) win, the rest is generated."""
        e: EntitySpec = self.spec.entities[entity]
        stored: dict[str, Any] = {}
        shown: dict[str, Any] = {}
        for fname, f in e.fields.items():
            col = column(fname, f)
            for _ in range(200):
                if col in given:
                    value = given[col]
                elif f.differs_from and f.type == "ref":
                    other = stored.get(column(f.differs_from, e.fields[f.differs_from]))
                    value = self.rng.choice([i for i in ids[f.ref_entity] if i != other])
                else:
                    value = to_db(f, self.value(f, shown, ids))
                if col in given or not f.unique or not _taken(scope.conn, entity, col, value):
                    break
            else:
                raise ValueError(f"entities.{entity}.fields.{fname}: ran out of unique values")
            stored[col] = value
            if f.type == "ref":
                ref = scope.row(f.ref_entity, value, 0) if value is not None else None
                shown[fname] = scope.display(f.ref_entity, ref) if ref else ""
                shown[f"{fname}_id"], shown[f"{fname}_row"] = value, ref or {}
            else:
                shown[fname] = to_py(f, value)
        return stored


def _taken(conn: sqlite3.Connection, table: str, col: str, value: Any) -> bool:
    return conn.execute(f"SELECT 1 FROM {table} WHERE {col} = ?", (value,)).fetchone() is not None


def insert(conn: sqlite3.Connection, table: str, row: Mapping[str, Any]) -> int:
    cols = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    cur = conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(row.values()))
    return int(cur.lastrowid or 0)


def build(spec: AppSpec, path: Path, seed: int) -> None:
    """Create and seed a database file (fixed rows first, then generated ones)."""
    path.unlink(missing_ok=True)
    conn = connect(path)
    try:
        for statement in schema(spec):
            conn.execute(statement)
        gen = Generator(spec, seed)
        scope = Scope(spec, conn)
        ids: dict[str, list[int]] = {}
        for name in spec.seed_order():
            e = spec.entities[name]
            ids[name] = []
            for fixed in e.seed.rows:
                given = _resolve_fixed(spec, name, fixed, conn)
                ids[name].append(insert(conn, name, gen.row(name, given, scope, ids)))
            for _ in range(e.seed.count):
                ids[name].append(insert(conn, name, gen.row(name, {}, scope, ids)))
        conn.commit()
    finally:
        conn.close()


def _resolve_fixed(
    spec: AppSpec, entity: str, fixed: Mapping[str, Any], conn: Any, place: str = ""
) -> dict:
    """A row given by field name (a ref by its row's display text) in its stored form."""
    place = place or f"entities.{entity}.seed.rows"
    e = spec.entities[entity]
    given: dict[str, Any] = {}
    for key, value in fixed.items():
        if key not in e.fields:
            raise ValueError(f"{place}: {key!r} is not a field")
        f = e.fields[key]
        if f.type == "ref":
            target = spec.entities[f.ref_entity]
            hit = conn.execute(
                f"SELECT id FROM {f.to} WHERE {target.display} = ?", (value,)
            ).fetchone()
            if hit is None:
                raise ValueError(f"{place}: no {f.to} named {value!r}")
            given[f"{key}_id"] = hit[0]
        else:
            try:
                given[key] = to_db(f, value)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{place}.{key}: {value!r} is not a {f.type} ({exc})") from None
    return given


#: a task's planted rows, at most (a reset inserts them; a task needs a few)
MAX_PLANT = 300
#: the longest planted text value (characters)
MAX_PLANT_TEXT = 10_000
SCALARS = (str, int, float, bool, type(None))


def plant(
    spec: AppSpec,
    conn: sqlite3.Connection,
    entity: str,
    values: Mapping[str, Any],
    place: str = "plant",
) -> int:
    """Insert one row a task plants before the agent starts (``setup["plant"]``): ``values``
    by field name (a ref by its row's display text), the rest generated from a seed made of the
    row itself, so the task generator's simulated database and every reset of the app get the
    very same row (and id). Returns the new row's id; a bad value is a ``ValueError`` naming
    ``place`` and the field."""
    given = _resolve_fixed(spec, entity, values, conn, place)
    seed = zlib.crc32(json.dumps([entity, values], sort_keys=True, default=str).encode())
    ids = {
        name: [r[0] for r in conn.execute(f"SELECT id FROM {name} ORDER BY id")]
        for name in spec.entities
    }
    row = Generator(spec, seed, _faker()).row(entity, given, Scope(spec, conn), ids)
    return insert(conn, entity, row)


_FAKERS = threading.local()


def _faker() -> Faker:
    """This thread's Faker, reseeded by each use (making one costs 10-50 ms, which a reset
    that plants rows would pay per row; a reseeded one draws exactly what a new one would)."""
    fake = getattr(_FAKERS, "fake", None)
    if fake is None:
        fake = _FAKERS.fake = Faker()
    return fake


def check_plant(
    plant_: Any, apps: Mapping[str, AppSpec], default: str | None
) -> list[tuple[AppSpec, str, dict[str, Any]]]:
    """``setup["plant"]`` checked against the apps installed (``apps``: spec name -> spec):
    a list of at most :data:`MAX_PLANT` ``{"app", "entity", "values"}`` (``app`` defaults to
    ``default``, the task's app) whose values are scalars of the entity's fields. Returns
    (spec, entity, values) per row; anything else is an :class:`InvalidRequest` naming the
    place (``task.setup.plant[2].values.title``), since the request, not the agent, is wrong."""
    where = "task.setup.plant"

    def bad(place: str, message: str) -> InvalidRequest:
        return InvalidRequest(f"{place}: {message}", field=where)

    if not isinstance(plant_, list):
        raise bad(where, f"must be a list of {{app, entity, values}}, not {type(plant_).__name__}")
    if len(plant_) > MAX_PLANT:
        raise bad(where, f"{len(plant_)} rows; a task plants at most {MAX_PLANT}")
    out = []
    for i, item in enumerate(plant_):
        place = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise bad(place, "must be an object {app, entity, values}")
        extra = sorted(set(item) - {"app", "entity", "values"})
        if extra:
            raise bad(place, f"unknown key(s) {extra}; a row has app, entity and values")
        app = item.get("app", default)
        if not isinstance(app, str) or app not in apps:
            raise bad(f"{place}.app", f"no app {app!r} installed here; apps: {sorted(apps)}")
        spec = apps[app]
        entity = item.get("entity")
        if not isinstance(entity, str) or entity not in spec.entities:
            known = sorted(spec.entities)
            raise bad(f"{place}.entity", f"{app} has no entity {entity!r}; entities: {known}")
        values = item.get("values", {})
        if not isinstance(values, dict):
            raise bad(f"{place}.values", "must be an object of field: value")
        fields = spec.entities[entity].fields
        for key, value in values.items():
            if key not in fields:
                raise bad(
                    f"{place}.values.{key}",
                    f"{app}.{entity} has no field {key!r}; fields: {sorted(fields)}",
                )
            if not isinstance(value, SCALARS):
                raise bad(f"{place}.values.{key}", f"must be a scalar, not {type(value).__name__}")
            if isinstance(value, str) and len(value) > MAX_PLANT_TEXT:
                raise bad(f"{place}.values.{key}", f"longer than {MAX_PLANT_TEXT} characters")
        out.append((spec, entity, values))
    return out


def plant_rows(rows: list[tuple[AppSpec, str, dict[str, Any]]], dbs: Mapping[str, Path]) -> None:
    """Insert checked plant rows (see :func:`check_plant`) into the apps' databases (spec name
    -> path), in order; a value that does not fit its field is an :class:`InvalidRequest`."""
    by_app: dict[str, list[tuple[int, AppSpec, str, dict[str, Any]]]] = {}
    for i, (spec, entity, values) in enumerate(rows):
        by_app.setdefault(spec.name, []).append((i, spec, entity, values))
    for name, items in by_app.items():
        with opened(dbs[name]) as conn:
            conn.execute("PRAGMA synchronous = OFF")  # an episode's copy: no need to fsync it
            for i, spec, entity, values in items:
                try:
                    plant(spec, conn, entity, values, f"task.setup.plant[{i}].values")
                except (ValueError, TypeError) as exc:
                    raise InvalidRequest(str(exc), field="task.setup.plant") from None
            conn.commit()


def spec_key(spec: AppSpec) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]


def template(spec: AppSpec, seed: int) -> Path:
    """The seeded database for (spec, seed), built once per process and then only copied."""
    key = (spec_key(spec), seed)
    with _LOCK:
        path = _TEMPLATES.get(key)
        if path is None or not path.exists():
            folder = Path(tempfile.mkdtemp(prefix="palaestra-app-"))
            path = folder / f"{spec.name}-{seed}.sqlite"
            build(spec, path, seed)
            _TEMPLATES[key] = path
    return path


@contextlib.contextmanager
def opened(path: str | Path, readonly: bool = False) -> Iterator[sqlite3.Connection]:
    conn = connect(path, readonly)
    try:
        yield conn
    finally:
        conn.close()
