"""Execution validation's low half: what a run and a report are, how a family declares its
validation, and the records a slow suite keeps.

A task counts only if running it proves its verifier. The one runner that proves it (the
oracle ``repeats`` times, a do-nothing policy, the mutants of the oracle's end state, every
adversary of the family, then the adversary search of :mod:`palaestra.verifiers.search`) is
the validation service above the families, :mod:`palaestra.validation`. A family only
declares how its tasks are validated, with a :class:`ValidationPlan` (``Family.validation``
names it): which env its episodes run in, what of an end state to read, its mutants and its
strategy space. What stays here is what families and the record format need:
:class:`Run`, :class:`ValidationReport`, :class:`ValidationRecord` (a suite's last run, with
the digest of the code that decided it), keys and :func:`play`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from palaestra.policies import Policy, ReplayPolicy, run_episode
from palaestra.verifiers.base import VerifierResult

if TYPE_CHECKING:
    from palaestra.verifiers.search import Search

#: the most an adversary's episode may earn (rewards summed) and still count as failing
ADVERSARY_CEILING = 0.1


@dataclass
class Run:
    """One validation episode: the verifier's result, a snapshot of the end state (what
    mutations start from), the episode's rewards summed (None when only the verdict counts)
    and the actions played."""

    result: VerifierResult
    state: Mapping[str, Any] = field(default_factory=dict)
    total_reward: float | None = None
    actions: list[Any] = field(default_factory=list)

    @property
    def reward(self) -> float:
        """What a learner would collect: the verdict's score or the dense rewards summed."""
        return max(self.result.score, self.total_reward or 0.0)


#: run("oracle" | "noop" | an adversary's name) -> that episode
Runner = Callable[[str], Run]
#: mutate(end_state, mutation) -> a context giving the mutated state (cleaned up on exit)
Mutator = Callable[[Mapping[str, Any], Mapping[str, Any]], AbstractContextManager[Mapping]]


class StaticProbe:
    """A probe over a recorded state (a snapshot, possibly mutated)."""

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.state = state

    def read(self) -> Mapping[str, Any]:
        return self.state


#: the roles an episode plays in validation: the reference solution, doing nothing, a named
#: adversary, a strategy of the adversary search
ROLES = ("oracle", "noop", "adversary", "search")


class ValidationPlan:
    """How a family's tasks are validated: what the one runner (:mod:`palaestra.validation`)
    must know of the family, as data and small hooks, never a loop of its own.

    ``Family.validation`` names an instance (``"palaestra.envs.cad.validation:PLAN"``). The
    runner plays every episode itself (the family's ``oracle``, ``noop`` and adversary
    policies, the search's strategies) with :func:`palaestra.policies.run_episode`, in the env
    :meth:`env` gives, and asks the plan what to read of the end state, how to mutate it and
    which strategy space to search. The defaults fit a family whose episodes share one env and
    whose end states are not mutated."""

    #: oracle runs per task (each must pass, all agreeing check for check)
    repeats: int = 2
    #: adversary-search episodes per task (0: no search)
    budget: int = 0
    #: tasks validated at once, each thread with its own env (:meth:`open`)
    parallel: int = 1
    #: roles whose refused action is a broken run (a reference plan the env refuses raises);
    #: the others' mistakes are scored
    strict: tuple[str, ...] = ("oracle", "noop")
    #: each named episode on its own seed (0, 1, 2, ..., also given to the policy); else seed 0
    seeded: bool = False
    #: roles whose successful episode ending where the oracle ends (:meth:`end_digest`) did
    #: the task rather than game the verifier: an error in the report, never a win
    abstains: tuple[str, ...] = ()

    def candidates(self) -> list[Any]:
        """The tasks validated when none are given (all of the family's, dropped ones too)."""
        raise NotImplementedError

    def check(self, tasks: list[Any]) -> None:
        """Raise ValueError naming the tasks this plan does not validate."""

    def record(self, tasks: list[Any]) -> ValidationRecord:
        """The record whose suite name and task key a run over ``tasks`` reports under."""
        raise NotImplementedError

    def open(self) -> Any:
        """The env a thread's episodes share (None: :meth:`env` makes one per episode)."""
        return None

    def env(self, shared: Any, task: Any, name: str) -> AbstractContextManager[Any]:
        """The env the episode of policy ``name`` (``"search"`` for a strategy) plays in."""
        return nullcontext(shared)

    def max_steps(self, task: Any, role: str) -> int | None:
        """A bound on the episode below the task's own (None: the task's)."""
        return None

    def end_state(self, env: Any, task: Any, role: str, scratch: Path) -> Mapping[str, Any]:
        """What of an episode's end state to keep (the oracle's is what mutants start from);
        ``scratch`` is a folder the task's validation owns (removed after it)."""
        return {}

    def end_digest(self, env: Any, task: Any, state: Mapping[str, Any]) -> str | None:
        """What an end state is, for :attr:`abstains` (None: never compared)."""
        return None

    def references(self, task: Any) -> Sequence[str]:
        """Further reference solutions of ``task``, each played once after the oracle's runs
        (as the family's policies of those names) and each of which must pass as the oracle
        must: a desktop task's code solution beside its GUI one. None by default."""
        return ()

    def plays_as_noop(self, task: Any, adversary: str) -> bool:
        """True when the adversary has nothing to try on ``task``: its episode is the
        do-nothing one, not played again."""
        return False

    def mutations(self, task: Any) -> Sequence[Mapping[str, Any]]:
        """Near misses of the oracle's end state, each of which the verifier must reject."""
        return []

    def mutate(self, task: Any) -> Mutator:
        """How a mutation is applied to the oracle's end state."""
        return lambda state, mutation: nullcontext(state)

    def prepare(self, task: Any) -> Any:
        """The task as its episodes play it (e.g. without a previous validation report)."""
        return task

    def search(self, task: Any, play: Callable[[Policy], Run], budget: int) -> Search | None:
        """The adversary search over the family's strategy space; ``play(policy)`` plays a
        strategy as the runner plays adversaries. None: the family has no search."""
        return None


@dataclass
class ValidationReport:
    validated: bool
    reason: str | None = None
    oracle_scores: list[float] = field(default_factory=list)
    noop_score: float | None = None
    mutants: dict[str, float] = field(default_factory=dict)
    #: per adversary: success, score, reward (summed), and the actions when it won
    adversaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    adversary_seconds: float = 0.0
    #: the adversary search, when one ran: its budget, episodes played, errors and the best
    #: strategy found (description, success, reward, actions); empty when none ran
    search: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ValidationRecord:
    """A suite's last full validation run, kept as JSON beside the suite's code.

    For families whose validation is too slow to run at every load (a desktop, a B-rep kernel),
    the run is recorded once (:meth:`write`) and the suite lists only the tasks recorded as
    validated *with the same key*: a task whose data changed since the run (its key, a digest
    of what it is, differs), or that has no record, is left out until the next run, so an
    unvalidated task is never emitted.

    A verdict depends on code as much as on data, so a shipped record (one that names its
    ``family`` and ``candidates``) also keeps the digest of the code that decided it
    (:func:`palaestra.validation.code_digest`). Loading does not recompute that digest (a suite
    must load in milliseconds, in every worker): :func:`palaestra.validation.stale` does, in the
    tests, and fails them with the command that records a new run, and CI re-validates every
    candidate against the record (:meth:`disagreements`).
    """

    def __init__(
        self,
        path: Path,
        suite: str,
        key: Callable[[Any], str],
        *,
        family: str = "",
        candidates: str = "",
    ) -> None:
        self.path = path
        self.suite = suite
        self.key = key
        #: the family whose code decides the verdicts, and ``"module:function"`` giving every
        #: task the run validates (dropped ones included): set for shipped records only
        self.family = family
        self.candidates = candidates
        if family and candidates:
            RECORDS[suite] = self

    @property
    def command(self) -> str:
        """What records a new run of this suite."""
        return f"palaestra validate {self.suite} --record"

    def tasks(self) -> list[Any]:
        from palaestra.resolve import resolve

        return list(resolve(self.candidates)())

    def disagreements(self, report: Mapping[str, Any]) -> list[str]:
        """Where a new run's verdicts differ from the recorded ones."""
        recorded = self.load().get("tasks", {})
        out = []
        for tid, now in sorted(report.get("tasks", {}).items()):
            was = recorded.get(tid, {})
            if bool(now.get("validated")) != bool(was.get("validated")):
                out.append(
                    f"{tid}: recorded validated={was.get('validated')} "
                    f"({was.get('reason')}), now {now.get('validated')} ({now.get('reason')})"
                )
        return out

    def load(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.path.read_text()))
        except (OSError, ValueError):
            return {}

    def validated(self, tasks: list[Any]) -> list[Any]:
        """The tasks the record validates, each carrying its report."""
        reports = self.load().get("tasks", {})
        out = []
        for task in tasks:
            report = reports.get(task.id)
            if report and report.get("validated") and report.get("key") == self.key(task):
                out.append(task.model_copy(update={"validation": report}))
        return out

    def write(self, report: dict[str, Any]) -> dict[str, Any]:
        """Record a run (:func:`palaestra.validation.revalidate` made it, code digest included)."""
        self.path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        return report


#: the shipped records, by suite (each registers itself when its suite module is imported)
RECORDS: dict[str, ValidationRecord] = {}


def digest(data: Any) -> str:
    """A stable key for JSON-able data (what a task is, for :class:`ValidationRecord`)."""
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()


def play(
    env: Any, task: Any, policy: Policy | Sequence[Any], *, strict: bool = True, seed: int = 0
) -> Run:
    """Reset ``env`` onto ``task`` and let a scripted policy (or a fixed action list: an
    oracle's, a do-nothing's, a mutant's) play to its end; the episode, end state not read.
    With ``strict`` (reference plans), an action the env refuses is a broken plan, so it
    raises rather than being scored; adversaries play with ``strict=False``."""
    if not isinstance(policy, Policy):
        policy = ReplayPolicy(policy)
    episode = run_episode(env, policy, task, seed=seed, strict=strict)
    result = env.last_verification or env.verify()
    return Run(result, {}, episode.total_reward, episode.actions)


def task_key(task: Any) -> str:
    """What a task is, as a :class:`ValidationRecord` key: a digest of all of it."""
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()[:20]
