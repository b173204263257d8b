"""A domain's tools: declared on the functions that run them, their arguments checked first.

A tool's JSON arguments are checked against its JSON Schema before it runs, so an agent's
malformed call is answered with the schema's own complaint and never reaches the database.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

ToolFn = Callable[[sqlite3.Connection, dict[str, Any]], Any]


class DomainError(Exception):
    """A tool's answer that is an error for the agent to read (unknown id, nothing found)."""


class RuleBroken(DomainError):
    """The call would break a written rule of the domain; the verifier counts the attempt."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: ToolFn
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


Decorator = Callable[[ToolFn], ToolFn]


class Tools(dict[str, Tool]):
    """A domain's tools by name, in the order the agent is shown them. Each is declared on the
    function that runs it, named after it, so the schema a call is checked against sits beside
    the code that trusts the checked arguments. Every property in ``props`` is required unless
    ``required`` names the ones that are."""

    def read(
        self, description: str, props: dict[str, Any], required: Iterable[str] | None = None
    ) -> Decorator:
        return self._declare(description, props, required, writes=False)

    def write(
        self, description: str, props: dict[str, Any], required: Iterable[str] | None = None
    ) -> Decorator:
        """A tool that changes the world: the env wants the user's yes before each call."""
        return self._declare(description, props, required, writes=True)

    def _declare(
        self, description: str, props: dict[str, Any], required: Iterable[str] | None, writes: bool
    ) -> Decorator:
        def declare(fn: ToolFn) -> ToolFn:
            need = props if required is None else required
            self[fn.__name__] = Tool(fn.__name__, description, params(need, **props), fn, writes)
            return fn

        return declare
