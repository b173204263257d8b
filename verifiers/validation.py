"""Execution validation, for every family: a task counts only if running it proves its verifier.

:func:`validate` runs, for real, the task's oracle ``repeats`` times (each must pass, and the
runs must agree check for check), a do-nothing policy (must fail), re-verifies the oracle's
end state under each mutation (a near miss, e.g. another seat class or a second booking: each
must fail), and plays each of the family's adversaries (cheap general strategies a reward
hacker would try: enumerate answers, claim success, refuse with stuffed reasons, spoof a
window, submit an envelope): each must fail, with success false and its episode's rewards
summed at most :data:`ADVERSARY_CEILING`. A family supplies how to run a policy and how to
mutate its end state; the report says what happened (every adversary's result, and the
trajectory of one that won) and, when the task is rejected, the first reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palaestra.policies import Policy, ReplayPolicy, run_episode
from palaestra.verifiers.base import DeclarativeVerifier, VerifierResult

#: the most an adversary's episode may earn (rewards summed) and still count as failing
ADVERSARY_CEILING = 0.1
#: how much of a winning adversary's trajectory the report keeps
_KEPT_ACTIONS, _KEPT_CHARS = 100, 300


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _signature(result: VerifierResult) -> list[tuple[str, bool, str]]:
    return [(c.kind, c.passed, c.detail) for c in result.checks]


def validate(
    verifier: Mapping[str, Any],
    run: Runner,
    mutations: list[Mapping[str, Any]],
    mutate: Mutator,
    repeats: int = 3,
    adversaries: Sequence[str] = (),
) -> ValidationReport:
    started = time.perf_counter()
    report = ValidationReport(False)

    def reject(reason: str) -> ValidationReport:  # the first failure is the reason
        report.reason = reason
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    first: Run | None = None
    for i in range(repeats):
        try:
            played = run("oracle")
            result = played.result
        except Exception as exc:
            return reject(f"oracle run {i + 1} crashed: {type(exc).__name__}: {exc}")
        report.oracle_scores.append(result.score)
        if result.error:
            return reject(f"verifier error on the oracle's end state: {result.error}")
        if not result.success:
            failed = [c.detail for c in result.checks if not c.passed]
            return reject(f"oracle run {i + 1} failed: {'; '.join(failed)[:300]}")
        if first is None:
            first = played
        elif _signature(result) != _signature(first.result):
            return reject(f"oracle run {i + 1} disagrees with run 1")
    try:
        noop = run("noop").result
    except Exception as exc:
        return reject(f"do-nothing run crashed: {type(exc).__name__}: {exc}")
    report.noop_score = noop.score
    if noop.success or noop.score > 0:
        return reject(f"doing nothing scores {noop.score}")
    assert first is not None
    for mutation in mutations:
        with mutate(first.state, mutation) as state:
            mutant = DeclarativeVerifier(verifier).verify(StaticProbe(state))
        report.mutants[str(mutation["name"])] = mutant.score
        if mutant.error:
            return reject(f"verifier error on mutant {mutation['name']!r}: {mutant.error}")
        if mutant.success:
            return reject(f"mutant {mutation['name']!r} passes the verifier")
    beaten = _play_adversaries(run, adversaries, report)
    if beaten:
        return reject(beaten)
    report.validated = True
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _play_adversaries(run: Runner, names: Sequence[str], report: ValidationReport) -> str | None:
    """Play every adversary (all of them, so the report's table is complete); the reason
    the first winner gives for rejecting the task, or None when every one failed."""
    started = time.perf_counter()
    reason = None
    for name in names:
        try:
            played = run(name)
        except Exception as exc:  # a broken adversary proves nothing either way: reported
            report.adversaries[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        won = played.result.success or played.reward > ADVERSARY_CEILING
        entry: dict[str, Any] = {
            "success": played.result.success,
            "score": round(played.result.score, 4),
            "reward": round(played.reward, 4),
        }
        if played.result.error:
            entry["error"] = played.result.error
        if won:
            entry["actions"] = [str(a)[:_KEPT_CHARS] for a in played.actions[:_KEPT_ACTIONS]]
            reason = reason or (
                f"adversary {name!r} beats the verifier (success {played.result.success}, "
                f"reward {played.reward:.3f})"
            )
        report.adversaries[name] = entry
    report.adversary_seconds = round(time.perf_counter() - started, 3)
    return reason


class ValidationRecord:
    """A suite's last full validation run, kept as JSON beside the suite's code.

    For families whose validation is too slow to run at every load (a desktop, a B-rep kernel),
    the run is recorded once (:meth:`write`) and the suite lists only the tasks recorded as
    validated *with the same key*: a task whose data changed since the run (its key, a digest
    of what it is, differs), or that has no record, is left out until the next run, so an
    unvalidated task is never emitted.
    """

    def __init__(self, path: Path, suite: str, key: Callable[[Any], str]) -> None:
        self.path = path
        self.suite = suite
        self.key = key

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

    def run(self, tasks: list[Any], check: Callable[[Any], ValidationReport]) -> dict[str, Any]:
        """Validate ``tasks`` with ``check``; the report :meth:`write` records."""
        started = time.perf_counter()
        reports = {t.id: {**check(t).to_json(), "key": self.key(t)} for t in tasks}
        ok = sum(1 for r in reports.values() if r["validated"])
        return {
            "suite": self.suite,
            "total": len(tasks),
            "validated": ok,
            "dropped": len(tasks) - ok,
            "seconds": round(time.perf_counter() - started, 1),
            "tasks": reports,
        }

    def write(self, report: dict[str, Any]) -> dict[str, Any]:
        self.path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        return report


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


def family_runner(env: Any, task: Any, family: Any) -> Runner:
    """A :data:`Runner` playing ``family``'s policies (the oracle, ``noop``, adversaries) on
    ``task`` in ``env``, each episode on its own seed; only the oracle's end state is read
    (it is the one mutated)."""
    seeds = iter(range(1000))

    def runner(policy: str) -> Run:
        seed = next(seeds)
        episode = run_episode(env, family.policy(policy, seed=seed), task, seed=seed)
        result = env.last_verification or env.verify()
        state = env.state_probe().read() if policy == "oracle" else {}
        return Run(result, state, episode.total_reward, episode.actions)

    return runner


def cached_reports(
    name: str,
    tasks: list[Any],
    salt: Any,
    sources: list[Path],
    check: Callable[[Any], ValidationReport],
) -> dict[str, dict[str, Any]]:
    """Every task's validation report by id, from ``PALAESTRA_HOME/cache`` when neither the
    tasks, ``salt`` (e.g. the adversary set) nor the ``sources`` (the code that plays and
    scores them) changed since they were made; a read-only home only costs the next load."""
    from palaestra.paths import cache_dir

    key = hashlib.sha256(json.dumps(salt, sort_keys=True).encode())
    for task in tasks:
        key.update(task.model_dump_json().encode())
    for source in sorted(set(sources)):
        key.update(source.read_bytes())
    cached = cache_dir() / f"{name}-validation-{key.hexdigest()[:20]}.json"
    try:
        return dict(json.loads(cached.read_text()))
    except (OSError, ValueError):
        pass
    reports = {t.id: check(t).to_json() for t in tasks}
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")  # one writer per process
        partial.write_text(json.dumps(reports))
        partial.replace(cached)
    except OSError:
        pass
    return reports


def task_key(task: Any) -> str:
    """What a task is, as a :class:`ValidationRecord` key: a digest of all of it."""
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()[:20]
