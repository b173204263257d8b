"""The one validation runner: it plays a task's oracle, doing nothing, the mutants, the
family's adversaries and the adversary search, for every family.

:func:`validate` is the verdict: the oracle ``repeats`` times (each must pass, the runs
agreeing check for check), a do-nothing policy (must fail), the verifier re-run on each
mutation of the oracle's end state (a near miss, e.g. another seat class: each must fail),
each adversary (a cheap general strategy a reward hacker would try: each must fail, with
success false and its rewards summed at most :data:`ADVERSARY_CEILING`), then the best
strategy the adversary search (:mod:`palaestra.verifiers.search`) finds within its budget,
which must fail the same way. :func:`validate_task` plays those episodes for a task of any
family, as the family's :class:`~palaestra.verifiers.validation.ValidationPlan` declares
(which env, what to read of an end state, the mutants, the strategy space), through the one
episode loop, :func:`palaestra.policies.run_episode`.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from palaestra.family import Family
from palaestra.family import family as family_of
from palaestra.policies import Policy, run_episode
from palaestra.resolve import resolve
from palaestra.tasks import Task
from palaestra.verifiers.base import DeclarativeVerifier, VerifierResult
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import (
    ADVERSARY_CEILING,
    Mutator,
    Run,
    Runner,
    StaticProbe,
    ValidationPlan,
    ValidationReport,
)

#: how much of a winning adversary's trajectory the report keeps
_KEPT_ACTIONS, _KEPT_CHARS = 100, 300


class AdversaryAbstained(RuntimeError):
    """An adversary or strategy that ended in the oracle's own end state: it did the task, it
    did not game the verifier (reported as its error, never a win or a pass)."""


def plan_of(family: str | Family) -> ValidationPlan:
    """The family's validation plan (``Family.validation``)."""
    fam = family_of(family) if isinstance(family, str) else family
    if not fam.validation:
        raise ValueError(f"family {fam.name!r} has no validation (Family.validation)")
    plan = resolve(fam.validation)
    if not isinstance(plan, ValidationPlan):
        raise TypeError(f"{fam.validation} must be a ValidationPlan, not {type(plan).__name__}")
    return plan


def validate_task(
    task: Task,
    *,
    env: Any = None,
    adversaries: bool | Sequence[str] = True,
    repeats: int | None = None,
    search: int | None = None,
    mutations: Sequence[Mapping[str, Any]] | None = None,
) -> ValidationReport:
    """Execution-validate one task of any family: its episodes in ``env`` (the plan opens one
    when None), ``adversaries`` all of the family's (True), none (False) or those named, then
    (with them) ``search`` episodes of adversary search (the plan's budget when None; 0:
    none). ``mutations`` default to the plan's (a task still being made passes its own)."""
    fam = family_of(task.family)
    plan = plan_of(fam)
    chosen = plan.mutations(task) if mutations is None else list(mutations)
    task = plan.prepare(task)
    names = fam.adversary_names() if adversaries is True else list(adversaries or ())
    budget = plan.budget if search is None else search
    own = env is None
    env = plan.open() if own else env
    try:
        with tempfile.TemporaryDirectory(prefix="palaestra-validate-") as scratch:
            episodes = Episodes(fam, plan, task, env, Path(scratch))
            searched = plan.search(task, episodes.search, budget) if names and budget else None
            return validate(
                task.verifier,
                episodes.run,
                chosen,
                plan.mutate(task),
                repeats=plan.repeats if repeats is None else repeats,
                adversaries=names,
                search=searched,
                references=episodes.references,
            )
    finally:
        if own and env is not None:
            env.close()


class Episodes:
    """A task's validation episodes, as its family's plan says to play them: named policies
    (:meth:`run`, a :data:`Runner`) and the search's strategies (:meth:`search`)."""

    def __init__(
        self, family: Family, plan: ValidationPlan, task: Task, env: Any, scratch: Path
    ) -> None:
        self.family, self.plan, self.task, self.env, self.scratch = family, plan, task, env, scratch
        self.seeds = itertools.count()
        self.idle: Run | None = None  # the do-nothing episode
        self.reference: list[str | None] = []  # the oracle's end state, when abstains count
        self.references = tuple(plan.references(task))  # further solutions, played as oracles

    def run(self, name: str) -> Run:
        role = "oracle" if name in self.references else name
        role = role if role in ("oracle", "noop") else "adversary"
        if role == "adversary" and self.idle and self.plan.plays_as_noop(self.task, name):
            return self.idle
        seed = next(self.seeds) if self.plan.seeded else 0
        options = {"seed": seed} if self.plan.seeded else {}
        return self.play(self.family.policy(name, **options), role, name, seed)

    def search(self, policy: Policy) -> Run:
        return self.play(policy, "search", "search", 0)

    def play(self, policy: Policy, role: str, name: str, seed: int) -> Run:
        plan, task = self.plan, self.task
        with plan.env(self.env, task, name) as env:
            episode = run_episode(
                env,
                policy,
                task,
                seed=seed,
                strict=role in plan.strict,
                max_steps=plan.max_steps(task, role),
            )
            result = env.last_verification or env.verify()
            state = plan.end_state(env, task, role, self.scratch)
            played = Run(result, state, episode.total_reward, episode.actions)
            if plan.abstains:
                self._abstained(env, role, name, played)
        if role == "noop":
            self.idle = played
        return played

    def _abstained(self, env: Any, role: str, name: str, played: Run) -> None:
        if role == "oracle":
            if not self.reference:  # the first oracle run's end state
                self.reference.append(self.plan.end_digest(env, self.task, played.state))
            return
        done = self.reference[0] if self.reference else None
        if (
            role in self.plan.abstains
            and played.result.success
            and done is not None
            and self.plan.end_digest(env, self.task, played.state) == done
        ):
            raise AdversaryAbstained(
                f"{name} ended in the oracle's own end state: the task done, not the verifier gamed"
            )


def _signature(result: VerifierResult) -> list[tuple[str, bool, str]]:
    return [(c.kind, c.passed, c.detail) for c in result.checks]


def validate(
    verifier: Mapping[str, Any],
    run: Runner,
    mutations: Sequence[Mapping[str, Any]],
    mutate: Mutator,
    repeats: int = 3,
    adversaries: Sequence[str] = (),
    search: Search | None = None,
    references: Sequence[str] = (),
) -> ValidationReport:
    """The verdict over a task's episodes (``run(name)`` plays one): the first failure is the
    report's reason. ``references`` (further solutions, e.g. a code one beside the GUI one)
    each play once after the oracle's runs and must pass; their scores follow the oracle's."""
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
    for name in references:
        try:
            result = run(name).result
        except Exception as exc:
            return reject(f"reference {name!r} crashed: {type(exc).__name__}: {exc}")
        report.oracle_scores.append(result.score)
        if not result.success:
            failed = [c.detail for c in result.checks if not c.passed] or [result.error or ""]
            return reject(f"reference {name!r} failed: {'; '.join(failed)[:300]}")
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
    if search is not None:
        report.search = found = search.run(ADVERSARY_CEILING)
        if found["played"] and len(found["errors"]) == found["played"]:
            # crashes prove nothing either way: a search that played nothing is no pass
            return reject(f"adversary search played no strategy: {found['errors'][0]}")
        if found["won"]:
            best = found["best"]
            return reject(
                f"adversary search found {best['strategy']!r}, which beats the verifier "
                f"(success {best['success']}, reward {best['reward']:.3f})"
            )
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
