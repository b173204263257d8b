"""Reading a generated replica task as data, for the replica apps' tests: what its verifier
expects (rows created, deleted, updated) and what it plants, without a browser. One copy for
every app group's test file, so a change of the verifier's check shapes is mended once."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from palaestra.synth_apps.generate import Generated, TaskGenerator
from palaestra.synth_apps.spec import AppSpec


def maker(specs: Mapping[str, AppSpec]) -> Callable[..., Generated]:
    """``made(name, seed, ask)``: one grounded task of a template of these apps."""

    def made(name: str, seed: int = 0, ask: bool = False) -> Generated:
        return TaskGenerator.for_template(name, seed, ask=ask, specs=dict(specs))

    return made


def checks(g: Generated) -> list[dict[str, Any]]:
    return list(g.task.verifier["checks"])


def new_rows(g: Generated, table: str) -> list[dict[str, Any]]:
    """The rows the verifier expects the task to create in ``table``, as column -> value."""
    out = []
    for check in checks(g):
        if check.get("describe") == f"new {table} rows like this":
            cols = re.findall(r"(\w+) IS \?", check["query"])
            out.append(dict(zip(cols, check["params"], strict=True)))
    return out


def gone(g: Generated, table: str) -> set[int]:
    """The ids of the rows the verifier expects deleted from ``table``."""
    found = (re.fullmatch(rf"{table} (\d+) is gone", str(c.get("describe"))) for c in checks(g))
    return {int(m.group(1)) for m in found if m}


def updated(g: Generated, table: str, column: str) -> list[Any]:
    """The values the verifier expects ``table.column`` to be updated to."""
    return [
        c["expect"]
        for c in checks(g)
        if re.fullmatch(rf"{table} \d+ {column}", str(c.get("describe", "")))
    ]


def planted(g: Generated, entity: str) -> list[dict[str, Any]]:
    """The values of the rows the task plants in ``entity`` at reset."""
    return [p["values"] for p in g.task.setup.get("plant", []) if p["entity"] == entity]
