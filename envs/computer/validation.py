"""How computer tasks are validated (``Family.validation``): a plan the validation service plays.

Episodes are real ones of :class:`ComputerEnv`, one env reused across a thread's tasks (each
episode is a reset, as for an agent): the task's oracle (``replay`` of its action list) twice
(must pass and agree check for check), ``noop`` (no action at all, then the verifier) must
fail, and so must every adversary of ``ADVERSARIES`` (spoofed windows and processes, code for
a GUI claim, a claimed success, the last step repeated), played leniently (an action the env
refuses is the adversary's loss), then the adversary search of
:mod:`palaestra.envs.computer.strategies` (hollow outputs, refusals in the instruction's words)
within its budget; a strategy that ends where the oracle ends (the paths the instruction names
hold the same) did the task, and abstains. End states are files on a live desktop, so there are
no snapshot mutants; the do-nothing run plays that part. ``palaestra validate computer-basic
--record`` records the last full run in ``validation.json``; ``osworld-os`` (the OSWorld
tasks with a reference solution of ours) records its own (``osworld_validation.json``).

Office tasks (:mod:`palaestra.envs.computer.office.suite`) play their GUI oracle twice and
their code solution once (a reference: it must pass too), then doing nothing, the desktop's
adversaries (those with nothing to try on a document, a bare ``done()`` or refusal where no
check reads the agent's status, count as the do-nothing run instead of paying for a reset),
the office adversaries (:mod:`palaestra.envs.computer.office.strategies`: the document saved
unchanged, hollow, with wrong content, in another format) and the office strategy space;
each app records its own run (``office/validation_<app>.json``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from palaestra.envs.computer import osworld, strategies
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.office import strategies as office_strategies
from palaestra.envs.computer.office import suite as office
from palaestra.envs.computer.policies import ADVERSARIES, CODE_ACTIONS, _name, _parsed, checks
from palaestra.envs.computer.suites import RECORD, all_tasks
from palaestra.policies import Policy, ScriptPolicy
from palaestra.tasks import Task
from palaestra.verifiers.search import Search
from palaestra.verifiers.validation import Run, ValidationPlan, ValidationRecord

#: the check kinds that read a saved document and nothing of the screen or the processes
DOCUMENT_KINDS = ("spreadsheet", "text_document", "presentation")
#: an office task's episodes that touch nothing on screen when its code solution is code only
#: (that solution, doing nothing, the code-only adversaries, the search: its strategies are code)
BARE = ("code_oracle", "noop", "hollow_document", "format_dodge", "wrong_content", "search")


#: keys that save no document on a desktop where no dialog is open (no Ctrl+S, no menu)
_HARMLESS_KEYS = ("Return", "Escape", "Tab", "Up", "Down", "Left", "Right")


def _saves_nothing(action: Any) -> bool:
    """An action that cannot save a document (no code, no click that could reach a Save
    button, no Ctrl+S or menu): an end, a pause, a key of :data:`_HARMLESS_KEYS`."""
    found = _parsed(action)
    if found is None:
        return False
    if found.name in ("done", "fail", "wait"):
        return True
    return found.name == "key" and str(found.args.get("combo")) in _HARMLESS_KEYS


class WithoutApps:
    """The shared env, reset onto a task's documents without starting its apps: for an
    episode that never touches the screen, of a task whose checks read only saved documents,
    the home it leaves is the same, and LibreOffice's start (4-7 s of a 5-8 s reset, against
    0.7 s without it) is not paid for nothing."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        task = (options or {}).get("task")
        if isinstance(task, Task):
            setup = {k: v for k, v in task.setup.items() if k != "apps"}
            options = {**(options or {}), "task": task.model_copy(update={"setup": setup})}
        return self.env.reset(seed=seed, options=options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


def bare(task: Task) -> bool:
    """Whether an office task's screen-free episodes may play without its app: it has a code
    solution of code actions only (the adversaries built on it need no app) and every check
    reads a saved document."""
    code = task.metadata.get("code_oracle") or []
    kinds = [c.get("kind") for c in task.verifier.get("checks", [task.verifier])]
    return (
        office.is_office(task)
        and bool(code)
        and all(_name(a) in CODE_ACTIONS for a in code)
        and all(k in DOCUMENT_KINDS for k in kinds)
    )


class ComputerPlan(ValidationPlan):
    repeats = 2
    budget = strategies.BUDGET
    abstains = ("search",)

    def candidates(self) -> list[Task]:
        return [*all_tasks(), *office.all_tasks()]

    def record(self, tasks: list[Task]) -> ValidationRecord:
        """OSWorld's tasks and each office app's report under their own suites."""
        if tasks and all(office.is_office(t) for t in tasks):
            return office.record_for(tasks)
        osw = bool(tasks) and all("osworld" in t.metadata.get("tags", []) for t in tasks)
        return osworld.RECORD if osw else RECORD

    def open(self) -> ComputerEnv:
        return ComputerEnv()

    def env(self, shared: Any, task: Task, name: str) -> AbstractContextManager[Any]:
        """The shared desktop; for an office task's screen-free episodes, without its app."""
        return nullcontext(WithoutApps(shared) if name in BARE and bare(task) else shared)

    def references(self, task: Task) -> tuple[str, ...]:
        """An office task's code solution, played once beside its GUI oracle's runs."""
        return ("code_oracle",) if task.metadata.get("code_oracle") else ()

    def plays_as_noop(self, task: Task, adversary: str) -> bool:
        """An office adversary on any other task; on an office task, a desktop adversary whose
        script can save nothing (it only ends the episode, waits, or presses keys that move or
        confirm, with no dialog open at the start: ``repeat_last`` of a GUI solution ending in
        "keep the format", Return) where no check reads how the agent ended: the documents stay
        as set up, which is the do-nothing episode's end."""
        if adversary in office_strategies.ADVERSARIES:
            return not office.is_office(task)
        if not office.is_office(task) or adversary not in ADVERSARIES:
            return False
        if any(True for _ in checks(task.verifier, "agent_status")):
            return False
        policy = ADVERSARIES[adversary]()
        if not isinstance(policy, ScriptPolicy):
            return False
        policy.reset(task)
        return all(_saves_nothing(a) for a in policy.actions)

    def end_digest(self, env: Any, task: Task, state: Mapping[str, Any]) -> str:
        """The kind and content of every path the instruction names (an office task's
        documents: those named, else the open one)."""
        paths = office_strategies.documents(task) if office.is_office(task) else None
        return strategies.named_state(env.state_probe(), task, paths)

    def search(self, task: Task, play: Callable[[Policy], Run], budget: int) -> Search:
        if office.is_office(task):
            return office_strategies.search_for(task, play, min(budget, office_strategies.BUDGET))
        return strategies.search_for(task, play, budget)


PLAN = ComputerPlan()
