"""Execution validation of computer tasks with the generic ``verifiers.validation.validate``.

Runs are real episodes of :class:`ComputerEnv`, one env reused across runs (each run is a
reset, as for an agent), each played by a policy of :mod:`palaestra.envs.computer.policies`:
the task's oracle (``replay`` of its action list) twice (must pass and agree check for check),
``noop`` (no action at all, then the verifier) must fail, and so must every adversary of
``ADVERSARIES`` (spoofed windows and processes, code for a GUI claim, a claimed success, the
last step repeated), played leniently (an action the env refuses is the adversary's loss), then
the adversary search of :mod:`palaestra.envs.computer.strategies` (hollow outputs, refusals in
the instruction's words) within its budget. End
states are files on a live desktop, so there are no snapshot mutants; the do-nothing run plays
that part. The suite records the last full run (:func:`write_validation`) in
``validation.json``; the OSWorld loader records its own (``osworld_validation.json``).
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

from palaestra.envs.computer import osworld, strategies
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.policies import ADVERSARIES, POLICIES
from palaestra.envs.computer.suites import RECORD, all_tasks
from palaestra.tasks import Task
from palaestra.verifiers.validation import (
    Run,
    ValidationRecord,
    ValidationReport,
    play,
    validate,
)


def validate_task(
    env: Any,
    task: Task,
    repeats: int = 2,
    adversaries: bool = True,
    search: int = strategies.BUDGET,
) -> ValidationReport:
    """One task's report; with the adversaries, ``search`` episodes of adversary search over
    :mod:`palaestra.envs.computer.strategies` too (0: none)."""

    done: list[str] = []  # the named paths' state after the oracle

    def run(name: str) -> Run:
        if name in ADVERSARIES:
            return play(env, task, ADVERSARIES[name](), strict=False)
        if name == "oracle":  # the policy the task's oracle names, fed its data
            played = play(env, task, POLICIES[task.oracle.policy if task.oracle else "replay"]())
            done[:] = [strategies.named_state(env.state_probe(), task)]
            return played
        return play(env, task, POLICIES[name]())

    def search_play(policy: Any) -> Run:
        played = play(env, task, policy, strict=False)
        ended = played.result.success and done
        if ended and strategies.named_state(env.state_probe(), task) == done[0]:
            raise AdversaryAbstained(
                "the strategy ended where the oracle ends: the task done, not the verifier gamed"
            )
        return played

    names = list(ADVERSARIES) if adversaries else []
    searched = None
    if adversaries and search:
        searched = strategies.search_for(task, search_play, search)
    return validate(
        task.verifier,
        run,
        [],
        lambda s, m: nullcontext(s),
        repeats=repeats,
        adversaries=names,
        search=searched,
    )


class AdversaryAbstained(RuntimeError):
    """A search strategy that ended in the oracle's own end state: reported as an error."""


def validate_with(
    record: ValidationRecord, tasks: list[Task], *, adversaries: bool = True, repeats: int = 2
) -> dict[str, Any]:
    """``tasks`` validated in one env (``record.run``'s report)."""
    env = ComputerEnv()
    try:
        return record.run(tasks, lambda task: validate_task(env, task, repeats, adversaries))
    finally:
        env.close()


def validate_suite(
    tasks: list[Task] | None = None, *, adversaries: bool = True, repeats: int = 2
) -> dict[str, Any]:
    """The family's validation entry (``Family.validation``): the given tasks (OSWorld's
    are reported under their own suite), or every built-in one."""
    chosen = tasks if tasks is not None else all_tasks()
    osw = bool(chosen) and all("osworld" in t.metadata.get("tags", []) for t in chosen)
    record = osworld.RECORD if osw else RECORD
    return validate_with(record, chosen, adversaries=adversaries, repeats=repeats)


def write_validation() -> dict[str, Any]:
    """Validate every built-in task and record it beside the suite (``validation.json``)."""
    return RECORD.write(validate_suite())


def write_osworld_validation(folder: Path | None = None) -> dict[str, Any]:
    """Validate the OSWorld tasks that convert and have a reference solution of ours, and
    record it (``osworld_validation.json``): only these are listed runnable."""
    return osworld.RECORD.write(validate_with(osworld.RECORD, osworld.candidates(folder)))
