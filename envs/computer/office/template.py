"""What a task template of the office suites is: the one shape Calc, Writer and Impress share.

A template turns a seed into a :class:`Case` (the generated documents, the parameters its
instruction is written from, the checks, and two reference solutions), and carries several
phrasings of its instruction. :mod:`.suite` makes tasks of cases; the app modules
(:mod:`.calc`, :mod:`.writer`, :mod:`.impress`) only declare templates.

Decisions:

- A case's documents are bytes made in the trusted process from a seed, written into the
  fresh home by the env's setup (``setup.binary``, base64), so a task is self-contained data
  and a generated file is never regenerated differently by a newer library at reset time.
- Two oracles where both apply, as OS-Helix's hybrid action space: ``gui`` (keyboard and
  mouse only, through the app on screen) is the task's :class:`~palaestra.tasks.Oracle`;
  ``code`` (Python with the file libraries or UNO, run inside the sandbox) is kept in the
  task's private metadata and validated the same way.
- A generator that fails raises :class:`ArtifactError` naming the template and the seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

APPS = ("calc", "writer", "impress")


class ArtifactError(RuntimeError):
    """A template could not make its case for a seed."""

    def __init__(self, template: str, seed: int, why: str) -> None:
        super().__init__(f"office template {template!r} failed for seed {seed}: {why}")
        self.template, self.seed = template, seed


@dataclass(frozen=True)
class Case:
    """One task's worth of a template at one seed."""

    params: dict[str, Any]  # what the phrasings are formatted with
    files: dict[str, bytes]  # home-relative path -> the generated document's bytes
    open: str  # the home-relative document open in the app when the episode starts
    verifier: dict[str, Any]  # a check spec of palaestra.verifiers.office (or "all" of them)
    gui: list[Any]  # the GUI-only reference solution (an action list, played by ``replay``)
    code: list[Any] | None = None  # the code reference solution, where one applies
    text_files: dict[str, str] = field(default_factory=dict)  # e.g. a CSV to import


@dataclass(frozen=True)
class Template:
    """A parametrized office task: ``make(seed)`` -> :class:`Case`; ``phrasings`` are
    ``str.format`` strings over the case's params (at least three)."""

    name: str  # e.g. "calc-column-total"; task ids are f"office/{name}/{seed}"
    app: str  # one of APPS
    skills: tuple[str, ...]  # e.g. ("formulas",), for coverage reports (never shown to agents)
    phrasings: tuple[str, ...]
    make: Callable[[int], Case]
    seeds: tuple[int, ...] = (0, 1, 2)
