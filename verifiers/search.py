"""Adversary search: validation looks for a cheap strategy that wins, instead of trusting a list.

A fixed list of adversaries only proves that *those* fail; an RL policy searches. So beside the
named adversaries, :func:`palaestra.verifiers.validation.validate` can search a task's
**strategy space** within a budget of episodes and reject the task when the best strategy found
gets success true or earns more than :data:`~palaestra.verifiers.validation.ADVERSARY_CEILING`.

A strategy is a short program of **phases** played in order by one policy: what a family calls
its primitives (ask the user everything, look every record up, crawl every page, open every
file the instruction names, the standard fixes) and the combinators shared here (hedge two or
three values seen, dump a record seen, claim without checking, crawl then claim, stop early).
Each phase is built only from what an agent sees: the task's view (never the task: scripted
policies get the whole task, a strategy gets :meth:`Task.agent_view`), the observations, the
info and the tool results, gathered in a :class:`Memory` every phase shares. A family's
``see`` hook reads each observation into the memory (the values, records and rule sentences it
shows); a phase is ``phase(memory, param) -> generator`` that yields actions and is sent each
next observation, ``param`` being an integer the search varies (which values, how many).

The search (:func:`search`) is random sampling followed by evolutionary refinement on reward:
the random half tries every finishing move in turn, each after a random choice of exploring
phases; then, once some strategy earns a reward, the best so far are mutated (a parameter, a
phase swapped, added, dropped, an early stop) or combined (one's exploring phases, another's
finish); while none earns anything, sampling stays random. It is deterministic for a seed,
stops at the first win, and a strategy that crashes is an error in the report, never a win or
a pass.
"""

from __future__ import annotations

import json
import random
import time
import zlib
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from palaestra.tasks import Task

#: ``obs = yield action``: a phase's generator is sent every observation after its action
Phase = Callable[["Memory", int], Generator[Any, dict[str, Any], None]]
#: ``see(memory, observation, info)``: the family reads one observation into the memory
See = Callable[["Memory", dict[str, Any], dict[str, Any]], None]
#: ``answer(text)``: the actions that give ``text`` as the agent's answer or report
Answer = Callable[[str], list[Any]]

#: how many parameter values a phase is tried with (a seed for its choices)
PARAMS = 1000
#: how much of the best strategy's trajectory a report keeps (as for a winning adversary)
KEPT_ACTIONS, KEPT_CHARS = 100, 300
#: what ``dump`` and ``claim`` texts are cut to (every family's message bound is above it)
TEXT_CHARS = 2000


@dataclass
class Memory:
    """What an agent has seen so far in one episode: the task view, the last observation and
    info, and what the family's ``see`` read out of every observation: values shown (in order,
    once each), records (a row, a tool result's object) and sentences (rules, policies)."""

    view: dict[str, Any]
    observation: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    values: dict[str, None] = field(default_factory=dict)
    records: list[Any] = field(default_factory=list)
    sentences: dict[str, None] = field(default_factory=dict)
    #: the family's own notes (ids heard, pages crawled)
    notes: dict[str, Any] = field(default_factory=dict)

    def value(self, *found: Any) -> None:
        for v in found:
            text = str(v).strip()
            if text and len(text) <= 200:
                self.values.setdefault(text, None)

    def record(self, row: Any) -> None:
        if row not in self.records:
            self.records.append(row)

    def sentence(self, *found: str) -> None:
        for s in found:
            if s.strip():
                self.sentences.setdefault(s.strip(), None)


@dataclass(frozen=True)
class Primitive:
    """One phase a strategy may play. ``final`` ones finish a strategy (an answer, a claim, a
    refusal): a strategy has at most one, last."""

    name: str
    phase: Phase
    final: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Strategy:
    """A program of the space: ``(primitive name, param)`` phases in order, and where to stop
    early (after ``cut`` actions; None: play to the end)."""

    genes: tuple[tuple[str, int], ...]
    cut: int | None = None

    def describe(self) -> str:
        """``listen#602 → do_all#960``: each phase with its param (the seed of its choices)."""
        parts = [f"{name}#{param}" for name, param in self.genes] or ["nothing"]
        text = " → ".join(parts)
        return text + (f" (stopped after {self.cut} actions)" if self.cut is not None else "")


class StrategySpace:
    """A family's strategies for one task: its primitives (exploring and final), how it reads
    an observation (``see``) and how it ends an episode (``end``: actions after the phases,
    e.g. closing the conversation; empty: the policy just stops)."""

    def __init__(
        self,
        primitives: Iterable[Primitive],
        see: See,
        *,
        end: Sequence[Any] = (),
        longest: int = 3,
        cuts: Sequence[int] = (1, 2, 4, 8),
    ) -> None:
        self.primitives = {p.name: p for p in primitives}
        self.explorers = [n for n, p in self.primitives.items() if not p.final]
        self.finals = [n for n, p in self.primitives.items() if p.final]
        if not self.primitives:
            raise ValueError("a strategy space needs at least one primitive")
        self.see = see
        self.end = list(end)
        self.longest = longest
        self.cuts = tuple(cuts)

    # ----- the genetic operators -----------------------------------------------------------
    def sample(self, rng: random.Random, final: str | None = None) -> Strategy:
        """A random program: up to ``longest - 1`` distinct exploring phases in the order the
        family lists them (ask before looking up, crawl before opening), then a final one
        (most often; ``final`` names it), sometimes stopped early."""
        most = min(self.longest - 1, len(self.explorers))
        # a third of the time the widest: every exploring phase it can hold (look at all first)
        count = most if rng.random() < 0.3 else rng.randint(0, most)
        picked = sorted(rng.sample(self.explorers, count), key=self.explorers.index)
        genes = [(n, rng.randrange(PARAMS)) for n in picked]
        if final is not None:
            genes.append((final, rng.randrange(PARAMS)))
        elif self.finals and (not genes or rng.random() < 0.9):
            genes.append((rng.choice(self.finals), rng.randrange(PARAMS)))
        cut = rng.choice(self.cuts) if self.cuts and rng.random() < 0.1 else None
        return Strategy(tuple(genes), cut)

    def mutate(self, s: Strategy, rng: random.Random) -> Strategy:
        """One small change: a parameter redrawn, a phase swapped for another of its kind, an
        exploring phase added or dropped, the early stop toggled."""
        genes = list(s.genes)
        move = rng.choice(("param", "param", "swap", "add", "drop", "cut"))
        if move == "cut" or not genes:
            cut = None if s.cut is not None or not self.cuts else rng.choice(self.cuts)
            return replace(s, cut=cut) if genes else self.sample(rng)
        i = rng.randrange(len(genes))
        name, _ = genes[i]
        if move == "param":
            genes[i] = (name, rng.randrange(PARAMS))
        elif move == "swap":
            pool = self.finals if self.primitives[name].final else self.explorers
            genes[i] = (rng.choice(pool), rng.randrange(PARAMS))
        elif move == "add" and len(genes) < self.longest and self.explorers:
            unused = [n for n in self.explorers if n not in {g for g, _ in genes}]
            if unused:  # in the space's order: a family lists what comes first first
                name = rng.choice(unused)
                rank = self.explorers.index(name)
                at = sum(1 for g, _ in genes if g in self.explorers[:rank])
                genes.insert(at, (name, rng.randrange(PARAMS)))
        elif move == "drop" and len(genes) > 1:
            del genes[i]
        return Strategy(tuple(genes), s.cut)

    def combine(self, a: Strategy, b: Strategy) -> Strategy:
        """``a``'s exploring phases, then ``b``'s finish (crawl as one did, claim as the other)."""
        explore = [g for g in a.genes if not self.primitives[g[0]].final]
        finish = [g for g in b.genes if self.primitives[g[0]].final]
        return Strategy(tuple(explore[: self.longest - 1] + finish[:1]), a.cut)

    def policy(self, strategy: Strategy) -> StrategyPolicy:
        return StrategyPolicy(self, strategy)


class StrategyPolicy:
    """Plays one strategy as a :class:`~palaestra.policies.Policy`: its phases in order, one
    shared :class:`Memory` built from the task's view and every observation."""

    def __init__(self, space: StrategySpace, strategy: Strategy) -> None:
        self.space = space
        self.strategy = strategy
        self.memory = Memory({})
        self._running: Generator[Any, dict[str, Any], None] | None = None
        self._played = 0

    def reset(self, task: Task | None) -> None:
        # the view, never the task: a strategy knows what an agent is told, nothing more
        view = task.agent_view() if isinstance(task, Task) else {}
        self.memory = Memory(view)
        self._running = self._program()
        self._played = 0
        self._started = False

    def _program(self) -> Generator[Any, dict[str, Any], None]:
        for name, param in self.strategy.genes:
            yield from self.space.primitives[name].phase(self.memory, param)
        yield from each(self.space.end)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        assert self._running is not None, "reset() first"
        self.memory.observation, self.memory.info = observation, info
        self.space.see(self.memory, observation, info)
        if self.strategy.cut is not None and self._played >= self.strategy.cut:
            raise StopIteration("stopped early")
        if not self._started:
            self._started = True
            action = next(self._running)
        else:
            action = self._running.send(observation)
        self._played += 1
        return action


def each(actions: Iterable[Any]) -> Generator[Any, dict[str, Any], None]:
    """``actions`` as a phase's generator (``yield from`` a list would not take ``send``)."""
    for action in actions:  # noqa: UP028
        yield action


# ----- shared combinators (each a final phase built on the family's ``answer``) ----------------


def choose(memory_items: Sequence[Any], param: int, k: int) -> list[Any]:
    """``k`` distinct items picked by ``param`` (the same param, the same pick)."""
    items = list(memory_items)
    return random.Random(param).sample(items, min(k, len(items)))


def hedge(
    answer: Answer, k: int, among: Callable[[Memory], Sequence[str]] | None = None
) -> Primitive:
    """Answer with ``k`` values seen joined by "or" (one of them may be right)."""

    def phase(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        pool = among(memory) if among is not None else list(memory.values)
        picked = choose(pool, param, k)
        yield from each(answer(" or ".join(picked) if picked else "I don't know"))

    return Primitive(f"hedge{k}", phase, final=True, doc=f"{k} values seen joined by 'or'")


def dump(answer: Answer) -> Primitive:
    """Answer with one whole record seen (every field of it)."""

    def phase(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        picked = choose(memory.records, param, 1)
        text = json.dumps(picked[0], default=str) if picked else " ".join(memory.values)
        text = text or "Here is what I found."
        yield from each(answer(text[:TEXT_CHARS]))

    return Primitive("dump", phase, final=True, doc="a whole record seen as the answer")


def dump_all(answer: Answer) -> Primitive:
    """Answer with everything seen (every value), cut to a message."""

    def phase(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        yield from each(answer(", ".join(memory.values)[:TEXT_CHARS] or "Nothing found."))

    return Primitive("dump_all", phase, final=True, doc="every value seen as the answer")


def claim(answer: Answer, name: str, texts: Sequence[str], with_sentences: int = 0) -> Primitive:
    """Claim without checking: one of ``texts`` (picked by the param), followed by up to
    ``with_sentences`` rule sentences seen (a refusal or an infeasibility report naming
    candidate rules)."""

    def phase(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        text = texts[param % len(texts)]
        if with_sentences:
            k = 1 + param % with_sentences
            text += " " + " ".join(choose(list(memory.sentences), param, k))
        yield from each(answer(text[:TEXT_CHARS]))

    return Primitive(name, phase, final=True, doc=f"claims without checking: {texts[0]!r}")


def script(
    name: str, actions: Callable[[Memory, int], Sequence[Any]], final: bool = False
) -> Primitive:
    """A phase that plays a list computed from the memory when it starts."""

    def phase(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        yield from each(actions(memory, param))

    return Primitive(name, phase, final=final)


# ----- the search ------------------------------------------------------------------------------


@dataclass
class Search:
    """What validation needs to search a task: its space, how to play a policy on it (the
    same runner validation uses: one real episode, the verifier's result) and the budget in
    episodes."""

    space: StrategySpace
    play: Callable[[Any], Any]  # Policy -> palaestra.verifiers.validation.Run
    budget: int
    seed: int = 0

    @classmethod
    def of(
        cls, task: Task, space: StrategySpace, play: Callable[[Any], Any], budget: int
    ) -> Search:
        """A task's search, seeded by its id (each task explores its own order of the space;
        the same task, the same search)."""
        return cls(space, play, budget, seed=zlib.crc32(task.id.encode()))

    def run(self, ceiling: float) -> dict[str, Any]:
        return search(self.space, self.play, self.budget, seed=self.seed, ceiling=ceiling)


def search(
    space: StrategySpace,
    play: Callable[[Any], Any],
    budget: int,
    *,
    seed: int = 0,
    ceiling: float = 0.1,
    randoms: float = 0.5,
) -> dict[str, Any]:
    """Play up to ``budget`` strategies: the first ``randoms`` share sampled at random, the rest
    refined from the best so far (mutated, or combined with another of the best). Stops at the
    first win (success, or reward above ``ceiling``). The report: the budget, the episodes
    played, the errors (a crashed strategy: its description and the exception), and the best
    strategy found (description, success, score, reward, actions kept), ``won`` when it beats
    the verifier."""
    started = time.perf_counter()
    rng = random.Random(seed)
    tried: set[Strategy] = set()
    scored: list[tuple[tuple[bool, float], int, Strategy, Any]] = []
    errors: list[str] = []
    played = 0
    first = max(1, round(budget * randoms))
    # the random phase tries every finishing move in turn (a seeded order), so a small budget
    # still covers each cheap finish once; refinement starts only once some reward shows
    finals = rng.sample(space.finals, len(space.finals))
    while played < budget:
        signal = bool(scored) and (scored[0][0][1] > 0 or scored[0][0][0])
        final = finals[played % len(finals)] if finals else None
        strategy = _next(
            space, rng, scored, tried, random_phase=played < first or not signal, final=final
        )
        if strategy is None:
            break  # the space is exhausted
        tried.add(strategy)
        played += 1
        try:
            run = play(space.policy(strategy))
        except Exception as exc:  # a strategy that crashes proves nothing: an error, reported
            errors.append(f"{strategy.describe()}: {type(exc).__name__}: {exc}"[:KEPT_CHARS])
            continue
        key = (bool(run.result.success), float(run.reward))
        scored.append((key, played, strategy, run))
        scored.sort(key=lambda s: (s[0], -s[1]), reverse=True)
        if key[0] or key[1] > ceiling:
            break
    report: dict[str, Any] = {
        "budget": budget,
        "seed": seed,
        "played": played,
        "errors": errors,
        "won": False,
        "seconds": round(time.perf_counter() - started, 3),
    }
    if scored:
        (success, reward), _, strategy, run = scored[0]
        report["won"] = success or reward > ceiling
        report["best"] = {
            "strategy": strategy.describe(),
            "success": success,
            "score": round(run.result.score, 4),
            "reward": round(reward, 4),
            "actions": [str(a)[:KEPT_CHARS] for a in run.actions[:KEPT_ACTIONS]],
        }
    return report


def _next(
    space: StrategySpace,
    rng: random.Random,
    scored: list[tuple[tuple[bool, float], int, Strategy, Any]],
    tried: set[Strategy],
    *,
    random_phase: bool,
    final: str | None = None,
) -> Strategy | None:
    """The next untried strategy: random (ending with ``final`` if given), or a refinement of
    one of the best three."""
    for attempt in range(50):
        if random_phase or not scored:
            candidate = space.sample(rng, final if attempt < 25 else None)
        else:
            parent = scored[min(len(scored) - 1, int(rng.random() ** 2 * 3))][2]
            if len(scored) > 1 and rng.random() < 0.3:
                other = scored[rng.randrange(min(3, len(scored)))][2]
                candidate = space.combine(parent, other)
            else:
                candidate = space.mutate(parent, rng)
        if candidate not in tried and candidate.genes:
            return candidate
    return None
