"""Check kinds for dialogue worlds (usersim): end state, what was said, rules kept.

The probe's state carries ``db`` (every table's rows at the end), ``gold`` (a function giving
the rows after the task's reference tool calls, replayed on a fresh copy of the same seeded
world), ``said`` (the assistant's messages), ``act_kinds`` (a function reading one message into
the kinds of its dialogue acts, with the same reader the simulated user hears it with),
``violations`` (rule-breaking attempts the env recorded) and ``user_outcome``. Both functions
come with the state, so these checks import nothing from the env. Facts are matched as people
write them: numbers by value ("$230", "230.00"), everything else case-insensitively.
"""

from __future__ import annotations

import re
from typing import Any

from palaestra.verifiers.base import CheckResult, StateProbe, check_kind

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
#: the act kind ``act_kinds`` gives a sentence that refuses ("unfortunately ... cannot")
REFUSE = "refuse"


def _said(texts: list[str], fact: str) -> bool:
    try:
        want = float(fact.replace(",", ""))
    except ValueError:
        return any(fact.lower() in t.lower() for t in texts)
    for text in texts:
        for m in _NUMBER.finditer(text):
            try:
                if abs(float(m.group(0).replace(",", "")) - want) < 0.005:
                    return True
            except ValueError:
                continue
    return False


@check_kind("usersim_db")
def _db(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The final database equals the gold one, table by table."""
    state = probe.read()
    gold = state["gold"](spec["calls"])
    db = state["db"]
    differ = [t for t in sorted(set(gold) | set(db)) if gold.get(t) != db.get(t)]
    if not differ:
        return CheckResult("usersim_db", True, 1.0, "database matches the gold replay")
    detail = "; ".join(
        f"{t}: {len(set(map(tuple, db.get(t, []))) ^ set(map(tuple, gold.get(t, []))))} row(s) "
        "differ"
        for t in differ
    )
    return CheckResult("usersim_db", False, 0.0, f"database differs from the gold: {detail}")


@check_kind("usersim_told")
def _told(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Each fact the user had to learn appears in an assistant message (partial credit)."""
    said = probe.read()["said"]
    facts = list(spec["facts"])
    told = [f for f in facts if _said(said, str(f))]
    score = len(told) / len(facts) if facts else 1.0
    return CheckResult(
        "usersim_told", len(told) == len(facts), score, f"{len(told)}/{len(facts)} fact(s) told"
    )


@check_kind("usersim_refused")
def _refused(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The request could not be granted: the assistant must have said so clearly."""
    state = probe.read()
    refused = any(REFUSE in state["act_kinds"](text) for text in state["said"])
    return CheckResult(
        "usersim_refused",
        refused,
        1.0 if refused else 0.0,
        "the assistant refused" if refused else "no refusal was said",
    )


@check_kind("usersim_rules")
def _rules(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """No written rule was broken (or attempted against the tools' refusal)."""
    broken = probe.read()["violations"]
    if not broken:
        return CheckResult("usersim_rules", True, 1.0, "no rule broken")
    return CheckResult("usersim_rules", False, 0.0, f"{len(broken)} rule violation(s): {broken[0]}")
