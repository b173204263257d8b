"""The strategy space of synthesized app tasks (web and phone alike), for adversary search.

A strategy is a plan in the oracle's step language (``click``, ``open``, ``say``,
``infeasible``, ``done``; see :mod:`palaestra.synth_apps.generate`), played by the family's
``plan`` policy exactly as the named adversaries of :mod:`palaestra.synth_apps.adversaries`
are. It knows what any agent sees: the instruction, every page of the app and every row those
pages list (the seeded database is what they show, so it is read instead of crawled screen by
screen), and the rules' messages the app shows when an operation is refused. It never reads
the task's setup beyond which app it runs, its oracle or its verifier.

The primitives: ``crawl`` (visit every page of the app), ``open_named`` (open a row the
instruction names, as an agent starting on it would); the shared combinators: hedges of two or
three values (of the row opened, else of the rows the instruction names, else of any row), a
row dumped whole, every value seen, an infeasibility report naming one to three of the app's
rule messages (crawl then claim), a done claim; and stopping early.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.synth_apps import expr
from palaestra.synth_apps.adversaries import CLAIM, STUFFED_CHARS, _app, _rows
from palaestra.synth_apps.spec import AppSpec
from palaestra.synth_apps.variants import Variant
from palaestra.tasks import Task
from palaestra.verifiers.search import (
    Memory,
    Search,
    Strategy,
    StrategySpace,
    claim,
    dump,
    dump_all,
    hedge,
    script,
)

#: episodes searched per task (chosen so that validation costs at most ~50% more)
BUDGET = 6
Plan = list[dict[str, Any]]
#: the shortest shown value that counts as "named by the instruction" (not "a", "12")
_NAMED_CHARS = 4


def _say(text: str) -> Plan:
    return [{"op": "say", "text": text}, {"op": "done"}]


def _infeasible(text: str) -> Plan:
    return [{"op": "infeasible", "reason": text[:STUFFED_CHARS]}]


class AppView:
    """What an agent can see of one task's app: its pages, their rows as shown (field label ->
    shown value), the rows the instruction names and the app's rule messages."""

    def __init__(self, task: Task) -> None:
        found = _app(task)
        self.instruction = task.instruction
        self.pages: list[tuple[str, str, list[dict[str, str]]]] = []  # label, entity, rows
        self.sentences: list[str] = []
        if found is None:
            return
        spec, variant = found
        seed = int(task.setup.get("data_seed", 0))
        said = task.instruction.casefold()
        for page in spec.pages:
            rows = [self._shown(spec, variant, page.entity, r) for r in _rows(spec, page, seed)]
            self.pages.append((variant.label(page.label), page.entity, rows))
        self.display = {e: variant.label(spec.entities[e].display) for e in spec.entities}
        self.named = [
            (label, row)
            for label, _, rows in self.pages
            for row in rows
            if any(len(v) >= _NAMED_CHARS and v.casefold() in said for v in row.values())
        ]
        self.next_label = variant.label("Next page")
        self.sentences = [rule.message for op in spec.operations.values() for rule in op.rules]

    @staticmethod
    def _shown(spec: AppSpec, variant: Variant, entity: str, row: dict[str, Any]) -> dict:
        fields = spec.entities[entity].fields
        return {
            variant.label(f.title(n)): expr.show(row[n])
            for n, f in fields.items()
            if row.get(n) not in (None, "")
        }

    def memory(self, view: dict[str, Any]) -> Memory:
        """A fresh memory holding everything the pages show."""
        memory = Memory(view)
        for _, _, rows in self.pages:
            for row in rows:
                memory.record(row)
                memory.value(*row.values())
        memory.sentence(*self.sentences)
        memory.notes["named"] = [row for _, row in self.named]
        return memory


def _pool(memory: Memory) -> list[str]:
    """The values a hedge picks from: the opened row's, else the named rows', else all."""
    rows = [memory.notes["opened"]] if memory.notes.get("opened") else memory.notes["named"]
    values = {v: None for row in rows for v in row.values()}
    return list(values) or list(memory.values)


class AppSpace(StrategySpace):
    """The synthesized-app space of one task: strategies become plans, played by ``play_plan``
    (the family's ``plan`` policy on that plan, giving up when a step cannot be found)."""

    def __init__(self, task: Task, play_plan: Callable[[Plan], Any]) -> None:
        self.app = AppView(task)
        self.view = task.agent_view()
        self.play_plan = play_plan

        def crawl(memory: Memory, param: int) -> Plan:
            pages = [label for label, _, _ in self.app.pages]
            return [{"op": "click", "role": "link", "name": label} for label in pages]

        def open_named(memory: Memory, param: int) -> Plan:
            if not self.app.named:
                return []
            label, row = self.app.named[param % len(self.app.named)]
            entity = next(e for page, e, _ in self.app.pages if page == label)
            memory.notes["opened"] = row
            name = row.get(self.app.display[entity], "")
            return [
                {"op": "click", "role": "link", "name": label},
                {"op": "open", "name": name, "next": self.app.next_label},
            ]

        super().__init__(
            [
                script("crawl", crawl),
                script("open_named", open_named),
                hedge(_say, 2, among=_pool),
                hedge(_say, 3, among=_pool),
                dump(_say),
                dump_all(_say),
                claim(
                    _infeasible,
                    "claim_infeasible",
                    ["This cannot be done:", "That is not possible here."],
                    with_sentences=3,
                ),
                claim(_say, "claim_done", [CLAIM]),
            ],
            lambda memory, observation, info: None,  # a plan is made before it is played
            cuts=(1, 2, 3),
        )

    def plan(self, strategy: Strategy) -> Plan:
        memory = self.app.memory(self.view)
        steps: Plan = []
        for name, param in strategy.genes:
            if name == "dump":  # the row opened, else the rows the instruction names
                opened = memory.notes.get("opened")
                memory.records[:] = [opened] if opened else memory.notes["named"] or memory.records
            steps += list(self.primitives[name].phase(memory, param))
        return steps if strategy.cut is None else steps[: strategy.cut]

    def policy(self, strategy: Strategy) -> Any:
        return self.play_plan(self.plan(strategy))


def search_for(
    task: Task, play: Callable[[Any], Any], plan_policy: Callable[[Plan], Any], budget: int
) -> Search:
    """The search validation runs on a synthesized task: ``plan_policy(plan)`` makes the
    family's policy for a plan, ``play(policy)`` plays it as validation plays adversaries."""
    return Search.of(task, AppSpace(task, plan_policy), play, budget)
