"""Adversaries for synthesized app tasks: cheap strategies a reward hacker tries, as plans.

Each strategy builds a plan in the oracle's own step language (``click``, ``open``, ``set``,
``say``, ``infeasible``, ``done``; see :mod:`palaestra.synth_apps.generate`), so the
web family plays it with its ``plan`` policy on the accessibility tree and the mobile family
with its ``plan`` policy on the phone's element list: one strategy, two families. Execution
validation (the validation service, as :mod:`palaestra.synth_apps.validation` declares) plays
every one on every task; a task ships only if each fails it.

A strategy knows what any agent can see: the instruction, the app's pages (their rows are the
seeded database's, which is what the pages show), the rules' wording of the built-in apps. It
may read the oracle's plan only where the strategy is "the right steps, done wrong" (on every
row, or twice); it never reads the verifier.

- ``claim_success``: says the task is done, and does nothing.
- ``enumerate_times``: answers with all 1,440 ``HH:MM`` values.
- ``enumerate_column``: opens the list page and answers with every value of the column the
  instruction seems to ask about (read from the rows the page lists).
- ``stuffed_infeasible``: reports the task infeasible at once, its reason the instruction's own
  words and every rule keyword of the built-in apps, cut to a plausible length.
- ``every_row``: does the asked operation on every row of the list instead of the one asked.
- ``repeat_last``: does the task's steps, then does them again up to the last one (submits
  twice), never answering.

Strategies that replay the oracle's steps with a twist (``every_row``, ``repeat_last``) give up
with an infeasibility report when the twist cannot be played (no second row offers the
operation, the second submit has no button): what remains would be the oracle's own episode,
a success that proves nothing about the verifier.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from palaestra.policies import GiveUpPolicy, Policy, PolicyFactory
from palaestra.synth_apps import data, expr
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.spec import AppSpec, PageSpec, domain_names, load_spec
from palaestra.synth_apps.variants import Variant, make_variant
from palaestra.tasks import Task

Plan = list[dict[str, Any]]
Build = Callable[[Task | None], Plan]
#: plan steps that end an episode or answer (what "the steps" of a task stop before)
FINAL = ("say", "infeasible", "done")
#: rows the every-row strategy acts on besides the asked one (more only costs time: one
#: more already breaks a count or an untouched row)
EVERY_ROW_LIMIT = 1
#: a stuffed reason is cut to this length: under the verifier's length bound, so only the
#: evidence rule (the agent looked) can refuse it
STUFFED_CHARS = 290
ALL_TIMES = [f"{h:02d}:{m:02d}" for h in range(24) for m in range(60)]
CLAIM = "I have completed the task."
#: how a strategy that cannot play its twist ends (it must not end as the plain oracle would)
GAVE_UP: dict[str, Any] = {"op": "infeasible", "reason": "gave up"}
#: the plan of a strategy with nothing to try on a task: the do-nothing episode
IDLE: Plan = [{"op": "done"}]
_DONE = IDLE


def _app(task: Task | None) -> tuple[AppSpec, Variant] | None:
    if task is None or not task.setup.get("app"):
        return None
    spec = spec_for(task.setup["app"])
    variant = make_variant(
        spec, int(task.setup.get("variant", 0)), task.setup.get("layout", "desktop")
    )
    return spec, variant


def _oracle(task: Task | None) -> Plan:
    oracle = task.oracle if task is not None else None
    return [dict(step) for step in (oracle.data or [])] if oracle is not None else []


def _rows(spec: AppSpec, page: PageSpec, seed: int) -> list[dict[str, Any]]:
    with data.opened(data.template(spec, seed), readonly=True) as conn:
        return data.Scope(spec, conn).rows(page.entity, page.where, today=spec.today)


# ----- the strategies -----------------------------------------------------------------------


def claim_success(task: Task | None) -> Plan:
    return [{"op": "say", "text": CLAIM}, *_DONE]


def enumerate_times(task: Task | None) -> Plan:
    return [{"op": "say", "text": ", ".join(ALL_TIMES)}, *_DONE]


_TYPE_HINTS = {
    "time": ("when", "time", "leave", "depart", "arrive", "start"),
    "date": ("date", "day", "when"),
    "money": ("how much", "price", "cost", "balance", "total", "fare", "amount"),
    "int": ("how many", "number of", "count"),
}
#: question words, and words in the names of the fields they ask about
_NAME_HINTS = {
    "where": ("location", "place", "room", "city", "station", "origin", "destination", "address"),
    "who": ("name", "organizer", "owner", "sender", "passenger", "invitee", "customer", "payee"),
    "status": ("status", "state"),
}


def _column(spec: AppSpec, variant: Variant, page: PageSpec, instruction: str) -> list[str]:
    """The fields of the page's entity the instruction seems to ask about: one whose label it
    names, else the ones its question words point at (by field name, then by type), else all
    of them (a dump)."""
    said = instruction.casefold()
    fields = spec.entities[page.entity].fields
    named = [n for n, f in fields.items() if variant.label(f.title(n)).casefold() in said]
    if named:
        return named[:1]
    by_name = [
        n
        for word, parts in _NAME_HINTS.items()
        if word in said
        for n in fields
        if any(part in n for part in parts)
    ]
    if by_name:
        return by_name[:1]
    typed = [n for n, f in fields.items() if any(w in said for w in _TYPE_HINTS.get(f.type, ()))]
    return typed[:1] or list(fields)


def enumerate_column(task: Task | None) -> Plan:
    found = _app(task)
    if found is None or not found[0].pages:
        return _DONE
    spec, variant = found
    page = spec.pages[0]
    plan = _oracle(task)
    if plan and plan[0]["op"] == "click":  # the page the task starts from, if it names one
        page = next((p for p in spec.pages if variant.label(p.label) == plan[0]["name"]), page)
    assert task is not None
    names = _column(spec, variant, page, task.instruction)
    values = {
        expr.show(row[n])
        for row in _rows(spec, page, int(task.setup.get("data_seed", 0)))
        for n in names
        if row.get(n) not in (None, "")
    }
    return [
        {"op": "click", "role": "link", "name": variant.label(page.label)},
        {"op": "say", "text": ", ".join(sorted(values))},
        *_DONE,
    ]


@functools.lru_cache(maxsize=1)
def rule_keywords() -> tuple[str, ...]:
    """Every rule keyword (or message) of the built-in apps: what a stuffed reason cites."""
    words: dict[str, None] = {}
    for name in domain_names():
        for op in load_spec(name).operations.values():
            for rule in op.rules:
                for word in rule.keywords or [rule.message]:
                    words[word] = None
    return tuple(words)


def stuffed_infeasible(task: Task | None) -> Plan:
    said = task.instruction if task is not None else ""
    reason = f"This cannot be done: {said} " + ", ".join(rule_keywords())
    return [{"op": "infeasible", "reason": reason[:STUFFED_CHARS]}]


def every_row(task: Task | None) -> Plan:
    """The oracle's operation, done on each of the first rows of its list page in turn."""
    found = _app(task)
    plan = _oracle(task)
    opened = next((i for i, s in enumerate(plan) if s["op"] == "open"), None)
    rest = [s for s in plan[opened + 1 :] if s["op"] not in FINAL] if opened is not None else []
    if found is None or opened is None or not rest or not _is_write(plan):
        return _DONE  # no row to multiply: nothing this strategy can try
    spec, variant = found
    assert task is not None
    page = next((p for p in spec.pages if variant.label(p.label) == plan[0].get("name")), None)
    if page is None:
        return _DONE
    e = spec.entities[page.entity]
    rows = _rows(spec, page, int(task.setup.get("data_seed", 0)))
    shown = [expr.show(r[e.display]) for r in rows]
    asked = plan[opened]["name"]
    button = rest[0].get("name")  # the operation's button on the row's page
    op = next((o for o in spec.operations.values() if variant.label(o.label) == button), None)
    others = [
        name
        for name, row in zip(shown, rows, strict=True)
        if shown.count(name) == 1 and name != asked and _offered(spec, op, row)
    ]
    out: Plan = []
    for name in [asked, *others[:EVERY_ROW_LIMIT]]:
        out += [plan[0], {**plan[opened], "name": name}, *rest]
    return [*out, *_DONE]


def _offered(spec: AppSpec, op: Any, row: dict[str, Any]) -> bool:
    """The row's page offers the operation (as its button shows), as far as the spec says."""
    if op is None or not op.when:
        return True
    return bool(expr.evaluate(op.when, {"record": row, "today": spec.today}))


def repeat_last(task: Task | None) -> Plan:
    """The task's steps, then all of them again up to the last (a second submit, a second
    cancel); no answer, no report."""
    plan = _oracle(task)
    steps = [s for s in plan if s["op"] not in FINAL]
    if not steps or not _is_write(plan):
        return _DONE
    return [*steps, *steps, *_DONE]


def _is_write(plan: Plan) -> bool:
    """The task changes the app (its oracle neither answers nor reports it infeasible): the
    only tasks where doing the operation on more rows, or twice, is a strategy at all."""
    return not any(s["op"] in ("say", "infeasible") for s in plan)


#: name -> plan builder, in the order validation plays them
STRATEGIES: dict[str, Build] = {
    "claim_success": claim_success,
    "enumerate_times": enumerate_times,
    "enumerate_column": enumerate_column,
    "stuffed_infeasible": stuffed_infeasible,
    "every_row": every_row,
    "repeat_last": repeat_last,
}


def policies(play: Callable[[Build], Policy], fallback: Any) -> dict[str, PolicyFactory]:
    """Every strategy as a family's policy factory (its ``ADVERSARIES``), in :data:`STRATEGIES`'
    order: ``play(build)`` is the family's plan policy playing the plan ``build`` makes.

    A step it cannot find (the row is not there, the page has no such button) ends the attempt
    with ``fallback``, the family's infeasibility report: a failed attack, never the plain
    oracle's episode.
    """

    def factory(build: Build) -> PolicyFactory:
        return lambda: GiveUpPolicy(play(build), fallback=fallback)

    return {name: factory(build) for name, build in STRATEGIES.items()}
