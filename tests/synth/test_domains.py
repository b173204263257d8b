"""Every built-in domain, served for real: its pages render and its operations work.

For each operation the test draws valid inputs from the domain's own task templates (or plain
defaults when no template covers it), drives the real forms over HTTP step by step, confirms,
and then checks the database against the operation's effects, evaluated independently of the
app (created rows carry the effect values, updated columns hold them, deleted and cleared rows
are gone). Each rule that an infeasible template breaks is shown as an alert and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import random
import re
import sqlite3
from typing import Any

import httpx
import pytest
from faker import Faker

from palaestra.synth_apps import data, expr
from palaestra.synth_apps.app import APP_COOKIE, AppSession, host, new_key
from palaestra.synth_apps.operations import RuleViolation, apply, db_functions
from palaestra.synth_apps.spec import AppSpec, FieldSpec, OperationSpec, domain_names, load_spec
from palaestra.synth_apps.variants import make_variant

DOMAINS = domain_names()
BROKEN = "Something went wrong"
_FAKE = Faker()  # one instance: making a Faker takes a noticeable fraction of a second
KEY = new_key()  # the apps answer only requests that carry their session's key


@functools.cache
def _spec(name: str) -> AppSpec:
    return load_spec(name)  # parsing the YAML is the slowest part of these tests: once per domain


def _open(name: str) -> tuple[AppSpec, AppSession, str]:
    spec = _spec(name)
    session = host().open(spec, make_variant(spec, 0), 0, key=KEY)
    return spec, session, host().url(session)


def _dump(session: AppSession) -> dict[str, list[tuple]]:
    with data.opened(session.db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY id")] for t in tables
        }


def _get(client: httpx.Client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, (url, r.status_code)
    assert BROKEN not in r.text, url
    return r.text


@pytest.fixture(scope="module")
def client() -> httpx.Client:
    with httpx.Client(timeout=10, cookies={APP_COOKIE: KEY}) as c:
        yield c


@pytest.mark.parametrize("name", DOMAINS)
def test_pages_render(name: str, client: httpx.Client) -> None:
    spec, session, url = _open(name)
    try:
        assert spec.title in _get(client, url)
        with data.opened(session.db) as conn:
            for i, page in enumerate(spec.pages):
                html = _get(client, f"{url}list/{i}")
                assert spec.entities[page.entity].display  # the link column is there
                row = conn.execute(f"SELECT id FROM {page.entity} ORDER BY id").fetchone()
                if row is not None:
                    assert f"/view/{page.entity}/" in html
                    _get(client, f"{url}view/{page.entity}/{row[0]}")
                # a filled filter form narrows the list and still renders
                if page.filters:
                    _get(client, f"{url}list/{i}?{page.filters[0]}=x&page=2")
            for op_name, op in spec.operations.items():
                if op.entity is None:
                    _get(client, f"{url}do/{op_name}")
    finally:
        host().close(session.token)


# ----- drawing valid inputs ----------------------------------------------------------------
def _gen_functions(rng: random.Random, fake: Faker) -> dict[str, Any]:
    return {
        **expr.FUNCTIONS,
        "randint": rng.randint,
        "choice": lambda seq: rng.choice(list(seq)),
        "uniform": lambda a, b: round(rng.uniform(a, b), 2),
        "fake": lambda provider, **kw: getattr(fake, provider)(**kw),
    }


def _default(f: FieldSpec, today: dt.date, ds: data.Scope) -> Any:
    """A plain valid value for an input no template covers."""
    if f.type == "ref":
        rows = ds.rows(f.to, f.where, today=today)  # type: ignore[arg-type]
        return ds.display(f.to, rows[0]) if rows else ""  # type: ignore[arg-type]
    return {
        "int": int(f.min or 1),
        "float": f.min or 1.0,
        "money": f.min or 10.0,
        "bool": True,
        "date": today + dt.timedelta(days=1),
        "time": "10:00",
        "datetime": dt.datetime.combine(today, dt.time(10)),
        "email": "someone@example.com",
        "enum": (f.choices or [""])[0],
    }.get(f.type, "Test value")


class Draw:
    """One operation with a row and inputs for which every rule holds (checked with apply())."""

    def __init__(self, spec: AppSpec, op: OperationSpec, conn: sqlite3.Connection) -> None:
        self.spec, self.op, self.conn = spec, op, conn
        self.ds = data.Scope(spec, conn)

    def rows(self, pick: str | None) -> list[dict[str, Any] | None]:
        if self.op.entity is None:
            return [None]
        fns = db_functions(self.ds, {"today": self.spec.today})
        out = []
        for r in self.ds.rows(self.op.entity):
            scope = {"record": r, "today": self.spec.today}
            if self.op.when and not expr.evaluate(self.op.when, scope):
                continue
            if pick and not expr.evaluate(pick, scope, fns):
                continue
            out.append(r)
        return out

    def inputs(self, sources: dict[str, str], record: Any, fns: dict) -> dict[str, str]:
        """Form values (strings, refs as ids) from generator expressions or defaults."""
        form: dict[str, str] = {}
        for name, f in self.op.inputs().items():
            scope = {"record": record, "today": self.spec.today}
            if name in sources:
                value = expr.evaluate(sources[name], scope, fns)
            else:
                value = _default(f, self.spec.today, self.ds)
            if f.type == "ref":
                rows = self.ds.rows(f.to, f.where, today=self.spec.today)  # type: ignore[arg-type]
                ids = [r["id"] for r in rows if self.ds.display(f.to, r) == expr.show(value)]  # type: ignore[arg-type]
                form[name] = str(ids[0]) if ids else ""
            elif f.type == "bool":
                form[name] = "on" if value else ""
            else:
                form[name] = expr.show(data.to_py(f, data.to_db(f, value)))
        return form

    def scope(self, form: dict[str, str], conn: sqlite3.Connection) -> dict[str, Any]:
        """The operation's ``input`` scope, as the app builds it from the form."""
        ds = data.Scope(self.spec, conn)
        out: dict[str, Any] = {}
        for name, f in self.op.inputs().items():
            raw = form[name]
            if f.type == "ref":
                row = ds.row(f.to, int(raw))  # type: ignore[arg-type]
                out[f"{name}_id"], out[f"{name}_row"] = int(raw), row or {}
                out[name] = ds.display(f.to, row) if row else ""  # type: ignore[arg-type]
            elif f.type == "bool":
                out[name] = bool(raw)
            else:
                out[name] = data.to_py(f, data.to_db(f, raw))
        return out

    def outcome(self, record: Any, form: dict[str, str]) -> str | None:
        """None if every rule holds, else the message of the rule that fails."""
        copy = sqlite3.connect(":memory:")
        self.conn.backup(copy)
        copy.row_factory = sqlite3.Row
        try:
            apply(self.spec, copy, self.op, record, self.scope(form, copy))
        except RuleViolation as exc:
            return str(exc)
        finally:
            copy.close()
        return None

    def find(self, templates: list, want: str | None = None) -> tuple[Any, dict[str, str]]:
        """A (record, form) whose outcome is ``want`` (None: success; else a rule message)."""
        rng = random.Random(0)
        _FAKE.seed_instance(0)
        fns = _gen_functions(rng, _FAKE)
        for t in templates or [None]:
            rows = self.rows(t.pick if t else None)
            for _ in range(30):
                if not rows:
                    break
                record = rng.choice(rows)
                try:
                    form = self.inputs(t.inputs if t else {}, record, fns)
                except expr.ExprError:
                    continue
                if "" in [form[n] for n, f in self.op.inputs().items() if f.type == "ref"]:
                    continue
                if self.outcome(record, form) == want:
                    return record, form
        raise AssertionError(f"no draw of {self.op.label!r} gives {want or 'success'}")


# ----- driving the forms -------------------------------------------------------------------
def _submit(client: httpx.Client, url: str, op: OperationSpec, form: dict[str, str]) -> str:
    html = _get(client, url)
    sent: dict[str, str] = {}
    for i, step in enumerate(op.steps):
        sent.update({k: form[k] for k in step.inputs})
        r = client.post(url, data={**sent, "_step": str(i)})
        assert r.status_code == 200 and BROKEN not in r.text, r.text
        html = r.text
        if i < len(op.steps) - 1 or op.confirm:
            assert "aria-invalid" not in html and "Please correct" not in html, html
    if op.confirm or not op.steps:
        r = client.post(url, data={**sent, "_step": str(len(op.steps))})
        assert r.status_code == 200 and BROKEN not in r.text, r.text
        html = r.text
    return html


def _message(page: str, role: str) -> str | None:
    m = re.search(rf'role="{role}">([^<]*)<', page)
    return html.unescape(m.group(1)) if m else None


def _expected(
    spec: AppSpec, op: OperationSpec, conn: sqlite3.Connection, record: Any, inputs: dict
) -> list[tuple[str, Any, dict[str, Any]]]:
    """What each effect should leave behind, evaluated on the state before the operation."""
    ds = data.Scope(spec, conn)
    scope: dict[str, Any] = {"input": inputs, "today": spec.today}
    scope["now"] = dt.datetime.combine(spec.today, dt.time(9))
    if record is not None:
        scope["record"] = record
    fns = db_functions(ds, scope)
    for key, source in op.let.items():
        scope[key] = expr.evaluate(source, scope, fns)
    out = []
    for effect in op.effects:
        named = effect.create or effect.clear or effect.update or effect.delete
        target = op.entity if named == "record" else named
        e = spec.entities[target]  # type: ignore[index]

        def values_now(e=e, effect=effect) -> dict[str, Any]:
            values = {}
            for col, source in effect.values.items():
                f = e.fields.get(col) or FieldSpec(type="int")
                values[col] = data.to_db(f, expr.evaluate(source, scope, fns))
            return values

        if effect.where is not None or effect.clear:
            rows = {}
            for r in ds.rows(target):  # type: ignore[arg-type]
                scope["target"] = r
                if effect.where is None or expr.evaluate(effect.where, scope, fns):
                    rows[r["id"]] = values_now()
            scope.pop("target", None)
            kind = "update rows" if effect.update else "clear"
            out.append((kind, target, {"ids": list(rows), "rows": rows}))
        else:
            kind = "create" if effect.create else "update" if effect.update else "delete"
            out.append((kind, target, values_now()))
    return out


def _operation_cases() -> list[tuple[str, str]]:
    return [(name, op) for name in DOMAINS for op in _spec(name).operations]


@pytest.mark.parametrize(("name", "op_name"), _operation_cases())
def test_operation_applies_its_effects(name: str, op_name: str, client: httpx.Client) -> None:
    spec, session, url = _open(name)
    op = spec.operations[op_name]
    templates = [t for t in spec.tasks if t.kind == "operation" and t.operation == op_name]
    try:
        with data.opened(session.db) as conn:
            draw = Draw(spec, op, conn)
            record, form = draw.find(templates)
            expected = _expected(spec, op, conn, record, draw.scope(form, conn))
            before = _counts(conn)
            last_ids = {t: _last_id(conn, t) for t in before}
        path = f"{url}do/{op_name}" + (f"/{record['id']}" if record is not None else "")
        html = _submit(client, path, op, form)
        assert _message(html, "status"), html  # the success message, no alert
        assert _message(html, "alert") is None, html
        with data.opened(session.db) as conn:
            after = _counts(conn)
            creates: dict[str, int] = {}
            for kind, table, values in expected:
                if kind == "create":
                    creates[table] = creates.get(table, 0) + 1
                    where = " AND ".join(f"{c} IS ?" for c in values) or "1"
                    sql = f"SELECT count(*) FROM {table} WHERE id > ? AND {where}"
                    hits = conn.execute(sql, (last_ids[table], *values.values()))
                    assert hits.fetchone()[0] >= 1, (table, values)
                elif kind == "update":
                    row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (record["id"],))
                    row = dict(row.fetchone())
                    for col, value in values.items():
                        assert row[col] == value, (table, col, row[col], value)
                elif kind == "update rows":
                    assert values["rows"], (table, "no row to update")
                    for rid, cols in values["rows"].items():
                        row = dict(
                            conn.execute(f"SELECT * FROM {table} WHERE id = ?", (rid,)).fetchone()
                        )
                        assert all(row[c] == v for c, v in cols.items()), (table, rid, cols, row)
                elif kind == "delete":
                    gone = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (record["id"],))
                    assert gone.fetchone() is None
                else:
                    for rid in values["ids"]:
                        left = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (rid,))
                        assert left.fetchone() is None, (table, rid)
            for table, n in creates.items():
                assert after[table] >= before[table] + n - _cleared(expected, table)
    finally:
        host().close(session.token)


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def _last_id(conn: sqlite3.Connection, table: str) -> int:
    return conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]


def _cleared(expected: list, table: str) -> int:
    return sum(len(v["ids"]) for k, t, v in expected if k == "clear" and t == table)


def _infeasible_cases() -> list[tuple[str, int]]:
    return [
        (name, i)
        for name in DOMAINS
        for i, t in enumerate(_spec(name).tasks)
        if t.kind == "infeasible" and t.violate != "missing"
    ]


@pytest.mark.parametrize(("name", "index"), _infeasible_cases())
def test_broken_rule_is_shown_and_changes_nothing(
    name: str, index: int, client: httpx.Client
) -> None:
    spec, session, url = _open(name)
    t = spec.tasks[index]
    op = spec.operations[t.operation]  # type: ignore[index]
    rule = next(r for r in op.rules if r.require == t.violate)
    try:
        with data.opened(session.db) as conn:
            record, form = Draw(spec, op, conn).find([t], want=rule.message)
        before = _dump(session)
        path = f"{url}do/{t.operation}" + (f"/{record['id']}" if record is not None else "")
        html = _submit(client, path, op, form)
        assert _message(html, "alert") == rule.message
        assert _dump(session) == before
    finally:
        host().close(session.token)
