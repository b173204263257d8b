"""A generator's world: the app's seeded database, a task's own draws (``let``, early inputs,
planted rows) in a copy of it, the rows an agent can reach, inputs drawn and the operation
simulated with the app's own code, and the plans that reach a row and perform an operation.

:class:`~palaestra.synth_apps.generate.TaskGenerator` builds each kind of task on this; the
split keeps "what the world is and how an agent gets around it" apart from "what a task of
each kind asks and how it is checked".
"""

from __future__ import annotations

import contextlib
import itertools
import random
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

from palaestra.synth_apps import data, expr, state_checks
from palaestra.synth_apps.operations import (
    RuleViolation,
    app_now,
    apply,
    db_functions,
    input_scope,
    matches,
)
from palaestra.synth_apps.spec import (
    AppSpec,
    FieldSpec,
    OperationSpec,
    PageSpec,
    SpecError,
    TaskTemplate,
    load_spec,
)
from palaestra.synth_apps.variants import Variant, make_variant

MAX_TRIES = 40


class GenerationError(ValueError):
    """A template that cannot be grounded (no row qualifies, every draw breaks a rule)."""


@dataclass
class Draw:
    """One grounding of an operation: the row (None for global operations), the page it is
    reached from, and the inputs as the agent reads them."""

    record: dict[str, Any] | None
    page: PageSpec | None
    shown: dict[str, Any]


@dataclass
class Context:
    """What one task draws before its rows and inputs (the template's ``let``, its inputs when
    they come first, its planted rows) and how it is worded: the names its expressions read
    beside ``record``/``input`` (:data:`~palaestra.synth_apps.spec.TASK_NAMES`)."""

    rng: random.Random
    ask: bool = False
    names: dict[str, Any] = field(default_factory=dict)
    #: ``setup["plant"]``: the planted rows' given values, concrete
    plant: list[dict[str, Any]] = field(default_factory=list)
    #: inputs drawn ahead of the plant that reads them, (raw, shown) per repetition
    inputs: list[tuple[dict[str, Any], dict[str, Any]]] | None = None
    #: this app's database with the planted rows (None: the seeded one)
    world: sqlite3.Connection | None = None
    #: a ``duplicate`` template's (entity, original id, copy id)
    copy: tuple[str, int, int] | None = None


class Grounding:
    """One app variant's world, and a task being grounded in it (``ctx``)."""

    def __init__(
        self,
        spec: AppSpec,
        *,
        variant: int = 0,
        layout: str = "desktop",
        data_seed: int = 0,
        app_ref: str | None = None,
    ) -> None:
        self.spec = spec
        self.variant: Variant = make_variant(spec, variant, layout)
        self.data_seed = data_seed
        self.app_ref = app_ref or spec.name
        self.template = data.template(spec, data_seed)
        self.base = data.connect(self.template, readonly=True)
        self.scope = data.Scope(spec, self.base)
        self.state = state_checks.StateChecks(spec, self.base)
        self.failures: dict[int, str] = {}
        #: the task being grounded (see :meth:`_world`)
        self.ctx = Context(random.Random(0))
        #: the other apps a plant may name (by name; default: the replica of that name)
        self.apps: Mapping[str, AppSpec] = {}

    # ----- a task's own draws: let, early inputs, planted rows ------------------------------
    def _prepare(self, t: TaskTemplate, ctx: Context, rng: random.Random, fake: Faker) -> None:
        """Draw ``let`` values, then the inputs of an info template or a global operation
        that plants (its plant may read them), then plant the rows: this app's into a copy of
        its database (the task's world, so picks, answers and the verifier see them), another
        app's into a copy of that app's, so ``plant[i]`` reads each whole row."""
        names: dict[str, Any] = {"let": {}, "today": self.spec.today, "now": app_now(self.spec)}
        fns = {**db_functions(self.scope, names), **self._gen_functions(rng, fake)}
        for key, source in t.let.items():
            names["let"][key] = expr.evaluate(source, names, fns)
        ctx.names = names
        op = self.spec.operations.get(t.operation or "")
        if t.kind == "info" and t.inputs:
            drawn: dict[str, Any] = {}
            for key, source in t.inputs.items():
                drawn[key] = expr.evaluate(source, {**names, "input": drawn}, fns)
            names["input"] = drawn
        elif op is not None and op.entity is None and t.plant:
            ctx.inputs = []
            for _ in range(self._times(t, ctx)):
                earlier = [shown for _, shown in ctx.inputs]
                ctx.inputs.append(self._inputs(op, t, None, rng, fake, names, earlier=earlier))
            names["inputs"] = [shown for _, shown in ctx.inputs]
            names["input"] = names["inputs"][0]
        planted: list[dict[str, Any]] = []
        names["plant"] = planted
        copies: dict[str, tuple[AppSpec, sqlite3.Connection]] = {}
        try:
            for i, row in enumerate(t.plant):
                app = row.app or self.spec.name
                values = {k: jsonable(expr.evaluate(v, names, fns)) for k, v in row.values.items()}
                if app not in copies:
                    spec = (
                        self.spec if app == self.spec.name else self.apps.get(app) or replica(app)
                    )
                    seeded = (
                        self.base
                        if app == self.spec.name
                        else data.connect(data.template(spec, 0), readonly=True)
                    )
                    conn = sqlite3.connect(":memory:")
                    seeded.backup(conn)
                    if seeded is not self.base:
                        seeded.close()
                    conn.row_factory = sqlite3.Row
                    copies[app] = (spec, conn)
                spec, conn = copies[app]
                try:
                    rid = data.plant(spec, conn, row.entity, values, f"plant[{i}].values")
                except (ValueError, TypeError) as exc:
                    raise GenerationError(str(exc)) from None
                planted.append(data.Scope(spec, conn).row(row.entity, rid) or {})
                ctx.plant.append({"app": app, "entity": row.entity, "values": values})
        finally:
            for app, (_, conn) in copies.items():
                if app == self.spec.name:
                    conn.commit()
                    ctx.world = conn
                else:
                    conn.close()
        if t.duplicate and ctx.world is None:  # the copy of the picked row goes in after picking
            ctx.world = sqlite3.connect(":memory:")
            self.base.backup(ctx.world)
            ctx.world.row_factory = sqlite3.Row

    def _times(self, t: TaskTemplate, ctx: Context) -> int:
        """How often a ``repeat`` template does its operation (1 without repeat)."""
        if t.repeat is None:
            return 1
        n = t.repeat
        if isinstance(n, str):
            n = expr.evaluate(
                n, {"today": self.spec.today, **ctx.names}, self._gen_functions(ctx.rng, Faker())
            )
        if not isinstance(n, int) or not 1 <= n <= 20:
            raise GenerationError(f"repeat {t.repeat!r} gives {n!r}, not a count of 1 to 20")
        return n

    @contextlib.contextmanager
    def _world(self, ctx: Context) -> Iterator[None]:
        """Ground one task in its own world: the database with its planted rows (picks,
        answers and the verifier's diff read it) and its context (``self.ctx``)."""
        saved = self.base, self.scope, self.state, self.ctx
        self.ctx = ctx
        if ctx.world is not None:
            self.base = ctx.world
            self.scope = data.Scope(self.spec, ctx.world)
            self.state = state_checks.StateChecks(self.spec, ctx.world)
        try:
            yield
        finally:
            self.base, self.scope, self.state, self.ctx = saved

    # ----- rows and inputs -------------------------------------------------------------------
    def _gen_functions(self, rng: random.Random, fake: Faker) -> dict[str, Any]:
        return {
            **expr.FUNCTIONS,
            "randint": rng.randint,
            "choice": lambda seq: rng.choice(list(seq)),
            "uniform": lambda a, b: round(rng.uniform(a, b), 2),
            "fake": lambda provider, **kw: getattr(fake, provider)(**kw),
        }

    def _inputs(
        self,
        op: OperationSpec,
        t: TaskTemplate,
        record: Any,
        rng: random.Random,
        fake: Faker,
        names: Mapping[str, Any] | None = None,
        *,
        earlier: list[dict[str, Any]] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Draw inputs: ``raw`` as a form would submit them, ``shown`` as the agent reads them.
        Each generator sees the inputs drawn before it (``input.title``) and the task's own
        draws (``names``: let, plant). A repetition's inputs (``earlier``: those of the ones
        before it) are drawn again while the input naming the created row repeats one, so "add
        three recipes" adds three different ones."""
        own = self._naming_inputs(op, t) if earlier else []
        for _ in range(MAX_TRIES):
            raw: dict[str, Any] = {}
            shown: dict[str, Any] = {}
            scope = {
                **(names if names is not None else self.ctx.names),
                "now": app_now(self.spec),
                "record": record,
                "today": self.spec.today,
                "input": shown,
            }
            fns = {**db_functions(self.scope, scope), **self._gen_functions(rng, fake)}
            for name, f in op.inputs().items():
                value = expr.evaluate(t.inputs[name], scope, fns)
                if f.type == "ref":
                    rows = self.scope.rows(f.ref_entity, f.where, today=self.spec.today)
                    ids = [
                        r["id"]
                        for r in rows
                        if self.scope.display(f.ref_entity, r) == expr.show(value)
                    ]
                    if len(ids) != 1:
                        raise GenerationError(
                            f"input {name}: {value!r} names {len(ids)} {f.to} rows"
                        )
                    raw[name] = str(ids[0])
                    shown[name] = expr.show(value)
                else:
                    raw[name] = expr.show(data.to_py(f, data.to_db(f, value)))
                    shown[name] = raw[name]
            if not any(shown[n] == e.get(n) for n in own for e in earlier or []):
                return raw, shown
        raise GenerationError(f"repeat: {MAX_TRIES} draws of {own} repeat an earlier one")

    def _naming_inputs(self, op: OperationSpec, t: TaskTemplate) -> list[str]:
        """The input that names the row ``op`` creates (the one its display field is made of;
        else the first ``str`` input), which repetitions must not repeat; inputs taken from
        ``let`` are shared on purpose and may repeat."""
        drawn = [n for n in op.inputs() if "let" not in expr.names(t.inputs[n])]
        own = [
            n
            for e in op.effects
            if e.create and e.create in self.spec.entities
            for n in drawn
            if _reads_input(e.values.get(self.spec.entities[e.create].display, ""), n)
        ]
        return own or [n for n in drawn if op.inputs()[n].type == "str"][:1]

    def _either_copy(
        self, checks: list[dict[str, Any]], touched: dict[str, dict[int, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, dict[int, Any]]]:
        """A duplicate's checks: the original's "is gone" becomes "one of the two copies
        is left" (either may go), and neither copy is held unchanged."""
        assert self.ctx.copy is not None
        entity, original, copy = self.ctx.copy
        row = dict(
            self.base.execute(f"SELECT * FROM {entity} WHERE id = ?", (original,)).fetchone()
        )
        keys = [k for k in row if k != "id"]
        where = " AND ".join(f"{k} IS ?" for k in keys)
        gone = f"{entity} {original} is gone"
        out = [c for c in checks if c.get("describe") != gone]
        out.append(
            {
                "kind": "sql",
                "describe": f"one of the two {entity} copies is left",
                "query": f"SELECT count(*) FROM {entity} WHERE {where}",
                "params": [row[k] for k in keys],
                "expect": 1,
            }
        )
        touched = {**touched, entity: {**touched.get(entity, {}), copy: None}}
        return out, touched

    def _plant_copy(self, entity: str, record: dict[str, Any]) -> None:
        """Plant an exact copy of ``record`` (a duplicate: ``setup["plant"]`` carries it, the
        task's world has it) after the original's id, so the row's first match in its list is
        still the original; the verifier then counts copies instead of naming an id."""
        if self.ctx.copy is not None:  # a draw after the copy failed: the task starts over
            raise GenerationError("duplicate: the draw with the planted copy did not ground")
        e = self.spec.entities[entity]
        values = {name: jsonable(record[name]) for name in e.fields}
        try:
            rid = data.plant(self.spec, self.base, entity, values, "duplicate")
        except (ValueError, TypeError) as exc:
            raise GenerationError(f"duplicate: {exc}") from None
        self.base.commit()
        self.ctx.plant.append({"app": self.spec.name, "entity": entity, "values": values})
        self.ctx.copy = (entity, record["id"], rid)
        self.state = state_checks.StateChecks(self.spec, self.base)

    def _simulate(
        self,
        op: OperationSpec,
        record: Any,
        raw: dict[str, Any],
        conn: sqlite3.Connection | None = None,
    ) -> sqlite3.Connection | str:
        """Run the operation on a copy of the seeded database (or on ``conn``, the simulation
        so far of a repeated operation): its connection, or the message of the rule it
        breaks."""
        if conn is None:
            conn = sqlite3.connect(":memory:")
            self.base.backup(conn)
            conn.row_factory = sqlite3.Row
        try:
            inputs = input_scope(data.Scope(self.spec, conn), op, raw)
        except ValueError as exc:
            conn.close()
            raise GenerationError(f"the form refuses the drawn input ({exc})") from None
        try:
            apply(self.spec, conn, op, record, inputs)
        except RuleViolation as exc:
            conn.close()
            return str(exc)
        conn.commit()
        return conn

    def _reachable(
        self, entity: str, pick: str | None, picked: list[dict[str, Any]] | None = None
    ) -> list[tuple[dict, PageSpec]]:
        """Rows an agent can open: on a page, with a link text no other row on it shares;
        ``pick`` sees the task's draws (let, plant, input) and the rows ``picked`` so far."""
        seen = {
            **self.ctx.names,
            "now": app_now(self.spec),
            "today": self.spec.today,
            "picked": picked or [],
        }
        out = []
        e = self.spec.entities[entity]
        rows = self.scope.rows(entity)
        names: dict[str, int] = {}
        for r in rows:
            names[expr.show(r[e.display])] = names.get(expr.show(r[e.display]), 0) + 1
        for r in rows:
            if names[expr.show(r[e.display])] != 1:
                continue
            if pick:
                scope = {**seen, "record": r}
                if not expr.evaluate(pick, scope, db_functions(self.scope, scope)):
                    continue
            page = next(
                (
                    p
                    for p in self.spec.pages
                    if p.entity == entity
                    and (
                        not p.where
                        or expr.evaluate(p.where, {"record": r, "today": self.spec.today})
                    )
                ),
                None,
            )
            if page is not None:
                out.append((r, page))
        return out

    def _present(self, entity: str, name: str, value: str) -> bool:
        f = self.spec.entities[entity].fields[name]
        for r in self.scope.rows(entity):
            have = expr.show(r[name])
            if (
                (value.casefold() in have.casefold())
                if f.type in ("str", "text")
                else (have == value)
            ):
                return True
        return False

    # ----- plans ----------------------------------------------------------------------------
    def _label(self, name: str, f: FieldSpec) -> str:
        return self.variant.label(f.title(name))

    def _navigate(self, entity: str, record: dict[str, Any], page: PageSpec) -> list[dict]:
        """Open the row's page, filter only as much as it takes to bring the row onto the first
        page of results (as a person would), then open the row (turning pages if need be)."""
        e = self.spec.entities[entity]
        plan: list[dict[str, Any]] = [
            {"op": "click", "role": "link", "name": self.variant.label(page.label)}
        ]
        for name in self._filters_needed(entity, record, page):
            f = e.fields[name]
            plan.append(
                {"op": "set", "label": self._label(name, f), "value": expr.show(record[name])}
            )
        if len(plan) > 1:
            plan.append({"op": "click", "role": "button", "name": self.variant.label("Search")})
        plan.append(
            {
                "op": "open",
                "name": expr.show(record[e.display]),
                "next": self.variant.label("Next page"),
            }
        )
        return plan

    def _filters_needed(self, entity: str, record: dict[str, Any], page: PageSpec) -> list[str]:
        """The fewest filters (in form order) that put ``record`` on the first result page."""
        e = self.spec.entities[entity]
        rows = self.scope.rows(entity, page.where, today=self.spec.today)
        params = {n: _param(e.fields[n], n, record) for n in page.filters}
        for size in range(len(page.filters) + 1):
            for names in itertools.combinations(page.filters, size):
                shown = [
                    r["id"]
                    for r in rows
                    if all(matches(e.fields[n], n, r, params[n]) for n in names)
                ]
                if record["id"] in shown[: self.variant.page_size]:
                    return list(names)
        return list(page.filters)

    def _perform(
        self, op: OperationSpec, record: Any, page: Any, shown: dict[str, Any]
    ) -> list[dict]:
        if record is not None and op.entity is not None:  # a record is a row of op's entity
            plan = self._navigate(op.entity, record, page)
            if op.trigger != "button":  # the list row's gesture (a long press, a swipe) offers it
                plan[-1] = {**plan[-1], "op": "hold" if op.trigger == "long_press" else "swipe"}
            plan.append({"op": "click", "role": "button", "name": self.variant.label(op.label)})
        else:
            plan = [{"op": "click", "role": "link", "name": self.variant.label(op.label)}]
        for step in op.steps:
            for name, f in step.inputs.items():
                plan.append({"op": "set", "label": self._label(name, f), "value": shown[name]})
            plan.append({"op": "click", "role": "button", "name": self.variant.label("Continue")})
        if op.confirm or not op.steps:
            plan.append({"op": "click", "role": "button", "name": self.variant.label("Confirm")})
        return plan


def _param(f: FieldSpec, name: str, record: dict[str, Any]) -> str:
    """The filter value the app receives when a user picks the record's own value."""
    if f.type == "ref":
        return str(record[f"{name}_id"])
    if f.type == "bool":
        return str(int(bool(record[name])))
    return expr.show(record[name])


def _reads_input(source: str, name: str) -> bool:
    """Whether an effect's value expression reads ``input.<name>``."""
    return re.search(rf"\binput\s*\.\s*{re.escape(name)}\b", source) is not None


def jsonable(value: Any) -> Any:
    """A drawn value as ``setup["plant"]`` carries it: JSON scalars as they are, dates and
    times as the app shows them."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return expr.show(value)


_SPECS: dict[str, AppSpec] = {}


def replica(app: str) -> AppSpec:
    """Another replica app (a plant's ``app``), loaded once per process."""
    if app not in _SPECS:
        try:
            _SPECS[app] = load_spec(app)
        except SpecError as exc:
            raise GenerationError(f"plant: app {app!r}: {exc}") from None
    return _SPECS[app]
