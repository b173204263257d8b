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

import random
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

from palaestra.chat import ANSWER, INFEASIBLE
from palaestra.synth_apps import expr, state_checks
from palaestra.synth_apps.answer_checks import MAX_OTHERS, answer_check, format_of
from palaestra.synth_apps.grounding import (
    MAX_TRIES,
    Context,
    Draw,
    GenerationError,
    Grounding,
    replica,
)
from palaestra.synth_apps.operations import app_now, db_functions
from palaestra.synth_apps.spec import (
    AppSpec,
    OperationSpec,
    SpecError,
    TaskTemplate,
    load_spec,
    replica_names,
)
from palaestra.tasks import Oracle, PublicMetadata, Task

__all__ = ["UNLESS", "Generated", "GenerationError", "TaskGenerator"]

ENV_ID = "palaestra/web-v0"


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


@dataclass
class Generated:
    task: Task
    mutations: list[dict[str, Any]] = field(default_factory=list)
    #: the grounded values stated in the instruction (a rewording must keep them)
    values: list[str] = field(default_factory=list)


class TaskGenerator(Grounding):
    """Tasks for one app variant; deterministic for (spec, variant, data seed, seed)."""

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
        check, said, mutations = answer_check(t, value, self._column(t.entity))
        gates: list[dict[str, Any]] = []
        if (t.answer_format or format_of(value)) == "bool":  # a coin flip unless it looked
            gates.append({"kind": "visited", "evidence": [self._look(t, record)], "gate": True})
            mutations.append(
                {"name": "answered without looking", "visits": [], "chat": [f"{ANSWER}{said}"]}
            )
        plan: list[dict[str, Any]] = []
        if record is not None and page is not None and t.entity is not None:
            plan = self._navigate(t.entity, record, page)
        elif t.entity is not None and (listing := self.spec.page_for(t.entity)) is not None:
            plan = [{"op": "click", "role": "link", "name": self.variant.label(listing.label)}]
        plan += [{"op": "say", "text": said}, {"op": "done"}]
        verifier = {"kind": "all", "checks": [check, *gates, {"kind": "feasible", "gate": True}]}
        return self._task(t, scope, verifier, plan, mutations)

    def _look(self, t: TaskTemplate, record: dict[str, Any] | None) -> dict[str, Any]:
        """The visit a yes/no answer needs: the row asked about (``pick``), or else the page
        listing the rows a question over them reads."""
        if t.entity is not None and record is not None:
            return {"view": t.entity, "id": record["id"]}
        listing = self.spec.page_for(t.entity) if t.entity is not None else None
        if listing is None:
            raise GenerationError("a yes/no answer needs the rows it asks about: an `entity`")
        return {"list": self.spec.pages.index(listing)}

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
                    raw, shown = self._inputs(op, t, record, rng, fake, earlier=earlier)
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

    # ----- infeasibility reports ----------------------------------------------------------------
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
        title = (self.spec if app == self.spec.name else self.apps.get(app) or replica(app)).title
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


_GENERATORS: dict[tuple[int, str, str], tuple[AppSpec, TaskGenerator]] = {}


def _generator(spec: AppSpec, layout: str, ref: str) -> TaskGenerator:
    """One generator per (spec object, layout, app ref): its seeded database is built once
    (the spec is kept with it, so its id is not reused while cached)."""
    key = (id(spec), layout, ref)
    if key not in _GENERATORS:
        _GENERATORS[key] = (spec, TaskGenerator(spec, layout=layout, app_ref=ref))
    return _GENERATORS[key][1]
