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


def _load() -> tuple[Bench, ...]:
    entries = yaml.safe_load((Path(__file__).parent / "catalog.yaml").read_text())
    return tuple(
        Bench(
            name=e["name"],
            target=e.get("target", f"palaestra.bench.{e['name']}:main"),
            help=e["help"],
            options=tuple(Option(**o) for o in e.get("options", ())),
            family=e.get("family", ""),
        )
        for e in entries
    )


#: every benchmark, in the order of ``catalog.yaml``
BENCHES: tuple[Bench, ...] = _load()
