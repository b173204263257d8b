"""AppSpec: one declarative file describes an app, its data, its rules and its tasks.

A spec is YAML or JSON validated by pydantic (``extra="forbid"``, so a typo is an error, not a
silently ignored key). Cross-references (a ``ref`` to an unknown entity, a page column that is not
a field, an expression naming something that does not exist) are checked when the spec loads, and
every error names its place, e.g. ``entities.trip.fields.origin: ref to unknown entity
'stations'``. The format is documented in the README ("App specs").

Values in expressions follow one rule everywhere: a ``ref`` reads as the referenced row's display
text, and ``<field>_id`` is its id; dates are dates, ``today`` is the spec's fixed date, so tasks
and rules are reproducible.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any, Literal, NoReturn

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from palaestra.synth_apps import expr

TYPES = (
    "str",
    "text",
    "int",
    "float",
    "money",
    "bool",
    "date",
    "time",
    "datetime",
    "email",
    "enum",
    "ref",
)
DOMAINS_DIR = Path(__file__).parent / "domains"
#: replicas of real apps (AndroidWorld's); a separate folder, so suites made from every domain
#: (the ``phone`` suite) stay as they are when a replica is added
REPLICAS_DIR = Path(__file__).parent / "replicas"


class SpecError(ValueError):
    """A spec that cannot become an app; the message names the place."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Model):
    """A column (or a form input): its type, constraints and how seed data is made."""

    type: str
    label: str | None = None
    required: bool = True
    min: float | None = Field(default=None, description="numbers: lowest; dates: days after today")
    max: float | None = Field(default=None, description="numbers: highest; dates: days after today")
    choices: list[str] | None = Field(default=None, description="enum values")
    to: str | None = Field(default=None, description="ref: the entity referenced")
    where: str | None = Field(
        default=None, description="ref inputs: which rows to offer (expression)"
    )
    differs_from: str | None = Field(default=None, description="seed: never equal to this field")
    faker: str | None = Field(default=None, description="seed: a Faker provider, e.g. 'city'")
    pattern: str | None = Field(
        default=None, description="seed: '#' digit, '?' letter, e.g. 'IC ###'"
    )
    values: list[Any] | None = Field(default=None, description="seed: pick from these")
    expr: str | None = Field(default=None, description="seed: computed from the row so far")
    unique: bool = False
    default: Any = None
    hidden: bool = Field(default=False, description="never shown in pages (internal bookkeeping)")

    def title(self, name: str) -> str:
        return self.label or name.replace("_", " ").capitalize()

    @property
    def ref_entity(self) -> str:
        """A ref field's entity: ``to``, which the spec check requires of every ref."""
        if self.to is None:
            raise SpecError("a ref field needs 'to' (the entity it references)")
        return self.to


class SeedSpec(_Model):
    count: int = Field(default=0, ge=0, le=100_000)
    rows: list[dict[str, Any]] = Field(
        default_factory=list, description="fixed rows; a ref is given by its display text"
    )


class EntitySpec(_Model):
    label: str
    plural: str | None = None
    display: str = Field(description="the field that names a row (link text, ref text)")
    fields: dict[str, FieldSpec]
    seed: SeedSpec = Field(default_factory=SeedSpec)
    order: str | None = Field(default=None, description="default sort, e.g. 'date, departs'")

    @property
    def plural_label(self) -> str:
        return self.plural or f"{self.label}s"


class PageSpec(_Model):
    """A list page of an entity, with a filter form when ``filters`` are given."""

    entity: str
    label: str
    filters: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    where: str | None = Field(default=None, description="only rows for which this holds")


class StepSpec(_Model):
    title: str
    inputs: dict[str, FieldSpec]


class RuleSpec(_Model):
    require: str
    message: str
    keywords: list[str] = Field(
        default_factory=list, description="words an agent's 'infeasible' reason may use"
    )


class EffectSpec(_Model):
    """One write. ``update``/``delete`` name ``record`` (the operation's row) or an entity whose
    rows where ``where`` holds are written one by one, each bound as ``target`` (stock of every
    product in the cart); ``clear`` empties an entity (or, with ``where``, deletes those rows)."""

    create: str | None = None
    update: str | None = None
    delete: str | None = None
    clear: str | None = None
    where: str | None = None
    values: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> EffectSpec:
        kinds = (self.create, self.update, self.delete, self.clear)
        if sum(x is not None for x in kinds) != 1:
            raise ValueError("an effect is exactly one of create, update, delete, clear")
        return self

    @property
    def names(self) -> str:
        """The entity it writes, or ``record`` (the one of create/update/delete/clear given)."""
        return next(k for k in (self.create, self.clear, self.update, self.delete) if k is not None)


class OperationSpec(_Model):
    label: str
    entity: str | None = Field(default=None, description="the row it starts from (a detail page)")
    when: str | None = Field(default=None, description="offered only when this holds")
    steps: list[StepSpec] = Field(default_factory=list)
    let: dict[str, str] = Field(default_factory=dict)
    rules: list[RuleSpec] = Field(default_factory=list)
    effects: list[EffectSpec]
    success: str = "Done."
    confirm: bool = True
    trigger: Literal["button", "long_press", "swipe"] = Field(
        default="button",
        description="how the mobile layout reaches a row operation: the detail page's button, "
        "the list row's context menu (long_press) or the row swiped left (swipe)",
    )

    def inputs(self) -> dict[str, FieldSpec]:
        return {k: v for step in self.steps for k, v in step.inputs.items()}


class AskSpec(_Model):
    """The ask-the-user variant of a template: ``hide`` inputs (or ``let`` values) are left out
    of the wording and given to the simulated user, who answers when asked."""

    hide: list[str] = Field(min_length=1)
    instructions: list[str] = Field(min_length=1, description="wordings without the hidden holes")


class PlantSpec(_Model):
    """A row created at reset, before the agent starts (in this app unless ``app`` names
    another); ``values`` are expressions over the task's draws (``let``, ``input``, earlier
    ``plant`` rows, ``today``)."""

    app: str | None = None
    entity: str
    values: dict[str, str] = Field(default_factory=dict)


AnswerFormat = Literal["list", "number", "text", "date", "bool"]


class TaskTemplate(_Model):
    """A recipe for tasks; the generator grounds it in seeded rows."""

    kind: Literal["operation", "info", "infeasible", "verify"] = Field(
        description="verify: the picked row is already as asked; the agent must look and "
        "change nothing"
    )
    instruction: str
    name: str | None = Field(
        default=None, description="the template's own name (replicas: AndroidWorld's)"
    )
    phrasings: list[str] = Field(
        default_factory=list, description="more wordings with the instruction's holes"
    )
    ask: AskSpec | None = None
    let: dict[str, str] = Field(
        default_factory=dict, description="task-level draws, made first, read as let.<name>"
    )
    repeat: int | str | None = Field(
        default=None, description="operation: done on N distinct rows or with N input draws"
    )
    plant: list[PlantSpec] = Field(default_factory=list)
    answer: str | None = Field(default=None, description="info: the answer, an expression")
    answer_format: AnswerFormat | None = None
    tolerance: float | None = Field(default=None, ge=0, description="number answers: +/-")
    end_in: str | None = Field(
        default=None, description="the app (a replica's name) on screen when the task ends"
    )
    duplicate: bool = Field(
        default=False,
        description="operation on a row: an exact copy of the picked row is planted, and the "
        "operation done on either copy passes (delete one of two duplicates)",
    )
    operation: str | None = None
    entity: str | None = None
    field: str | None = Field(default=None, description="info: the field whose value is asked")
    pick: str | None = Field(
        default=None, description="which rows qualify (expression over record)"
    )
    inputs: dict[str, str] = Field(default_factory=dict, description="input -> generator expr")
    violate: str | None = Field(
        default=None, description="infeasible: a rule's require, or 'missing'"
    )
    missing: dict[str, str] = Field(
        default_factory=dict, description="infeasible 'missing': filter -> an absent value expr"
    )
    normalize: Literal["text", "number", "date"] = "text"
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    weight: float = 1.0


class ReplicaOf(_Model):
    """The real app a replica stands for (its name and Android package)."""

    app: str
    package: str


class AppSpec(_Model):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    replica_of: ReplicaOf | None = None
    web: bool = Field(default=False, description="replicas: offered in the web layout suite too")
    description: str = ""
    today: dt.date = dt.date(2026, 12, 1)
    entities: dict[str, EntitySpec]
    pages: list[PageSpec]
    operations: dict[str, OperationSpec] = Field(default_factory=dict)
    tasks: list[TaskTemplate] = Field(default_factory=list)
    synonyms: dict[str, list[str]] = Field(
        default_factory=dict, description="label -> alternatives that variants may use"
    )

    @model_validator(mode="after")
    def _cross_references(self) -> AppSpec:
        _check(self)
        return self

    def page_for(self, entity: str) -> PageSpec | None:
        return next((p for p in self.pages if p.entity == entity), None)

    def operation_of(self, t: TaskTemplate) -> OperationSpec:
        """The operation an operation or infeasible template performs (the check makes sure
        it names one)."""
        if t.operation is None or t.operation not in self.operations:
            raise SpecError(f"{t.kind} template: unknown operation {t.operation!r}")
        return self.operations[t.operation]

    def seed_order(self) -> list[str]:
        """Entities in an order where every ref points to an entity seeded before."""
        done: list[str] = []
        pending = list(self.entities)
        while pending:
            for name in pending:
                refs = {f.to for f in self.entities[name].fields.values() if f.type == "ref"}
                if refs <= {*done, name}:
                    done.append(name)
                    pending.remove(name)
                    break
            else:
                raise SpecError(f"entities: refs form a cycle among {pending}")
        return done


def _fail(place: str, message: str) -> NoReturn:
    raise ValueError(f"{place}: {message}")


def _check_field(place: str, f: FieldSpec, spec: AppSpec) -> None:
    if f.type not in TYPES:
        _fail(place, f"unknown field type {f.type!r}; known: {', '.join(TYPES)}")
    if f.type == "enum" and not f.choices:
        _fail(place, "an enum needs choices")
    if f.type == "ref" and f.to not in spec.entities:
        _fail(place, f"ref to unknown entity {f.to!r}; entities: {sorted(spec.entities)}")
    if f.type != "ref" and (f.to or f.where):
        _fail(place, "'to' and 'where' are for ref fields only")
    for key in ("expr", "where"):
        source = getattr(f, key)
        if source:
            try:
                expr.parse(source)
            except expr.ExprError as exc:
                _fail(f"{place}.{key}", str(exc))


def _check_expr(place: str, source: str, allowed: set[str]) -> None:
    try:
        unknown = expr.names(source) - allowed
    except expr.ExprError as exc:
        _fail(place, str(exc))
    if unknown:
        _fail(place, f"{source!r} names {sorted(unknown)}; it may use {sorted(allowed)}")


#: names SQLite would read as keywords; entities and fields become tables and columns
SQL_RESERVED = {
    "order",
    "group",
    "select",
    "where",
    "from",
    "table",
    "transaction",
    "index",
    "join",
    "limit",
    "offset",
    "values",
    "default",
    "check",
    "references",
    "primary",
    "key",
    "by",
    "to",
    "as",
    "in",
    "is",
    "not",
    "null",
    "and",
    "or",
    "case",
    "when",
    "then",
    "else",
    "end",
    "create",
    "delete",
    "update",
    "insert",
    "drop",
    "alter",
    "unique",
    "having",
    "union",
}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _check_name(place: str, name: str) -> None:
    if not _NAME.match(name):
        _fail(place, f"{name!r} must be lower_snake_case (it becomes an SQL name)")
    if name in SQL_RESERVED:
        _fail(place, f"{name!r} is an SQL keyword; pick another name (e.g. {name}s)")


def _check(spec: AppSpec) -> None:
    labels = [p.label for p in spec.pages]
    if len(set(labels)) != len(labels):
        _fail("pages", f"page labels must differ (they are the navigation): {labels}")
    for name, entity in spec.entities.items():
        place = f"entities.{name}"
        _check_name(place, name)
        for fname in entity.fields:
            _check_name(f"{place}.fields.{fname}", fname)
        if entity.display not in entity.fields:
            _fail(f"{place}.display", f"{entity.display!r} is not a field of {name}")
        for fname, f in entity.fields.items():
            _check_field(f"{place}.fields.{fname}", f, spec)
            if f.differs_from and f.differs_from not in entity.fields:
                _fail(f"{place}.fields.{fname}.differs_from", f"no field {f.differs_from!r}")
    spec.seed_order()
    for i, page in enumerate(spec.pages):
        place = f"pages.{i}"
        if page.entity not in spec.entities:
            _fail(f"{place}.entity", f"unknown entity {page.entity!r}")
        fields = spec.entities[page.entity].fields
        for key in ("filters", "columns"):
            for col in getattr(page, key):
                if col not in fields:
                    _fail(f"{place}.{key}", f"{col!r} is not a field of {page.entity}")
        if page.where:
            _check_expr(f"{place}.where", page.where, {"record", "today"})
    for name, op in spec.operations.items():
        place = f"operations.{name}"
        if op.entity is not None and op.entity not in spec.entities:
            _fail(f"{place}.entity", f"unknown entity {op.entity!r}")
        scope = {"input", "today", "now", "created", *op.let}
        if op.entity:
            scope.add("record")
        for fname, f in op.inputs().items():
            _check_field(f"{place}.inputs.{fname}", f, spec)
        if op.when:
            _check_expr(f"{place}.when", op.when, scope - {"input", *op.let})
        for key, source in op.let.items():
            _check_expr(f"{place}.let.{key}", source, scope)
        for j, rule in enumerate(op.rules):
            _check_expr(f"{place}.rules.{j}.require", rule.require, scope)
        for j, effect in enumerate(op.effects):
            ep = f"{place}.effects.{j}"
            for key in ("create", "clear", "update", "delete"):
                name = getattr(effect, key)
                if name and name != "record" and name not in spec.entities:
                    _fail(f"{ep}.{key}", f"unknown entity {name!r}")
            if (effect.update or effect.delete) not in (None, "record") and not effect.where:
                _fail(ep, "an update/delete of an entity's rows needs 'where'")
            if "record" in (effect.update, effect.delete) and op.entity is None:
                _fail(ep, "'record' needs the operation's entity")
            if effect.create and effect.where:
                _fail(f"{ep}.where", "a create has no 'where'")
            rows = {"target"} if effect.where else set()
            if effect.where:
                _check_expr(f"{ep}.where", effect.where, scope | rows)
            target = op.entity if effect.names == "record" else effect.names
            if target is None:
                _fail(ep, "'record' needs the operation's entity")
            columns = _columns(spec.entities[target])
            for key, source in effect.values.items():
                if key not in columns:
                    _fail(f"{ep}.values.{key}", f"not a column of {target}")
                _check_expr(f"{ep}.values.{key}", source, scope | rows)
    for i, t in enumerate(spec.tasks):
        _check_template(f"tasks.{i}", t, spec)


def _columns(entity: EntitySpec) -> set[str]:
    cols = set(entity.fields)
    cols |= {f"{k}_id" for k, f in entity.fields.items() if f.type == "ref"}
    return cols


def _check_template(place: str, t: TaskTemplate, spec: AppSpec) -> None:
    # keys of the other kind would be ignored: say so instead
    stray = {
        "info": ("operation", "violate", "missing", "repeat"),
        "operation": ("entity", "field", "violate", "missing", "answer", "answer_format"),
        "infeasible": ("entity", "field", "answer", "answer_format", "repeat"),
        "verify": ("field", "violate", "missing", "answer", "answer_format", "repeat"),
    }[t.kind]
    for key in stray:
        if getattr(t, key):
            _fail(f"{place}.{key}", f"{t.kind} templates do not take {key!r}")
    if t.duplicate and (t.kind != "operation" or t.repeat):
        _fail(f"{place}.duplicate", "is for operation templates without repeat")
    if t.tolerance is not None and t.answer_format != "number":
        _fail(f"{place}.tolerance", "a tolerance is for answer_format: number")
    op = None
    if t.kind == "verify":
        if t.operation is not None and t.operation not in spec.operations:
            _fail(f"{place}.operation", f"unknown operation {t.operation!r}")
        entity = spec.operations[t.operation].entity if t.operation else t.entity
        if t.operation and t.entity and t.entity != entity:
            _fail(f"{place}.entity", f"the operation acts on {entity}, not {t.entity}")
        if entity is None or entity not in spec.entities:
            _fail(place, "a verify template names the row's entity (or a row operation)")
        if t.duplicate:
            _fail(f"{place}.duplicate", "is for operation templates")
    elif t.kind in ("operation", "infeasible"):
        if t.operation is None or t.operation not in spec.operations:
            _fail(f"{place}.operation", f"unknown operation {t.operation!r}")
        op = spec.operations[t.operation]
        missing = set(op.inputs()) - set(t.inputs)
        if missing:
            _fail(f"{place}.inputs", f"no generator for input(s) {sorted(missing)}")
        entity = op.entity
        if t.duplicate and (entity is None or not any(e.delete == "record" for e in op.effects)):
            _fail(f"{place}.duplicate", f"{t.operation!r} does not delete the row it acts on")
    elif t.answer is not None:  # an answer expression reads the rows it needs itself
        entity = t.entity
        if entity is not None and entity not in spec.entities:
            _fail(f"{place}.entity", f"unknown entity {entity!r}")
        if t.field is not None:
            _fail(f"{place}.field", "give 'answer' or 'field', not both")
        if t.pick and entity is None:
            _fail(f"{place}.pick", "a pick needs the entity whose rows it picks")
    else:
        entity = t.entity
        if entity is None or entity not in spec.entities:
            _fail(f"{place}.entity", f"unknown entity {entity!r}")
        if t.field not in spec.entities[entity].fields:
            _fail(f"{place}.field", f"{t.field!r} is not a field of {entity}")
    if t.answer_format is not None and t.answer is None:
        _fail(f"{place}.answer_format", "an answer_format needs an 'answer' expression")
    if entity is not None and spec.page_for(entity) is None:
        _fail(place, f"no page lists {entity}, so an agent could never reach its rows")
    scope = {"record", "input", "today", "missing", *TASK_NAMES}
    if t.pick:
        _check_expr(f"{place}.pick", t.pick, scope)
    for key, source in t.let.items():
        _check_expr(f"{place}.let.{key}", source, {"today", "now", "let"})
    for j, row in enumerate(t.plant):
        pp = f"{place}.plant.{j}"
        for key, source in row.values.items():
            _check_expr(f"{pp}.values.{key}", source, {"today", "now", "input", *TASK_NAMES})
        if row.app in (None, spec.name):
            if row.entity not in spec.entities:
                _fail(f"{pp}.entity", f"unknown entity {row.entity!r}")
            extra = set(row.values) - set(spec.entities[row.entity].fields)
            if extra:
                _fail(f"{pp}.values", f"{sorted(extra)} are not fields of {row.entity}")
    if t.answer is not None:
        _check_expr(f"{place}.answer", t.answer, {"record", "input", "today", "now", *TASK_NAMES})
    if isinstance(t.repeat, str):
        _check_expr(f"{place}.repeat", t.repeat, {"today", "let"})
    elif t.repeat is not None and not 1 <= t.repeat <= 20:
        _fail(f"{place}.repeat", f"{t.repeat} is not between 1 and 20")
    if t.kind == "infeasible" and op is not None:  # op: read above for every infeasible kind
        requires = [r.require for r in op.rules]
        if t.violate != "missing" and t.violate not in requires:
            _fail(f"{place}.violate", f"must be 'missing' or one of the rules: {requires}")
        if t.violate == "missing" and not t.missing:
            _fail(f"{place}.missing", "name the filter(s) and the absent value(s)")
        if t.missing and not any(set(t.missing) <= set(p.filters) for p in spec.pages):
            _fail(f"{place}.missing", f"no page has all of {sorted(t.missing)} as filters")
    _check_wordings(place, t, spec)


#: what a template's expressions may read besides record/input: task-level draws (``let``),
#: planted rows (``plant[i]``), the rows and draws of a ``repeat`` (``records[i]``,
#: ``inputs[i]``) and, in ``pick``, the rows picked so far (``picked``)
TASK_NAMES = ("let", "plant", "records", "inputs", "picked", "now")


def hole_set(text: str) -> set[str]:
    """The holes of a wording, spaces removed (``{ input.date }`` is ``{input.date}``)."""
    try:
        return {"".join(h.split()) for _, h in expr._holes(text) if h is not None}
    except expr.ExprError as exc:
        raise ValueError(str(exc)) from None


def _check_wordings(place: str, t: TaskTemplate, spec: AppSpec) -> None:
    """A replica's template has a name and at least 4 more wordings with the instruction's
    holes; an ask variant's wordings leave out the hidden values, which must be draws."""
    holes = hole_set(t.instruction)
    if spec.replica_of is not None:
        if not t.name:
            _fail(f"{place}.name", "a replica's template needs its name (AndroidWorld's)")
        if len(t.phrasings) < 4:
            _fail(f"{place}.phrasings", f"a replica's template needs >= 4, has {len(t.phrasings)}")
    for j, text in enumerate(t.phrasings):
        have = hole_set(text)
        if have != holes:
            _fail(
                f"{place}.phrasings.{j}",
                f"holes differ from the instruction's: missing {sorted(holes - have)}, "
                f"extra {sorted(have - holes)}",
            )
    if t.ask is None:
        return
    entity = spec.operations[t.operation].entity if t.operation in spec.operations else t.entity
    fields = set(spec.entities[entity].fields) if entity in spec.entities else set()
    known = set(t.inputs) | set(t.let) | fields
    for name in t.ask.hide:
        if name not in known:
            _fail(
                f"{place}.ask.hide",
                f"{name!r} is not an input, a let value or a field of the row ({sorted(known)})",
            )
    for j, text in enumerate(t.ask.instructions):
        have = hole_set(text)
        draws = set(t.inputs) | set(t.let)
        shown = {h for h in have if any(_reads(h, n, n in draws) for n in t.ask.hide)}
        if shown:
            _fail(f"{place}.ask.instructions.{j}", f"shows hidden value(s) in {sorted(shown)}")
        if not have <= holes:
            _fail(
                f"{place}.ask.instructions.{j}",
                f"holes {sorted(have - holes)} are not in the instruction",
            )


def _reads(hole: str, name: str, drawn: bool) -> bool:
    """Whether a hole reads the hidden value ``name``: a draw's (``input.name``,
    ``inputs[0].name``, ``let.name``) or else the row's (``record.name``, ``records[1].name``)."""
    where = r"input|inputs\[\d+\]|let" if drawn else r"record|records\[\d+\]"
    pattern = rf"\b({where})\.{re.escape(name)}\b"
    return re.search(pattern, hole) is not None


def load_spec(source: str | Path | dict[str, Any]) -> AppSpec:
    """A spec from a dict, a file path, or the name of a built-in domain."""
    if isinstance(source, dict):
        data, where = source, "spec"
    else:
        path = Path(source)
        for folder in (DOMAINS_DIR, REPLICAS_DIR):
            if not path.suffix and (folder / f"{source}.yaml").exists():
                path = folder / f"{source}.yaml"
        if not path.exists():
            raise SpecError(
                f"no spec file {path} and no built-in domain or replica {str(source)!r}; "
                f"domains: {domain_names()}; replicas: {replica_names()}"
            )
        data, where = yaml.safe_load(path.read_text()), str(path)
    try:
        return AppSpec.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{loc}: {msg}" if loc else msg)
        raise SpecError(f"{where}: " + "; ".join(lines)) from None


def domain_names() -> list[str]:
    return sorted(p.stem for p in DOMAINS_DIR.glob("*.yaml"))


def replica_names() -> list[str]:
    """The replica apps (``synth_apps/replicas/``): not domains, so suites of every domain
    leave them out."""
    return sorted(p.stem for p in REPLICAS_DIR.glob("*.yaml"))


def check_replicas(specs: dict[str, AppSpec]) -> None:
    """What one spec cannot check alone: template names unique over all replicas, and rows
    planted in another replica naming its entities and fields."""
    seen: dict[str, str] = {}
    for app, spec in specs.items():
        for i, t in enumerate(spec.tasks):
            place = f"{app}.tasks.{i}"
            if t.name and t.name in seen:
                raise SpecError(f"{place}.name: {t.name!r} is already a template of {seen[t.name]}")
            if t.name:
                seen[t.name] = app
            if t.end_in is not None and t.end_in not in specs:
                raise SpecError(f"{place}.end_in: no replica {t.end_in!r}")
            for j, row in enumerate(t.plant):
                target = specs.get(row.app or app)
                if target is None:
                    raise SpecError(f"{place}.plant.{j}.app: no replica {row.app!r}")
                if row.entity not in target.entities:
                    raise SpecError(
                        f"{place}.plant.{j}.entity: {target.name} has no entity {row.entity!r}"
                    )
                extra = set(row.values) - set(target.entities[row.entity].fields)
                if extra:
                    raise SpecError(
                        f"{place}.plant.{j}.values: {sorted(extra)} are not fields of "
                        f"{target.name}.{row.entity}"
                    )
