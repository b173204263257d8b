"""Usersim suites: drafts from each domain's generator, made into Tasks and validated by running.

A draft is a goal, a reference plan (questions, tool calls, confirmations, what to tell) and
decoy values. From it come the task's verifier (the gold world is the reference plan's write
calls replayed with the goal's values; the facts the plan tells; a refusal when the rules forbid
the request, with its evidence: the plan's last lookup and the rule its reason names; no rule
broken) and its oracle (``{"policy": "competent", "data": <the plan>}``: the plan, played by
the competent scripted assistant, which must learn each value from the simulated user). A task
is kept only if that oracle passes three times under three personas, ending at once scores
zero, the verifier rejects three mutated end states (a rule broken, nothing said, a database
off by one row; for a refusal, the same words with no lookup logged), every adversary of the
family fails it (``policies.ADVERSARIES``), and so does the best strategy the adversary search
finds in :mod:`palaestra.envs.runtimes.dialogue.search` within its budget.

The shipped suite (``usersim``) is generated from fixed seeds and validated the first time it is
loaded (about 8 s of CPU); the reports are cached under ``PALAESTRA_HOME/cache``, keyed by the
tasks, the adversary set and the code that plays and scores them, and kept on every task; a
dropped task's report (the reason, the winning adversary's trajectory) is in
:func:`validate_suite`'s report.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra.envs import runtimes
from palaestra.envs.runtimes.dialogue import search as strategies
from palaestra.envs.runtimes.simuser.domain import same_value
from palaestra.envs.usersim import FAMILY, reasons, world
from palaestra.envs.usersim.domain import Domain, rng
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.paths import cache_dir
from palaestra.tasks import Oracle, PublicMetadata, Suite, Task
from palaestra.verifiers import usersim as checks
from palaestra.verifiers.validation import (
    ValidationRecord,
    ValidationReport,
    cached_reports,
    family_runner,
    play,
    task_key,
    validate,
)

ENV_ID = "palaestra/usersim-v0"
WORLD_SEED = 7
PER_DOMAIN = 40
MAX_STEPS = 30
MUTATIONS = [{"name": "rule_broken"}, {"name": "said_nothing"}, {"name": "extra_row"}]
#: a refusal's mutant: the same words, with no lookup in the tool-call log
LOOKED_NOWHERE = {"name": "looked_nowhere"}


def make_task(domain_name: str, seed: int, draft: dict[str, Any]) -> Task:
    dom = world.domain(domain_name)
    goal = draft["goal"]
    plan = draft["plan"]
    for slot, found in dom.slot_values(goal["phrase"]).items():  # the user opens with these
        if any(not same_value(v, goal["facts"].get(slot, "")) for v in found):
            raise ValueError(f"{draft['key']}: the goal's phrase states a {slot} it does not hold")
    calls = [
        {"name": s["call"], "args": world.bind(s["args"], goal["facts"].__getitem__)}
        for s in plan
        if "call" in s and dom.tools[s["call"]].writes
    ]
    facts = [f for s in plan for f in s.get("facts", [])]
    grantable = goal.get("grantable", True)
    # an unchanged world is what doing nothing gives: where it is the goal, it earns no credit
    checks: list[dict[str, Any]] = [{"kind": "usersim_db", "calls": calls, "gate": not calls}]
    if not grantable:
        checks.append(refusal(dom, goal, plan))
    if facts:
        # the outcome of a write is told of the world: words alone (a refund told, a "done")
        # earn nothing while the world is not the gold one
        told: dict[str, Any] = {"kind": "usersim_told", "facts": facts}
        checks.append({**told, "calls": calls} if calls else told)
    checks.append({"kind": "usersim_rules", "gate": True})
    digest = hashlib.sha256(draft["key"].encode()).hexdigest()[:6]
    return Task(
        # the intent stays out of the id: it is private, as the grant-or-refuse it goes with
        id=f"{domain_name}-{digest}",
        family="usersim",
        env=ENV_ID,
        instruction=f"You are the {dom.title} customer-service assistant. Help the customer "
        "with their request, following the policy. Use the tools; ask the customer for what "
        "you need.",
        setup={
            "domain": domain_name,
            "seed": seed,
            "goal": goal,
            "decoys": draft.get("decoys", {}),
        },
        verifier={"kind": "all", "checks": checks},
        max_steps=MAX_STEPS,
        # no difficulty: it would be the reference plan's length, which a refusal's shortens
        public=PublicMetadata(domain=domain_name),
        metadata={
            "source": "palaestra usersim generator",
            "domain": domain_name,
            "intent": goal["intent"],
            "grantable": grantable,
            "difficulty": "hard" if len(plan) > 5 else "medium",
        },
        oracle=Oracle(policy="competent", data=plan),
    )


def refusal(dom: Domain, goal: dict[str, Any], plan: list[dict[str, Any]]) -> dict[str, Any]:
    """The refusal check of an ungrantable draft: its evidence is the plan's last lookup (the
    call that finds what blocks the request), made by the agent with the goal's values, and
    its reason the rule the plan's refusal gives (:mod:`palaestra.envs.usersim.reasons`)."""
    lookups = [
        {"name": s["call"], "args": world.bind(s["args"], goal["facts"].__getitem__)}
        for s in plan
        if "call" in s and not dom.tools[s["call"]].writes
    ]
    return {
        "kind": "usersim_refused",
        "looked": lookups[-1:],
        **reasons.reason(plan[-1]["tell"], dom.today),
        "policy": reasons.policy_rules(dom.policy),
    }


def drafts(dom: Domain, seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` task drafts (goal, reference plan, decoys), unique by key, from the world
    seeded with ``seed``: the domain's makers take turns, and one with nothing to offer is
    skipped."""
    conn = world.fresh(dom.name, seed)
    r = rng(seed, dom.name, "tasks")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    refused = tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        maker = dom.makers[(len(out) + tries // 10) % len(dom.makers)]
        if dom.refuse_share is None:
            draft = maker(dom, conn, r)
        else:
            draft = maker(dom, conn, r, refused < round(dom.refuse_share * (len(out) + 1)))
        if draft and draft["key"] not in seen:
            seen.add(draft["key"])
            out.append(draft)
            refused += not draft["goal"].get("grantable", True)
    conn.close()
    return out


def generate(domain_name: str, seed: int = WORLD_SEED, count: int = PER_DOMAIN) -> list[Task]:
    found = drafts(world.domain(domain_name), seed, count)
    return [make_task(domain_name, seed, d) for d in found]


def validate_task(
    task: Task,
    env: Any | None = None,
    *,
    adversaries: bool = True,
    search: int = strategies.BUDGET,
) -> ValidationReport:
    """Execution-validate one task: its oracle, doing nothing, the mutants, and (unless
    ``adversaries`` is False) every adversary of the family, each of which must fail, then
    the adversary search (``search`` episodes of :mod:`~palaestra.envs.runtimes.dialogue.search`;
    0: none), whose best strategy must fail too."""
    env = env or UserSimEnv()
    runner = family_runner(env, task, FAMILY)
    against = FAMILY.adversary_names() if adversaries else ()
    refusal = not task.metadata.get("grantable", True)
    mutations = [*MUTATIONS, LOOKED_NOWHERE] if refusal else MUTATIONS
    searched = None
    if adversaries and search:
        searched = strategies.search_for(task, lambda p: play(env, task, p, strict=False), search)
    return validate(task.verifier, runner, mutations, _mutate, adversaries=against, search=searched)


@contextlib.contextmanager
def _mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
    out = dict(state)
    if mutation["name"] == "rule_broken":
        out["violations"] = [*state["violations"], "a write without the user's confirmation"]
    elif mutation["name"] == "said_nothing":
        out["said"] = []
    elif mutation["name"] == "looked_nowhere":
        out["calls"] = []
    else:
        db = {t: list(rows) for t, rows in state["db"].items()}
        table = sorted(db)[0]
        db[table] = [*db[table], ("mutant",)]
        out["db"] = db
    yield out


@functools.cache
def suite() -> Suite:
    """Every domain's generated tasks that validate, each with its validation report."""
    tasks = _generated()
    reports = _reports(tasks)
    return Suite(
        name="usersim",
        description="Customer-service dialogues (airline, retail, train, hotel) with a "
        "simulated user; every task validated by its reference plan and against the "
        "family's adversaries",
        tasks=[
            t.model_copy(update={"validation": reports[t.id]})
            for t in tasks
            if reports[t.id]["validated"]
        ],
    )


def validate_suite(tasks: list[Task] | None = None, *, adversaries: bool = True) -> dict[str, Any]:
    """Execution-validate ``tasks`` (every generated task by default, dropped ones included)
    with or without the adversaries: the report ``palaestra validate usersim`` prints, each
    task's report (a dropped one's reason, each adversary's result) under ``tasks``."""
    chosen = tasks if tasks is not None else _generated()
    env = UserSimEnv()
    record = ValidationRecord(cache_dir() / "usersim-validation.json", "usersim", task_key)
    try:
        return record.run(chosen, lambda t: validate_task(t, env, adversaries=adversaries))
    finally:
        env.close()


def _generated() -> list[Task]:
    return [task for name in world.domain_names() for task in generate(name)]


def _reports(tasks: list[Task]) -> dict[str, dict[str, Any]]:
    """Validation reports, cached by the tasks, the adversaries and the code that plays and
    scores them (this package, the simulated user and dialogue runtimes, the usersim checks)."""
    here = Path(__file__).parent
    shared = [Path(runtimes.__file__).parent / name for name in ("simuser", "dialogue")]
    sources = [
        *here.glob("*.py"),
        *(here / "domains").rglob("*.py"),
        *(p for folder in shared for p in folder.rglob("*.py")),
    ]
    env = UserSimEnv()
    try:
        return cached_reports(
            "usersim",
            tasks,
            [FAMILY.adversary_names(), strategies.BUDGET],
            [*sources, Path(checks.__file__)],
            lambda t: validate_task(t, env),
        )
    finally:
        env.close()
