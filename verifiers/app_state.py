"""Check kinds for app state: SQL on the app's database, the agent's answer, infeasibility.

The probe's state carries ``app_db`` (a path on the worker, opened read-only here) and ``chat``
(the conversation, where the agent's answers and infeasibility reports land). Answers are
compared after normalization: case, spacing and punctuation do not matter, and a number matches
in any format ("EUR 42.5" for 42.50), but an answer may hold at most a few numbers, so listing a
whole page is not an answer. Dates are expected as the app shows them (ISO).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import tempfile
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra.chat import ANSWER, INFEASIBLE
from palaestra.verifiers.base import CheckResult, StateProbe, check_kind

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
MAX_NUMBERS = 3  # an answer listing every number on the page is not an answer


def _chat(state: Any, prefix: str) -> list[str]:
    return [line[len(prefix) :] for line in state.get("chat", []) if line.startswith(prefix)]


def sql_value(db: str, query: str, params: list[Any] | tuple[Any, ...] = ()) -> Any:
    """The first cell of a read-only query (None when there is no row)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute(query, tuple(params)).fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]


@check_kind("sql")
def _sql(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "sql", "query": "SELECT ...", "params": [...], "expect": value}``."""
    actual = sql_value(probe.read()["app_db"], spec["query"], spec.get("params", []))
    expect = spec["expect"]
    passed = (
        abs(float(actual) - float(expect)) < 0.005
        if isinstance(expect, float) and isinstance(actual, int | float)
        else actual == expect
    )
    what = spec.get("describe", spec["query"])
    return CheckResult("sql", passed, float(passed), f"{what}: {actual!r}")


def normalize_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w:@.\-]+", " ", text).replace(". ", " ").split()).strip(" .")


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", ".")) for n in _NUMBER.findall(text.replace(" ", ""))]


def answer_matches(answer: str, expected: str, normalize: str) -> bool:
    if normalize == "number":
        found = numbers(answer)
        want = numbers(expected)
        return (
            bool(want)
            and len(found) <= MAX_NUMBERS
            and any(abs(n - want[0]) < 0.005 for n in found)
        )
    said, want_text = f" {normalize_text(answer)} ", f" {normalize_text(expected)} "
    return want_text.strip() != "" and want_text in said


@check_kind("answer")
def _answer(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "answer", "value": "14:05", "normalize": "text"|"number"|"date"}``: the agent's
    last message to the user holds the value."""
    answers = _chat(probe.read(), ANSWER)
    if not answers:
        return CheckResult("answer", False, 0.0, "the agent sent no answer")
    passed = answer_matches(answers[-1], str(spec["value"]), spec.get("normalize", "text"))
    return CheckResult("answer", passed, float(passed), f"answer {answers[-1][:200]!r}")


@check_kind("infeasible")
def _infeasible(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "infeasible", "keywords": [...]}``: the agent reported the task infeasible,
    and its reason names the cause (any keyword, case-insensitive)."""
    reasons = _chat(probe.read(), INFEASIBLE)
    if not reasons:
        return CheckResult("infeasible", False, 0.0, "the agent did not report infeasibility")
    said = normalize_text(reasons[-1])
    keywords = [normalize_text(k) for k in spec.get("keywords", [])]
    passed = not keywords or any(k in said for k in keywords)
    return CheckResult("infeasible", passed, float(passed), f"reason {reasons[-1][:200]!r}")


@check_kind("feasible")
def _feasible(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The agent did not give up on a task that can be done."""
    reasons = _chat(probe.read(), INFEASIBLE)
    return CheckResult("feasible", not reasons, float(not reasons), f"{len(reasons)} report(s)")


@contextlib.contextmanager
def mutated(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """An app end state changed by a mutation: SQL run on a copy of the database (``sql`` with
    ``params``), the chat replaced (``chat``), or the seeded database (``restore``)."""
    out = dict(state)
    if "chat" in mutation:
        out["chat"] = list(mutation["chat"])
    with tempfile.TemporaryDirectory(prefix="palaestra-mutant-") as folder:
        if "sql" in mutation or mutation.get("restore"):
            copy = Path(folder) / "mutant.sqlite"
            source = state["seed_db"] if mutation.get("restore") else state["app_db"]
            shutil.copyfile(source, copy)
            conn = sqlite3.connect(copy)
            try:
                params = mutation.get("params") or [[]] * len(mutation.get("sql", []))
                for statement, args in zip(mutation.get("sql", []), params, strict=True):
                    conn.execute(statement, tuple(args))
                conn.commit()
            finally:
                conn.close()
            out["app_db"] = str(copy)
        yield out
