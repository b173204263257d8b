"""Every benchmark by name: what ``palaestra bench NAME`` runs, its options, and the family it
measures (the entries are data, in ``catalog.yaml`` beside this module).

Benchmark names belong to the bench layer: a family descriptor does not name its benchmark (that
would point a family up at the layer above it); an entry here names the family instead. The CLI
(``palaestra/cli/bench.py``) makes one command per entry, in this order, and ``palaestra bench
all`` runs every entry with its defaults, skipping a family's benchmark where that family is
not installed or cannot run. Entries name their mains by ``"module:function"`` strings, so
listing the benchmarks imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Option:
    """``--NAME`` of a benchmark command, given to its main as the keyword ``param`` (default:
    ``name``). ``repeatable`` options are lists of strings, ``None`` when not given."""

    name: str
    default: Any
    help: str
    param: str = ""
    repeatable: bool = False

    @property
    def keyword(self) -> str:
        return self.param or self.name

    @property
    def kind(self) -> Any:
        return list[str] | None if self.repeatable else type(self.default)


@dataclass(frozen=True)
class Bench:
    """One benchmark: ``target`` is its ``"module:function"``, ``help`` what it measures;
    ``family`` the env family whose own benchmark it is (empty: the platform's)."""

    name: str
    target: str
    help: str
    options: tuple[Option, ...] = ()
    family: str = ""


def entry(data: Mapping[str, Any]) -> Bench:
    """A benchmark as ``catalog.yaml`` writes it (its main: ``palaestra.bench.NAME:main``
    unless it says ``target``)."""
    return Bench(
        name=data["name"],
        target=data.get("target", f"palaestra.bench.{data['name']}:main"),
        help=data["help"],
        options=tuple(Option(**o) for o in data.get("options", ())),
        family=data.get("family", ""),
    )


#: every benchmark, in the order of ``catalog.yaml``
BENCHES: tuple[Bench, ...] = tuple(
    entry(data) for data in yaml.safe_load((Path(__file__).parent / "catalog.yaml").read_text())
)
