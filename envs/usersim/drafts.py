"""The steps every domain's task drafts are made of, written once.

A draft's plan is read by the competent assistant and replayed for the gold world, and the env
holds every domain to the same rules (a write needs the user's yes to the message before it; a
request the rules forbid is settled by saying so). These are those rules as plan steps, so no
domain can write them slightly differently.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from palaestra.envs.usersim.domain import rows

Steps = list[dict[str, Any]]


def lookup(slot: str, tool: str, arg: str = "") -> Steps:
    """Ask the user for ``slot`` and look it up with ``tool`` (its argument ``arg``, by default
    named as the slot): the assistant never guesses an id."""
    return [{"ask": slot}, {"call": tool, "args": {arg or slot: f"${slot}"}}]


def write(confirm: str, call: str, args: dict[str, Any], tell: str, facts: list[str]) -> Steps:
    """A write as the rules allow it: proposed, agreed to, made, and its outcome told."""
    return [{"confirm": confirm}, {"call": call, "args": args}, {"tell": tell, "facts": facts}]


def goal(
    intent: str, phrase: str, facts: dict[str, str], requests: list[str], action: bool = True
) -> dict[str, Any]:
    """The user's goal as a task keeps it, for :meth:`Goal.from_json` to read back: ``phrase``
    completes "I need to ...", ``facts`` are what the user knows and ``requests`` what it wants
    told. ``action`` False: a question only, settled once it is answered."""
    out: dict[str, Any] = {"intent": intent, "phrase": phrase, "facts": facts, "requests": requests}
    if not action:
        out["action"] = False
    return out


def draft(key: str, goal: dict[str, Any], plan: Steps, decoys: dict[str, str]) -> dict[str, Any]:
    """What a maker hands :func:`palaestra.envs.usersim.suites.make_task`. ``key`` tells drafts
    apart; ``decoys`` are wrong values for the wrong assistant to offer."""
    return {"key": key, "goal": goal, "plan": plan, "decoys": decoys}


def refused(
    key: str, goal: dict[str, Any], plan: Steps, tell: str, decoys: dict[str, str]
) -> dict[str, Any]:
    """A draft the rules forbid: the plan finds out why and ends by telling the user, and the
    goal says so, so that a clear refusal is the right outcome and any write a wrong one."""
    return draft(key, {**goal, "grantable": False}, [*plan, {"tell": tell}], decoys)


def sorry(text: str) -> str:
    """The refusal the act reader hears as one ("cannot")."""
    return f"I'm sorry, but I cannot {text}."


def other_id(conn: sqlite3.Connection, table: str, column: str, value: str) -> str:
    """A decoy: the first other ``column`` value of ``table``, a real id that is not the user's."""
    found = rows(
        conn,
        f"SELECT {column} FROM {table} WHERE {column} != ? ORDER BY {column} LIMIT 1",
        value,
    )
    return found[0][column]
