"""A domain's database for one episode: seeded once, copied per reset.

Each (domain, seed) world is built once per process into an in-memory template; a reset copies
it with SQLite's online backup into the session's own in-memory database (well under a
millisecond for these worlds), so sessions never share state and a reset never re-seeds. The
gold world of a task (the template with the task's reference tool calls replayed) is cached the
same way, keyed by the calls.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from typing import Any

from palaestra.envs.usersim.domain import Domain, dump
from palaestra.resolve import resolve

#: name -> "module:Class", imported on first use (train pulls in the app synthesizer)
DOMAINS = {
    "airline": "palaestra.envs.usersim.domains.airline:Airline",
    "retail": "palaestra.envs.usersim.domains.retail:Retail",
    "train": "palaestra.envs.usersim.domains.train:Train",
    "hotel": "palaestra.envs.usersim.domains.hotel:Hotel",
}


@functools.cache
def domain(name: str) -> Domain:
    if name not in DOMAINS:
        raise ValueError(f"unknown usersim domain {name!r}; domains: {domain_names()}")
    return resolve(DOMAINS[name])()


def domain_names() -> list[str]:
    return sorted(DOMAINS)


@functools.cache
def _template(name: str, seed: int) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    domain(name).build(conn, seed)
    conn.commit()
    return conn


def fresh(name: str, seed: int) -> sqlite3.Connection:
    """A private copy of the seeded world."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _template(name, seed).backup(conn)
    conn.row_factory = sqlite3.Row
    return conn


def bind(args: dict[str, Any], value: Callable[[str], str]) -> dict[str, Any]:
    """Plan arguments with ``"$slot"`` (or ``"$slot:int"``) replaced by ``value(slot)``: the
    goal's fact for the gold replay, what the user said for the scripted assistant. A value
    that is not a number stays text, so the tool's schema names the mistake."""
    out = {}
    for key, arg in args.items():
        if isinstance(arg, str) and arg.startswith("$"):
            slot, _, cast = arg[1:].partition(":")
            if cast not in ("", "int"):
                raise ValueError(f"plan argument {arg!r}: the only cast is ':int'")
            arg = value(slot)
            arg = int(arg) if cast == "int" and arg.isdigit() else arg
        out[key] = arg
    return out


@functools.lru_cache(maxsize=512)
def _gold(name: str, seed: int, calls: str) -> dict[str, list[tuple]]:
    conn = fresh(name, seed)
    for call in json.loads(calls):
        domain(name).call(conn, call["name"], call["args"])
    return dump(conn)


def gold(name: str, seed: int, calls: list[dict[str, Any]]) -> dict[str, list[tuple]]:
    """The world after the reference calls; a call that fails means the task is wrong."""
    return _gold(name, seed, json.dumps(calls, sort_keys=True))
