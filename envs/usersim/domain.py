"""What a customer-service domain is: a seeded SQLite world, tools over it, rules, and slots.

A domain is data plus small functions. Its tools (:mod:`palaestra.envs.usersim.tools`) take JSON
arguments checked against their JSON Schema before they run, so an agent's malformed call is
answered with the schema's own complaint and never reaches the database. A tool refuses what
the written policy forbids by raising :class:`RuleBroken` (the episode goes on, the refusal is
logged as a violation for the verifier) and reports lookups that fail with :class:`DomainError`
(an honest miss, not a violation).

Slots (the vocabulary the simulated user and the dialogue-act reader share) and the simulated
user itself are the shared runtime :mod:`palaestra.envs.runtimes.simuser`; a domain here is that
language plus the world it talks about.
"""

from __future__ import annotations

import functools
import json
import random
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from palaestra.envs.runtimes.simuser import domain as simuser
from palaestra.envs.usersim.tools import DomainError, RuleBroken, Tool


@dataclass(frozen=True)
class Intent:
    """Something a user comes for; ``phrase`` completes "I'd like to ..."."""

    name: str
    phrase: str


class Domain(simuser.Domain):
    """A domain's world and language (its slots and requests, what the simulated user knows).
    Subclasses fill the class attributes and ``populate`` (or ``build``, for a world that is
    made elsewhere and copied in)."""

    title: ClassVar[str] = ""
    policy: str = ""  # the class's text, or one instance's (written when it is made)
    tools: ClassVar[dict[str, Tool]] = {}

    #: the world's today (ISO), where a rule counts days from it: a refusal may then say "today"
    today: ClassVar[str | None] = None

    #: the SQL that creates the world's tables
    schema: ClassVar[str] = ""

    def build(self, conn: sqlite3.Connection, seed: int) -> None:
        """Create and seed the tables, reproducibly from ``seed``."""
        conn.executescript(self.schema)
        self.populate(conn, rng(seed, self.name))

    def populate(self, conn: sqlite3.Connection, r: random.Random) -> None:
        """Fill the new tables, drawing only from ``r`` (the world's own generator)."""
        raise NotImplementedError

    #: draft makers ``(domain, conn, rng[, refuse]) -> draft | None``, asked in turn by
    #: :func:`palaestra.envs.usersim.suites.drafts`
    makers: ClassVar[tuple[Callable[..., dict[str, Any] | None], ...]] = ()
    #: when set, makers also take ``refuse`` and are asked for ungrantable drafts until this
    #: share of the tasks is reached; otherwise the data decides which requests are grantable
    refuse_share: ClassVar[float | None] = None

    def trial(self, conn: sqlite3.Connection, name: str, arguments: dict[str, Any]) -> Any:
        """What a tool would answer (or the rule it would break), found on a scratch copy, so a
        reference plan tells the truth: the reference a booking gets, the refund it gives."""
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        conn.backup(scratch)
        scratch.row_factory = sqlite3.Row
        try:
            return self.call(scratch, name, arguments)
        except RuleBroken as exc:
            return exc
        finally:
            scratch.close()

    # ----- shared helpers -------------------------------------------------------------------
    def call(self, conn: sqlite3.Connection, name: str, arguments: Any) -> Any:
        """Run a tool inside a savepoint: a tool that fails changes nothing."""
        tool = self.tools.get(name)
        if tool is None:
            raise DomainError(f"unknown tool {name!r}; tools: {', '.join(self.tools)}")
        args = tool.check(arguments)
        conn.execute("SAVEPOINT tool")
        try:
            result = tool.fn(conn, args)
        except BaseException:
            conn.execute("ROLLBACK TO tool")
            conn.execute("RELEASE tool")
            raise
        conn.execute("RELEASE tool")
        return result

    @functools.cached_property
    def tools_json(self) -> str:
        """The tools as the observation shows them; the same text every step, so made once."""
        return json.dumps([t.schema() for t in self.tools.values()])


def rows(conn: sqlite3.Connection, query: str, *args: Any) -> list[dict[str, Any]]:
    cur = conn.execute(query, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def one(conn: sqlite3.Connection, query: str, *args: Any, missing: str) -> dict[str, Any]:
    found = rows(conn, query, *args)
    if not found:
        raise DomainError(missing)
    return found[0]


def money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


def dump(conn: sqlite3.Connection, skip: Iterable[str] = ()) -> dict[str, list[tuple]]:
    """Every table's rows in a stable order: what the verifier compares with the gold world."""
    out = {}
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    for table in tables:
        if table not in skip:  # sorted by every column, in SQLite's own order of values
            width = len(conn.execute(f"PRAGMA table_info({table})").fetchall())
            order = ", ".join(str(i) for i in range(1, width + 1))
            found = conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            out[table] = [tuple(r) for r in found]
    return out


def rng(seed: int, *salt: Any) -> random.Random:
    return random.Random(f"{seed}:{':'.join(map(str, salt))}")
