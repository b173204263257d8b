"""Usersim suites: drafts from each domain's generator, made into Tasks and validated by running.

A draft is a goal, a reference plan (questions, tool calls, confirmations, what to tell) and
decoy values. From it come the task's verifier (the gold world is the reference plan's write
calls replayed with the goal's values; the facts the plan tells; a refusal when the rules forbid
the request, with its evidence: the plan's last lookup and the rule its reason names; no rule
broken) and its oracle (``{"policy": "competent", "data": <the plan>}``: the plan, played by
the competent scripted assistant, which must learn each value from the simulated user). A task
is kept only if it validates (:mod:`palaestra.envs.usersim.validation`: the oracle three times
under three personas, doing nothing, the mutants, every adversary, the adversary search).

The shipped suite (``usersim``) is generated from fixed seeds; its last full validation run is
recorded beside this file (``validation.json``, :data:`RECORD`: every task's report, a dropped
one's reason and the winning adversary's trajectory), so a load costs no episode and lists the
tasks recorded as validated with the same key.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.dialogue.tasks import TaskForm
from palaestra.envs.runtimes.simuser import lexicon
from palaestra.envs.runtimes.simuser.domain import same_value
from palaestra.envs.usersim import reasons, world
from palaestra.envs.usersim.domain import Domain, rng
from palaestra.tasks import Oracle, Suite, Task
from palaestra.verifiers.validation import ValidationRecord, task_key

ENV_ID = "palaestra/usersim-v0"
WORLD_SEED = 7
PER_DOMAIN = 40
MAX_STEPS = 30
#: what every usersim task says alike (the dialogue runtime's brief and public metadata)
FORM = TaskForm(
    family="usersim",
    env=ENV_ID,
    source="palaestra usersim generator",
    party="customer",
    max_steps=MAX_STEPS,
)


def make_task(domain_name: str, seed: int, draft: dict[str, Any]) -> Task:
    dom = world.domain(domain_name)
    goal = draft["goal"]
    plan = draft["plan"]
    # the user opens with the phrase: every value it states must be the goal's
    for slot, found in lexicon.of(dom).slot_values(goal["phrase"]).items():
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
    # the intent stays out of the id: it is private, as the grant-or-refuse it goes with; no
    # public difficulty: it would be the reference plan's length, which a refusal's shortens
    return FORM.task(
        f"{domain_name}-{digest}",
        domain_name,
        f"{dom.title} customer-service assistant",
        setup={
            "domain": domain_name,
            "seed": seed,
            "goal": goal,
            "decoys": draft.get("decoys", {}),
        },
        verifier={"kind": "all", "checks": checks},
        metadata={
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


@functools.cache
def suite() -> Suite:
    """Every domain's generated tasks the recorded run validated, each with its report."""
    return Suite(
        name="usersim",
        description="Customer-service dialogues (airline, retail, train, hotel) with a "
        "simulated user; every task validated by its reference plan and against the "
        "family's adversaries",
        tasks=RECORD.validated(all_tasks()),
    )


def all_tasks() -> list[Task]:
    """Every domain's generated tasks, validated or not (the record's candidates)."""
    return [task for name in world.domain_names() for task in generate(name)]


#: the last full validation run, kept beside this file and keyed by each task's whole content:
#: a task changed since the run is left out until the next (``palaestra validate usersim
#: --record``; how a task is validated is :mod:`palaestra.envs.usersim.validation`)
RECORD = ValidationRecord(
    path=Path(__file__).with_name("validation.json"),
    suite="usersim",
    key=task_key,
    family="usersim",
    candidates="palaestra.envs.usersim.suites:all_tasks",
)
