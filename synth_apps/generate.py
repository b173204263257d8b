"""Task generation: templates grounded in seeded rows, with verifiers and planned oracles.

For each task the generator picks rows and inputs, then *simulates* the operation with the app's
own :func:`~palaestra.synth_apps.operations.apply` on an in-memory copy of the seeded database. The
difference between the seeded and the simulated database becomes the verifier (SQL checks on the
final database: the created row with its values, exactly one of it, the updated columns), so a
verifier is derived from what the app really does, not written by hand. The oracle is planned
from the spec and the variant (which link, which labels, which values) as semantic steps (the
oracle ``{"policy": "plan", "data": [...]}``) that the family's ``plan`` policy resolves against
each observation, like an agent would.
Mutations (a different value, a second booking, nothing done) come with each task, for
execution validation to prove that the verifier rejects near misses.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import random
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

from palaestra.chat import ANSWER, INFEASIBLE
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
    replica_names,
)
from palaestra.synth_apps.variants import Variant, make_variant
from palaestra.tasks import Oracle, PublicMetadata, Task

ENV_ID = "palaestra/web-v0"
MAX_TRIES = 40
#: the other values of an info task's column its answer check names (must not be answered too)
MAX_OTHERS = 80


#: The sentence every action task (operation or infeasible) ends with. Only infeasible templates
#: used to say it, which gave their category away to anyone reading the instruction; a domain's
#: templates state the request alone and the generator adds this to all of them alike.
UNLESS = "If that is not possible, say why."

#: The step budget of every task whose plan fits it. A budget made from the plan's length told a
#: short plan (an infeasible task's: look, then report) from a long one (fill in a form) to any
#: agent reading ``max_steps``; the built-in domains' plans all fit this one.
STEP_BUDGET = 50


#: rule keywords any reason may use in passing: they name no rule alone (the "others" of an
#: infeasible check are the distinctive words of the rules that do not block)
COMMON_WORDS = {"already", "before", "after", "length", "invalid", "available", "enough"}
COMMON_WORDS |= {"nothing", "exists", "balance", "booked", "characters", "maximum"}


class GenerationError(ValueError):
    """A template that cannot be grounded (no row qualifies, every draw breaks a rule)."""


@dataclass
class Generated:
    task: Task
    mutations: list[dict[str, Any]] = field(default_factory=list)
    #: the grounded values stated in the instruction (a rewording must keep them)
    values: list[str] = field(default_factory=list)


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


class TaskGenerator:
    """Tasks for one app variant; deterministic for (spec, variant, data seed, seed)."""

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

    # ----- public ---------------------------------------------------------------------------
    def generate(self, count: int, seed: int = 0, prefix: str = "") -> list[Generated]:
        """``count`` distinct tasks (fewer only if the templates run out of distinct ones)."""
        if not self.spec.tasks:
            raise GenerationError(f"{self.spec.name}: the spec has no task templates")
        rng = random.Random(f"{self.spec.name}:{self.variant.index}:{seed}")
        fake = Faker()
        fake.seed_instance(rng.randrange(1 << 30))
        out: list[Generated] = []
        seen: set[str] = set()
        failures: dict[int, str] = {}
        weights = [t.weight for t in self.spec.tasks]
        attempts = 0
        while len(out) < count and attempts < count * 20:
            attempts += 1
            index = rng.choices(range(len(self.spec.tasks)), weights)[0]
            template = self.spec.tasks[index]
            try:
                made = self.ground(template, rng, fake)
            except GenerationError as exc:
                failures[index] = str(exc)
                continue
            if made.task.instruction in seen:
                continue
            seen.add(made.task.instruction)
            made.task.id = f"{prefix}{self.spec.name}-v{self.variant.index}-{len(out):04d}"
            made.task.metadata["template"] = index
            out.append(made)
        #: templates that could not be grounded this time, and why (the pipeline reports them)
        self.failures = {
            i: m for i, m in failures.items() if i not in {g.task.metadata["template"] for g in out}
        }
        if not out and failures:
            raise GenerationError("; ".join(f"tasks.{i}: {m}" for i, m in failures.items()))
        return out

    @classmethod
    def for_template(
        cls,
        name: str,
        seed: int,
        *,
        ask: bool = False,
        layout: str = "mobile",
        specs: Mapping[str, AppSpec] | None = None,
    ) -> Generated:
        """The task of the template called ``name`` for ``seed`` (its ask-the-user variant with
        ``ask``), looked up in ``specs`` (app ref -> spec; default: every replica app), so a
        suite can make a task per (template, seed) and remake one alone. Deterministic for
        (spec, template, seed, ask, layout); a template that cannot be grounded for the seed is a
        :class:`GenerationError` naming both."""
        broken: list[str] = []
        if specs is None:
            specs = {}
            for app in replica_names():
                try:
                    specs[app] = load_spec(app)
                except SpecError as exc:  # one app's broken file must not stop the others
                    broken.append(str(exc))
        found = [
            (ref, spec, t) for ref, spec in specs.items() for t in spec.tasks if t.name == name
        ]
        if len(found) != 1:
            why = "several apps have it" if found else "no app has it"
            raise GenerationError(f"template {name!r}: {why}" + "".join(f"; {b}" for b in broken))
        ref, spec, t = found[0]
        gen = _generator(spec, layout, ref)
        gen.apps = {s.name: s for s in specs.values()}
        rng = random.Random(f"{spec.name}:{name}:{seed}")
        fake = Faker()
        fake.seed_instance(rng.randrange(1 << 30))
        try:
            made = gen.ground(t, rng, fake, ask=ask)
        except (GenerationError, expr.ExprError) as exc:
            raise GenerationError(f"template {name} (seed {seed}): {exc}") from None
        made.task.id = f"{name}/{seed}{'-ask' if ask else ''}"
        return made

    def ground(
        self, t: TaskTemplate, rng: random.Random, fake: Faker, *, ask: bool = False
    ) -> Generated:
        """One task of template ``t``. A template using none of the replica keys (``let``,
        ``plant``, ``repeat``, ``answer``, info ``inputs``) draws exactly what it always drew,
        so the domains' tasks stay the same; one that does is drawn again (up to 10 times) when
        a draw does not ground, its plant included."""
        if ask and t.ask is None:
            raise GenerationError(f"template {t.name or t.instruction[:40]!r} has no ask variant")
        fresh = not (
            t.let
            or t.plant
            or t.repeat
            or t.answer
            or t.duplicate
            or (t.kind == "info" and t.inputs)
        )
        last = ""
        for _ in range(1 if fresh else 10):
            ctx = Context(rng, ask)
            try:
                if not fresh:
                    self._prepare(t, ctx, rng, fake)
                with self._world(ctx):
                    if t.kind == "info":
                        if t.answer is not None:
                            return self._answered(t, rng)
                        return self._info(t, rng)
                    if t.kind == "infeasible" and t.violate == "missing":
                        return self._missing(t, rng, fake)
                    if t.kind == "verify":
                        return self._verify(t, rng, fake)
                    return self._operation(t, rng, fake)
            except (GenerationError, expr.ExprError) as exc:
                if fresh:
                    raise
                last = str(exc)
            finally:
                if ctx.world is not None:
                    ctx.world.close()
        raise GenerationError(f"10 draws of the task failed (last: {last})")

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
                ctx.inputs.append(self._fresh_inputs(op, t, None, rng, fake, earlier, names))
            names["inputs"] = [shown for _, shown in ctx.inputs]
            names["input"] = names["inputs"][0]
        planted: list[dict[str, Any]] = []
        names["plant"] = planted
        copies: dict[str, tuple[AppSpec, sqlite3.Connection]] = {}
        try:
            for i, row in enumerate(t.plant):
                app = row.app or self.spec.name
                values = {k: _jsonable(expr.evaluate(v, names, fns)) for k, v in row.values.items()}
                if app not in copies:
                    spec = (
                        self.spec if app == self.spec.name else self.apps.get(app) or _replica(app)
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

    # ----- kinds ----------------------------------------------------------------------------
    def _info(self, t: TaskTemplate, rng: random.Random) -> Generated:
        entity, field = t.entity, t.field
        if entity is None or field is None:  # the spec check requires both of an info task
            raise GenerationError("an info template names its entity and field")
        rows = self._reachable(entity, t.pick)
        if not rows:
            raise GenerationError(f"no {entity} row qualifies for {t.pick!r}")
        record, page = rng.choice(rows)
        answer = expr.show(record[field])
        others = {expr.show(r[field]) for r, _ in rows} - {answer}
        column = {expr.show(r[field]) for r in self.scope.rows(entity)} - {answer, ""}
        plan = [
            *self._navigate(entity, record, page),
            {"op": "say", "text": answer},
            {"op": "done"},
        ]
        verifier = {
            "kind": "all",
            "checks": [
                {
                    "kind": "answer",
                    "value": answer,
                    "normalize": t.normalize,
                    "others": sorted(column)[:MAX_OTHERS],
                },
                {"kind": "feasible", "gate": True},
            ],
        }
        wrong = sorted(others)[0] if others else f"{answer} (unsure)"
        mutations = [
            {"name": "a different value", "chat": [f"{ANSWER}{wrong}"]},
            {"name": "no answer", "chat": []},
            {
                "name": "every value listed",
                "chat": [f"{ANSWER}{answer}, {', '.join(sorted(others))}"],
            },
        ]
        if not others:
            mutations.pop()
        scope = {"record": record, "today": self.spec.today}
        return self._task(t, scope, verifier, plan, mutations)

    def _answered(self, t: TaskTemplate, rng: random.Random) -> Generated:
        """An info task whose answer is an expression over the app's rows (``answer``: the
        events of a date, the total of some expenses), checked in its ``answer_format``."""
        record = page = None
        if t.entity is not None and t.pick:
            rows = self._reachable(t.entity, t.pick)
            if not rows:
                raise GenerationError(f"no {t.entity} row qualifies for {t.pick!r}")
            record, page = rng.choice(rows)
        scope = {
            **self.ctx.names,
            "now": app_now(self.spec),
            "today": self.spec.today,
            "record": record,
        }
        assert t.answer is not None  # only answer templates come here
        value = expr.evaluate(t.answer, scope, db_functions(self.scope, scope))
        check, said, mutations = _answer_check(t, value, self._column(t.entity))
        plan: list[dict[str, Any]] = []
        if record is not None and page is not None and t.entity is not None:
            plan = self._navigate(t.entity, record, page)
        elif t.entity is not None and (listing := self.spec.page_for(t.entity)) is not None:
            plan = [{"op": "click", "role": "link", "name": self.variant.label(listing.label)}]
        plan += [{"op": "say", "text": said}, {"op": "done"}]
        verifier = {"kind": "all", "checks": [check, {"kind": "feasible", "gate": True}]}
        return self._task(t, scope, verifier, plan, mutations)

    def _verify(self, t: TaskTemplate, rng: random.Random, fake: Faker) -> Generated:
        """A request the app already meets (Wi-Fi is on; turn it on): the agent must look at
        the row and change nothing. The verifier wants the visit and every row as it was;
        the near misses are doing the operation anyway and answering without looking."""
        op = self.spec.operations.get(t.operation or "")
        entity = op.entity if op is not None else t.entity
        assert entity is not None  # the spec check makes sure of it
        rows = self._reachable(entity, t.pick)
        if not rows:
            raise GenerationError(f"no {entity} row qualifies for {t.pick!r}")
        record, page = rng.choice(rows)
        plan = [*self._navigate(entity, record, page), {"op": "done"}]
        verifier = {
            "kind": "all",
            "checks": [
                {"kind": "visited", "evidence": [{"view": entity, "id": record["id"]}]},
                *state_checks.gates([*self.state.counts_unchanged(), *self.state.untouched({})]),
                {"kind": "feasible", "gate": True},
            ],
        }
        mutations: list[dict[str, Any]] = [{"name": "never looked", "visits": []}]
        if op is not None and set(op.inputs()) <= set(t.inputs):
            mutations += self._done_anyway(op, t, record, rng, fake)
        scope = {"record": record, "today": self.spec.today}
        return self._task(t, scope, verifier, plan, mutations)

    def _done_anyway(
        self, op: OperationSpec, t: TaskTemplate, record: Any, rng: random.Random, fake: Faker
    ) -> list[dict[str, Any]]:
        """The end state of ``op`` done on ``record`` as SQL (none when the app would refuse
        it): a near miss of a task that asks for no change."""
        try:
            raw, _ = self._inputs(op, t, record, rng, fake)
            sim = self._simulate(op, record, raw)
        except (GenerationError, expr.ExprError):
            return []
        if isinstance(sim, str):
            return []
        sql: list[str] = []
        params: list[list[Any]] = []
        for table, rows in self.state.touched(sim).items():
            for rid, change in rows.items():
                if change is None:
                    sql.append(f"DELETE FROM {table} WHERE id = ?")
                    params.append([rid])
                elif change:
                    sql.append(
                        f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in change)} WHERE id = ?"
                    )
                    params.append([*change.values(), rid])
        sim.close()
        return [{"name": f"{op.label} done anyway", "sql": sql, "params": params}] if sql else []

    def _column(self, entity: str | None) -> list[str]:
        """The display texts of an entity's rows: the candidates a list answer must not
        name beside its own."""
        if entity is None:
            return []
        return [self.scope.display(entity, r) for r in self.scope.rows(entity)]

    def _operation(self, t: TaskTemplate, rng: random.Random, fake: Faker) -> Generated:
        op = self.spec.operation_of(t)
        violate = t.violate if t.kind == "infeasible" else None
        candidates = self._reachable(op.entity, t.pick) if op.entity else [(None, None)]
        if not candidates:
            raise GenerationError(f"no {op.entity} row qualifies for {t.pick!r}")
        times = self._times(t, self.ctx)
        last = "no draw"
        for _ in range(MAX_TRIES):
            try:
                draws, sim = self._draws(t, op, times, candidates, rng, fake)
            except (GenerationError, expr.ExprError) as exc:
                last = str(exc)
                continue
            if violate is None and isinstance(sim, str):
                last = f"the draw breaks a rule: {sim}"
                continue
            if violate is not None:
                rule = next(r for r in op.rules if r.require == violate)
                if sim != rule.message:
                    if isinstance(sim, sqlite3.Connection):
                        sim.close()
                    last = f"the draw does not break {violate!r}"
                    continue
                return self._infeasible_op(t, op, draws[0], rule)
            assert isinstance(sim, sqlite3.Connection)
            return self._state_task(t, op, draws, sim)
        raise GenerationError(f"{MAX_TRIES} draws failed (last: {last})")

    def _draws(
        self,
        t: TaskTemplate,
        op: OperationSpec,
        times: int,
        candidates: list[Any],
        rng: random.Random,
        fake: Faker,
    ) -> tuple[list[Draw], sqlite3.Connection | str]:
        """``times`` draws of the operation (distinct rows; inputs drawn anew for each, or
        taken from the context when a plant read them), simulated one after the other: the
        draws and the simulated database, or the message of the rule the (single) draw
        breaks. A draw that does not ground is a :class:`GenerationError`."""
        draws: list[Draw] = []
        sim: sqlite3.Connection | str | None = None
        try:
            for i in range(times):
                pool = candidates
                if i and op.entity is not None:
                    picked = [d.record for d in draws if d.record is not None]
                    ids = {r["id"] for r in picked}
                    pool = [
                        (r, p)
                        for r, p in self._reachable(op.entity, t.pick, picked)
                        if r["id"] not in ids
                    ]
                    if not pool:
                        raise GenerationError(f"repeat: no row {i + 1} of {op.entity} qualifies")
                record, page = rng.choice(pool)
                if self.ctx.inputs is not None:
                    raw, shown = self.ctx.inputs[i]
                elif i:
                    earlier = [d.shown for d in draws]
                    raw, shown = self._fresh_inputs(op, t, record, rng, fake, earlier)
                else:
                    raw, shown = self._inputs(op, t, record, rng, fake)
                if (
                    record is not None
                    and op.when
                    and not expr.evaluate(op.when, {"record": record, "today": self.spec.today})
                ):
                    raise GenerationError("the operation is not offered for the drawn row")
                draws.append(Draw(record, page, shown))
                if t.duplicate and record is not None and op.entity is not None:
                    self._plant_copy(op.entity, record)
                going = sim if isinstance(sim, sqlite3.Connection) else None
                sim = self._simulate(op, record, raw, going)
                if isinstance(sim, str) and times > 1:
                    raise GenerationError(f"the draw breaks a rule: {sim}")
        except BaseException:
            if isinstance(sim, sqlite3.Connection):
                sim.close()
            raise
        assert sim is not None  # times >= 1
        return draws, sim

    def _state_task(
        self, t: TaskTemplate, op: OperationSpec, draws: list[Draw], sim: sqlite3.Connection
    ) -> Generated:
        touched = self.state.touched(sim)
        checks, mutations = self.state.diff(sim)
        if self.ctx.copy is not None:
            checks, touched = self._either_copy(checks, touched)
        if not checks:
            raise GenerationError("the operation changes nothing, so it cannot be verified")
        if not all(state_checks.is_count(c) for c in checks):
            # a row too many (the operation done twice, or on every row) is no near miss: the
            # counts gate the score, the checks on what was decided earn it
            checks = [{**c, "gate": True} if state_checks.is_count(c) else c for c in checks]
        plan = [step for d in draws for step in self._perform(op, d.record, d.page, d.shown)]
        plan.append({"op": "done"})
        verifier = {
            "kind": "all",
            "checks": [
                *checks,
                *state_checks.gates(
                    self.state.untouched({t: sorted(r) for t, r in touched.items()})
                ),
                {"kind": "feasible", "gate": True},
            ],
        }
        mutations += self.state.spread(touched)
        mutations.append({"name": "nothing done", "restore": True})
        scope = {
            "record": draws[0].record,
            "input": draws[0].shown,
            "today": self.spec.today,
            "records": [d.record for d in draws],
            "inputs": [d.shown for d in draws],
        }
        return self._task(t, scope, verifier, plan, mutations)

    def _infeasible_op(
        self, t: TaskTemplate, op: OperationSpec, draw: Draw, rule: Any
    ) -> Generated:
        record, page, shown = draw.record, draw.page, draw.shown
        unchanged = self.state.unchanged(op, record)
        plan = [
            *self._perform(op, record, page, shown),
            {"op": "infeasible", "reason": rule.message},
        ]
        keywords = rule.keywords or [rule.message]
        name = t.operation
        evidence: list[dict[str, Any]] = (
            [{"view": op.entity, "id": record["id"]}, {"op": name, "id": record["id"]}]
            if record is not None
            else [{"op": name}]
        )
        verifier = {
            "kind": "all",
            "checks": [
                {
                    "kind": "infeasible",
                    "keywords": keywords,
                    "evidence": evidence,
                    "others": self._other_rules([*keywords, rule.message]),
                },
                *state_checks.gates([*unchanged, *self.state.untouched({})]),
            ],
        }
        mutations = self._report_misses(rule.message, op)
        scope = {"record": record, "input": shown, "today": self.spec.today}
        return self._task(t, scope, verifier, plan, mutations)

    def _missing(self, t: TaskTemplate, rng: random.Random, fake: Faker) -> Generated:
        op = self.spec.operation_of(t)
        pages = [p for p in self.spec.pages if set(t.missing) <= set(p.filters)]
        page = next((p for p in pages if p.entity == op.entity), pages[0] if pages else None)
        if page is None:
            raise GenerationError(f"no page filters on all of {sorted(t.missing)}")
        fns = self._gen_functions(rng, fake)
        missing: dict[str, str] = {}
        for name, source in t.missing.items():
            for _ in range(MAX_TRIES):
                value = expr.show(expr.evaluate(source, {"today": self.spec.today}, fns))
                if not self._present(page.entity, name, value):
                    missing[name] = value
                    break
            else:
                raise GenerationError(f"missing.{name}: every drawn value exists")
        plan: list[dict[str, Any]] = [
            {"op": "click", "role": "link", "name": self.variant.label(page.label)}
        ]
        e = self.spec.entities[page.entity]
        typed = [n for n in missing if n in page.filters and e.fields[n].type in ("str", "text")]
        for name in typed:
            plan.append(
                {"op": "set", "label": self._label(name, e.fields[name]), "value": missing[name]}
            )
        if typed:
            plan.append({"op": "click", "role": "button", "name": self.variant.label("Search")})
        what = ", ".join(missing.values())
        plan.append({"op": "infeasible", "reason": f"There is no {what} here."})
        verifier = {
            "kind": "all",
            "checks": [
                {
                    "kind": "infeasible",
                    "keywords": list(missing.values()),
                    "evidence": [{"list": self.spec.pages.index(page)}],
                    "others": self._other_rules(list(missing.values())),
                },
                *state_checks.gates([*self.state.counts_unchanged(), *self.state.untouched({})]),
            ],
        }
        mutations = self._report_misses(f"There is no {what} here.", op)
        # the other inputs are drawn as a feasible task's are, so the instruction can read alike
        shown = self._inputs(op, t, None, rng, fake)[1] if t.inputs else {}
        scope = {"missing": missing, "input": shown, "today": self.spec.today}
        return self._task(t, scope, verifier, plan, mutations)

    # ----- grounding helpers ----------------------------------------------------------------
    def _report_misses(self, reason: str, op: OperationSpec) -> list[dict[str, Any]]:
        """Near misses of an infeasibility report: none, the report made without looking at the
        app, a reason that names no cause, and the operation done anyway."""
        return [
            {"name": "no report", "chat": []},
            {"name": "reported without looking", "chat": [f"{INFEASIBLE}{reason}"], "visits": []},
            {"name": "a reason that names no cause", "chat": [f"{INFEASIBLE}I would rather not."]},
            *self.state.forced_changes(op),
        ]

    def _other_rules(self, keywords: list[str]) -> list[str]:
        """The keywords of the app's rules that do not block this task: an infeasibility
        report that names one claims a rule that does not apply (the candidate rules of an
        app stuffed into one reason), and fails."""
        own = [k.casefold() for k in keywords]
        words = {
            k.casefold()
            for op in self.spec.operations.values()
            for rule in op.rules
            for k in rule.keywords
            if (" " in k or len(k) >= 6) and k.casefold() not in COMMON_WORDS
        }
        return sorted(w for w in words if not any(w in o or o in w for o in own))

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
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Draw inputs: ``raw`` as a form would submit them, ``shown`` as the agent reads them.
        Each generator sees the inputs drawn before it (``input.title``) and the task's own
        draws (``names``: let, plant)."""
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
                    r["id"] for r in rows if self.scope.display(f.ref_entity, r) == expr.show(value)
                ]
                if len(ids) != 1:
                    raise GenerationError(f"input {name}: {value!r} names {len(ids)} {f.to} rows")
                raw[name] = str(ids[0])
                shown[name] = expr.show(value)
            else:
                raw[name] = expr.show(data.to_py(f, data.to_db(f, value)))
                shown[name] = raw[name]
        return raw, shown

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
        values = {name: _jsonable(record[name]) for name in e.fields}
        try:
            rid = data.plant(self.spec, self.base, entity, values, "duplicate")
        except (ValueError, TypeError) as exc:
            raise GenerationError(f"duplicate: {exc}") from None
        self.base.commit()
        self.ctx.plant.append({"app": self.spec.name, "entity": entity, "values": values})
        self.ctx.copy = (entity, record["id"], rid)
        self.state = state_checks.StateChecks(self.spec, self.base)

    def _fresh_inputs(
        self,
        op: OperationSpec,
        t: TaskTemplate,
        record: Any,
        rng: random.Random,
        fake: Faker,
        earlier: list[dict[str, Any]],
        names: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A repetition's inputs, drawn again while the input that names the created row (the
        one its display field is made of; else the first ``str`` input) repeats an earlier
        repetition's, so "add three recipes" adds three different ones; inputs taken from
        ``let`` are shared on purpose and may repeat."""
        drawn = [n for n in op.inputs() if "let" not in expr.names(t.inputs[n])]
        own = [
            n
            for e in op.effects
            if e.create and e.create in self.spec.entities
            for n in drawn
            if _reads_input(e.values.get(self.spec.entities[e.create].display, ""), n)
        ]
        if not own:
            own = [n for n in drawn if op.inputs()[n].type == "str"][:1]
        for _ in range(MAX_TRIES):
            raw, shown = self._inputs(op, t, record, rng, fake, names)
            if not any(shown[n] == e.get(n) for n in own for e in earlier):
                return raw, shown
        raise GenerationError(f"repeat: {MAX_TRIES} draws of {own} repeat an earlier one")

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

    def _task(
        self,
        t: TaskTemplate,
        scope: dict[str, Any],
        verifier: dict[str, Any],
        plan: list[dict],
        mutations: list[dict],
    ) -> Generated:
        scope = {**self.ctx.names, "now": app_now(self.spec), **scope}
        wording = self._wording(t)
        instruction = " ".join(expr.render(wording, scope).split())
        if t.kind != "info":  # every action, feasible or not, may be impossible: one phrasing
            instruction = f"{instruction} {UNLESS}"
        values = [" ".join(v.split()) for v in expr.holes(wording, scope)]
        setup: dict[str, Any] = {
            "driver": "synth",
            "app": self.app_ref,
            "variant": self.variant.index,
            "layout": self.variant.layout,
            "data_seed": self.data_seed,
            "viewport": list(self.variant.viewport),
        }
        if self.ctx.plant:
            setup["plant"] = self.ctx.plant
        if self.ctx.ask and t.ask is not None:
            setup["user"] = self._hidden(t, scope)
            plan = _asking(plan, setup["user"])
        if t.end_in is not None:
            plan, verifier = self._ending_in(t.end_in, plan, verifier)
        steps = sum(1 for p in plan if p["op"] != "open") + 10
        task = Task(
            id="pending",
            family="web",
            env=ENV_ID,
            instruction=instruction,
            setup=setup,
            verifier=verifier,
            max_steps=max(STEP_BUDGET, 2 * steps),
            public=PublicMetadata(app=self.spec.name, difficulty=t.difficulty),
            metadata={
                "source": f"synth:{self.spec.name}",
                "kind": t.kind,
                "difficulty": t.difficulty,
                "app": self.spec.name,
                "variant": self.variant.index,
                "layout": self.variant.layout,
                **({"name": t.name} if t.name else {}),
            },
            oracle=Oracle(policy="plan", data=plan),
        )
        return Generated(task, mutations, values)

    def _ending_in(
        self, app: str, plan: list[dict[str, Any]], verifier: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """A task that ends in an app (``end_in``): the plan opens it before it is done, the
        verifier wants it on screen at the end (a phone check: the web serves one app)."""
        title = (self.spec if app == self.spec.name else self.apps.get(app) or _replica(app)).title
        at = len(plan) - 1 if plan and plan[-1]["op"] == "done" else len(plan)
        plan = [*plan[:at], {"op": "open_app", "name": title}, *plan[at:]]
        checks = [*verifier["checks"], {"kind": "foreground", "app": app}]
        return plan, {**verifier, "checks": checks}

    def _wording(self, t: TaskTemplate) -> str:
        """The instruction's wording: drawn from the instruction and its phrasings (the ask
        variant's from its own), by the task's generator; a template with one wording draws
        nothing, so the domains' tasks stay as they were."""
        if self.ctx.ask and t.ask is not None:
            texts = t.ask.instructions
        else:
            texts = [t.instruction, *t.phrasings]
        return texts[0] if len(texts) == 1 else self.ctx.rng.choice(texts)

    def _hidden(self, t: TaskTemplate, scope: dict[str, Any]) -> dict[str, str]:
        """``setup["user"]`` of an ask variant: each hidden value by its human label (the
        form's label of an input, the field's title of the row's value), as the simulated user
        tells it when asked; a repeated operation's values are told together."""
        assert t.ask is not None
        op = self.spec.operations.get(t.operation or "")
        entity = op.entity if op is not None else t.entity
        fields = op.inputs() if op is not None else {}
        out: dict[str, str] = {}
        for name in t.ask.hide:
            if name in t.inputs:
                found = [d.get(name) for d in scope.get("inputs") or [scope.get("input") or {}]]
                label = self._label(name, fields[name]) if name in fields else _human(name)
            elif name in t.let:
                found, label = [scope["let"][name]], _human(name)
            else:
                rows = scope.get("records") or [scope.get("record")]
                found = [r[name] for r in rows if r is not None]
                e = self.spec.entities[entity] if entity else None
                label = self._label(name, e.fields[name]) if e else _human(name)
            shown = list(dict.fromkeys(expr.show(v) for v in found if v is not None))
            if not shown:
                raise GenerationError(f"ask.hide: no value of {name!r} to hide")
            out[label] = ", ".join(shown)
        return out


def _param(f: FieldSpec, name: str, record: dict[str, Any]) -> str:
    """The filter value the app receives when a user picks the record's own value."""
    if f.type == "ref":
        return str(record[f"{name}_id"])
    if f.type == "bool":
        return str(int(bool(record[name])))
    return expr.show(record[name])


def _answer_check(
    t: TaskTemplate, value: Any, column: list[str]
) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    """The ``answer`` check of an answer template's value in its format (``list``: the items
    in any order and no other row's; ``number``: within ``tolerance``; ``bool``: yes or no;
    ``date``; ``text``), what the oracle says, and the near misses the check must refuse."""
    form = t.answer_format or _format_of(value)
    check: dict[str, Any]
    if form == "list":
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not a list")
        items = list(dict.fromkeys(expr.show(v) for v in value if expr.show(v)))
        others = sorted(set(column) - set(items))[:MAX_OTHERS]
        said = ", ".join(items) or "None"
        check = {"kind": "answer", "value": items, "normalize": "list", "others": others}
        misses = [{"name": "no answer", "chat": []}]
        if others:
            misses.append(
                {"name": "every value listed", "chat": [f"{ANSWER}{said}, " + ", ".join(others)]}
            )
            misses.append(
                {
                    "name": "another row's value",
                    "chat": [f"{ANSWER}{', '.join([*items[1:], others[0]])}"],
                }
            )
        if len(items) > 1:
            misses.append({"name": "one missing", "chat": [f"{ANSWER}{', '.join(items[:-1])}"]})
        return check, said, misses
    if form == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not a number")
        said = str(value) if isinstance(value, int) else f"{value:.2f}".rstrip("0").rstrip(".")
        check = {"kind": "answer", "value": said, "normalize": "number"}
        if t.tolerance:
            check["tolerance"] = t.tolerance
        wrong = value + max(1, 2 * (t.tolerance or 0)) + 1
        wrong_said = str(wrong) if isinstance(wrong, int) else f"{wrong:.2f}"
        misses = [
            {"name": "no answer", "chat": []},
            {"name": "a different value", "chat": [f"{ANSWER}{wrong_said}"]},
            {"name": "two values", "chat": [f"{ANSWER}{said} or {wrong_said}"]},
        ]
        return check, said, misses
    if form == "bool":
        if not isinstance(value, bool):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not true or false")
        said, other = ("Yes", "No") if value else ("No", "Yes")
        # either vocabulary reads ("Yes", "True"), and neither word of the other answer may
        # appear beside it
        words = [("yes", "no"), ("true", "false")] if value else [("no", "yes"), ("false", "true")]
        opposite = sorted({w for _, w in words})
        check = {
            "kind": "any",
            "checks": [
                {"kind": "answer", "value": w, "normalize": "text", "others": opposite}
                for w, _ in words
            ],
        }
        misses = [
            {"name": "no answer", "chat": []},
            {"name": "the opposite", "chat": [f"{ANSWER}{other}"]},
            {"name": "both", "chat": [f"{ANSWER}{said} or {other.lower()}"]},
        ]
        return check, said, misses
    said = expr.show(value)
    if not said:
        raise GenerationError(f"answer {t.answer!r} gives nothing to answer")
    normalize = "date" if form == "date" else "text"
    others = sorted(set(column) - {said})[:MAX_OTHERS] if form == "text" else []
    check = {"kind": "answer", "value": said, "normalize": normalize, "others": others}
    misses = [{"name": "no answer", "chat": []}]
    if others:
        misses.append({"name": "a different value", "chat": [f"{ANSWER}{others[0]}"]})
        misses.append(
            {"name": "every value listed", "chat": [f"{ANSWER}{said}, {', '.join(others)}"]}
        )
    return check, said, misses


def _format_of(value: Any) -> str:
    """An answer's format when the template does not say: by the value's type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dt.date):
        return "date"
    return "text"


def _reads_input(source: str, name: str) -> bool:
    """Whether an effect's value expression reads ``input.<name>``."""
    return re.search(rf"\binput\s*\.\s*{re.escape(name)}\b", source) is not None


def _human(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _asking(plan: list[dict[str, Any]], user: dict[str, str]) -> list[dict[str, Any]]:
    """The oracle's plan with an ``ask`` before the first step that needs each hidden value
    (the step that types, opens or says it; the start when none does)."""
    out = list(plan)
    for label, value in user.items():
        parts = [v.strip() for v in value.split(", ")] + [value]

        def needs(step: dict[str, Any], parts: list[str] = parts) -> bool:
            said = str(step.get("text", ""))
            return (
                step.get("value") in parts
                or step.get("name") in parts
                or (step.get("op") == "say" and any(p and p in said for p in parts))
            )

        at = next((i for i, step in enumerate(out) if needs(step)), 0)
        out.insert(at, {"op": "ask", "question": f"What is the {label.lower()}?"})
    return out


_SPECS: dict[str, AppSpec] = {}


def _replica(app: str) -> AppSpec:
    """Another replica app (a plant's ``app``), loaded once per process."""
    if app not in _SPECS:
        try:
            _SPECS[app] = load_spec(app)
        except SpecError as exc:
            raise GenerationError(f"plant: app {app!r}: {exc}") from None
    return _SPECS[app]


def _jsonable(value: Any) -> Any:
    """A drawn value as ``setup["plant"]`` carries it: JSON scalars as they are, dates and
    times as the app shows them."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return expr.show(value)


_GENERATORS: dict[tuple[int, str, str], tuple[AppSpec, TaskGenerator]] = {}


def _generator(spec: AppSpec, layout: str, ref: str) -> TaskGenerator:
    """One generator per (spec object, layout, app ref): its seeded database is built once
    (the spec is kept with it, so its id is not reused while cached)."""
    key = (id(spec), layout, ref)
    if key not in _GENERATORS:
        _GENERATORS[key] = (spec, TaskGenerator(spec, layout=layout, app_ref=ref))
    return _GENERATORS[key][1]
