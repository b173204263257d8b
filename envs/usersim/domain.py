"""What a customer-service domain is: a seeded SQLite world, tools over it, rules, and slots.

A domain is data plus small functions. Its tools take JSON arguments checked against their JSON
Schema before they run, so an agent's malformed call is answered with the schema's own complaint
and never reaches the database. A tool refuses what the written policy forbids by raising
:class:`RuleBroken` (the episode goes on, the refusal is logged as a violation for the verifier)
and reports lookups that fail with :class:`DomainError` (an honest miss, not a violation).

Slots (the vocabulary the simulated user and the dialogue-act reader share) and the simulated
user itself are the shared runtime :mod:`palaestra.envs.runtimes.simuser`; a domain here is that
language plus the world it talks about.
"""

from __future__ import annotations

import functools
import json
import random
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import jsonschema

from palaestra.envs.runtimes.simuser import domain as simuser


class DomainError(Exception):
    """A tool's answer that is an error for the agent to read (unknown id, nothing found)."""


class RuleBroken(DomainError):
    """The call would break a written rule of the domain; the verifier counts the attempt."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[[sqlite3.Connection, dict[str, Any]], Any]
    writes: bool = False

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function definition the agent sees."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "writes": self.writes,
        }

    @functools.cached_property
    def _validator(self) -> Any:
        """Built once per tool: every call is checked on the step's hot path."""
        return jsonschema.Draft202012Validator(self.parameters)

    def check(self, arguments: Any) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise DomainError(f"{self.name}: arguments must be a JSON object")
        errors = sorted(self._validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = ".".join(str(p) for p in err.path) or "arguments"
            raise DomainError(f"{self.name}: {where}: {err.message}")
        return dict(arguments)


def params(required: Iterable[str] = (), **props: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema object of the given properties; no other keys accepted."""
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


STR: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200}


@dataclass(frozen=True)
class Intent:
    """Something a user comes for; ``phrase`` completes "I'd like to ..."."""

    name: str
    phrase: str


@dataclass
class Domain(simuser.Domain):
    """A domain's world and language (its slots and requests, what the simulated user knows).
    Subclasses fill the class attributes and ``build``."""

    title: ClassVar[str] = ""
    policy: ClassVar[str] = ""
    tools: dict[str, Tool] = field(default_factory=dict)

    def build(self, conn: sqlite3.Connection, seed: int) -> None:
        """Create and seed the tables, reproducibly from ``seed``."""
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
        if table not in skip:
            found = [tuple(r) for r in conn.execute(f"SELECT * FROM {table}").fetchall()]
            out[table] = sorted(found, key=json.dumps)
    return out


def rng(seed: int, *salt: Any) -> random.Random:
    return random.Random(f"{seed}:{':'.join(map(str, salt))}")
