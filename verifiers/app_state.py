"""Check kinds for app state: SQL on the app's database, the agent's answer, infeasibility.

The probe's state carries ``app_db`` (a path on the worker, opened read-only here) and ``chat``
(the conversation, where the agent's answers and infeasibility reports land). Beside the
database, the app host keeps the session's *visit log* (:func:`visits_path`): one JSON line per
page it served the session (a list page, a record, an operation's form, a refusal and the rule
it named). The host writes it on the server; no route of the app reads or writes it, so the
agent adds to it only by really opening pages.

What each kind accepts, and the strategy it is built to refuse (docs/verifiers.md has the table):

- ``answer``: ONE value of the expected type, read by :mod:`palaestra.verifiers.answers` (the
  module every family's answers go through): any format ("$1,000.00", "2:05 PM", "December 5,
  2026"), exactly one value of its kind, no other candidate of the app (any column, any
  record), no record dumped: a list of candidates, all 1,440 times of day or a dump of the page
  is not an answer.
- ``infeasible``: the reason names the cause (a keyword), is short, and, with ``evidence``, the
  visit log shows the agent looked (opened the record, tried the operation, searched the list):
  a reason stuffed with every rule's keywords, with nothing explored, scores 0.
- ``unchanged``: the rows of a table the task does not touch are as seeded (acting on every
  row instead of the one asked fails it).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra.chat import ANSWER, INFEASIBLE
from palaestra.verifiers import answers
from palaestra.verifiers.base import CheckResult, StateProbe, check_kind

#: an answer is one value in a sentence at most: longer is a dump, whatever it contains
MAX_ANSWER_CHARS = answers.MAX_ANSWER_CHARS
#: a reason names the cause in a sentence or two; a list of every rule's words is not a reason
MAX_REASON_CHARS = 300
#: the file beside an app database where the app host logs the pages a session was served
VISITS_SUFFIX = ".visits"


def visits_path(db: str | Path) -> Path:
    """Where the app host logs the visits of the session whose database is ``db``."""
    return Path(f"{db}{VISITS_SUFFIX}")


def visits(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The session's visit log; FileNotFoundError (the check's ``error``) when there is none,
    as a verifier that cannot see its evidence must never pass."""
    text = visits_path(state["app_db"]).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def seen(log: list[dict[str, Any]], evidence: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first visit that matches a piece of evidence (every field of one item equal)."""
    for visit in log:
        for item in evidence:
            if all(visit.get(k) == v for k, v in item.items()):
                return visit
    return None


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


normalize_text = answers.normalize_text
#: why an answer is not the one value expected (None when it is): the one reading every family
#: shares (:func:`palaestra.verifiers.answers.answer_problem`)
answer_problem = answers.answer_problem


def list_problem(
    answer: str,
    expected: list[Any],
    others: Any = (),
    *,
    app: answers.AppValues | None = None,
) -> str | None:
    """Why ``answer`` is not exactly the values ``expected``, in any order (None when it is):
    every one named (a number, date, time, phone or email in any format, a text by its
    words), and no other candidate: none of ``others`` (the rows the list leaves out) nor,
    for a text item, another value of its column in the app; no other value of a non-text
    item's kind. So listing every row, which names them all, fails. An empty list expects an
    answer naming no candidate ("none"). (Here, not in :mod:`~palaestra.verifiers.answers`:
    only the app families ask for lists.)"""
    items = [str(e) for e in expected]
    if len(answer) > max(answers.MAX_ANSWER_CHARS, 2 * sum(len(i) + 2 for i in items)):
        return f"{len(answer)} characters: longer than the list asked for"
    missing = [i for i in items if not answers.says(answer, i)]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"it does not name {missing[0]!r}{more}"
    said = f" {normalize_text(answer)} "
    wanted = {normalize_text(i) for i in items}
    pool = {normalize_text(str(o)) for o in others}
    kinds = {answers.kind_of(i, "number" if _amount(i) else "text") for i in items}
    if app is not None:
        for item in items:
            if answers.kind_of(item, "number" if _amount(item) else "text") == "text":
                pool |= app.text_candidates(item)
    rivals = sorted(
        o
        for o in pool - wanted
        if o and not any(o in w or w in o for w in wanted) and answers.mentions(said, o)
    )
    if rivals:
        return f"it names {rivals[0]!r}, which is not in the list"
    found = answers.scan(answer)
    for kind in kinds - {"text"}:
        want: set[str] = set()
        for item in items:
            if answers.kind_of(item, kind) == kind:
                want |= answers.key(item, kind)
        extra = [k for k in found.keys(kind) if not k & want]
        if extra:
            return f"it names a {kind} not in the list ({sorted(extra[0])[0]})"
    return None


def _amount(value: str) -> bool:
    return re.fullmatch(r"[$€£]?\s?-?\d[\d,]*(?:\.\d+)?", value.strip()) is not None


def near_problem(answer: str, expected: str, tolerance: float, given: str = "") -> str | None:
    """Why ``answer`` is not one number within ``tolerance`` of ``expected`` (a distance
    read off a track, in meters): exactly one number besides the question's own, close
    enough."""
    asked = set().union(*answers.scan(given).keys("number")) if given else set()
    mine = [k for k in answers.scan(answer).keys("number") if not k & asked]
    if not mine:
        return "no number in the answer"
    want = float(expected)
    near = [k for k in mine if any(abs(float(v) - want) <= tolerance + 1e-9 for v in k)]
    if not near:
        return f"not within {tolerance:g} of the value"
    if len(mine) > 1:
        return f"{len(mine)} numbers: an answer is one value"
    return None


def app_values(db: str) -> answers.AppValues:
    """The values of the app database at ``db``, read once per version of the file (a dense
    reward verifies every step; reading an app's values takes 20-60 ms)."""
    version = tuple(
        (p.stat().st_mtime_ns, p.stat().st_size) if p.exists() else None
        for p in (Path(db), Path(f"{db}-wal"))
    )
    return _app_values(db, version)


@functools.lru_cache(maxsize=32)
def _app_values(db: str, version: tuple[Any, ...]) -> answers.AppValues:
    return answers.AppValues.from_db(db)


@check_kind("answer")
def _answer(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "answer", "value": "14:05", "normalize": "text"|"number"|"date",
    "others": [...], "tolerance": 10}`` (``value`` a list: those values in any order, see
    :func:`~palaestra.verifiers.answers.list_problem`): the agent's last message to the user
    is that one value (see :func:`answer_problem`); ``others`` are candidates it must not
    also name, beside every value of the app's database (``app_db``); the question (``goal``,
    when the probe gives it) may be repeated."""
    state = probe.read()
    said = _chat(state, ANSWER)
    if not said:
        return CheckResult("answer", False, 0.0, "the agent sent no answer")
    app = app_values(state["app_db"]) if state.get("app_db") else None
    given = str(state.get("goal") or "")
    if isinstance(spec["value"], list):  # a list: every item, in any order, and no other
        problem = list_problem(said[-1], spec["value"], spec.get("others", ()), app=app)
    elif spec.get("tolerance"):
        problem = near_problem(said[-1], str(spec["value"]), float(spec["tolerance"]), given)
    else:
        problem = answer_problem(
            said[-1],
            str(spec["value"]),
            spec.get("normalize", "text"),
            spec.get("others", ()),
            app=app,
            given=given,
        )
    detail = f"answer {said[-1][:200]!r}" + (f": {problem}" if problem else "")
    return CheckResult("answer", problem is None, float(problem is None), detail)


@check_kind("infeasible")
def _infeasible(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "infeasible", "keywords": [...], "evidence": [{...}, ...]}``: the agent
    reported the task infeasible, its reason is short and names the cause (any keyword,
    case-insensitive), and, with ``evidence``, the session's visit log holds a visit matching
    one item (e.g. ``{"view": "train", "id": 12}``, ``{"op": "book", "refused": "..."}``,
    ``{"list": 0}``): a report counts only when the agent looked. It names none of ``others``
    (the distinctive words of the app's rules that do not block): a reason naming the
    candidate rules is guessing, and a claim of a rule that does not apply is false."""
    state = probe.read()
    reasons = _chat(state, INFEASIBLE)
    if not reasons:
        return CheckResult("infeasible", False, 0.0, "the agent did not report infeasibility")
    reason = reasons[-1]
    said = normalize_text(reason)
    keywords = [normalize_text(k) for k in spec.get("keywords", [])]
    problem = None
    if len(reason) > MAX_REASON_CHARS:
        problem = f"{len(reason)} characters: a reason names the cause, not every rule"
    elif keywords and not any(k in said for k in keywords):
        problem = "the reason does not name the cause"
    elif named := [o for o in spec.get("others", []) if answers.mentions(f" {said} ", o)]:
        problem = f"the reason claims a rule that does not block ({named[0]!r})"
    elif spec.get("evidence") and seen(visits(state), spec["evidence"]) is None:
        problem = "the agent never looked (no visit to what makes it infeasible)"
    detail = f"reason {reason[:200]!r}" + (f": {problem}" if problem else "")
    return CheckResult("infeasible", problem is None, float(problem is None), detail)


@check_kind("visited")
def _visited(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "visited", "evidence": [{"view": "setting", "id": 3}, ...]}``: the session's
    visit log holds a visit matching one piece of evidence: the agent looked at what a task
    that needs no change asks about (Wi-Fi already on), so doing nothing blind fails."""
    found = seen(visits(probe.read()), spec["evidence"])
    detail = f"looked: {found}" if found else "never looked at the evidence"
    return CheckResult("visited", found is not None, float(found is not None), detail)


@check_kind("foreground")
def _foreground(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "foreground", "app": "simple_calendar"}``: the episode ends with that app on
    the phone's screen (the probe's ``foreground_app``: a spec name, or ``launcher``)."""
    shown = probe.read().get("foreground_app")
    passed = shown == spec["app"]
    return CheckResult("foreground", passed, float(passed), f"on screen: {shown!r}")


@check_kind("feasible")
def _feasible(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The agent did not give up on a task that can be done."""
    reasons = _chat(probe.read(), INFEASIBLE)
    return CheckResult("feasible", not reasons, float(not reasons), f"{len(reasons)} report(s)")


def table_digest(db: Any, table: str, skip: list[int] | tuple[int, ...], upto: int) -> str:
    """A digest of ``table``'s rows with ids up to ``upto`` (the seeded ones) other than
    ``skip``: ``db`` is a path (opened read-only) or an open connection."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True) if isinstance(db, str) else db
    try:
        rows = conn.execute(
            f"SELECT * FROM {table} WHERE id <= ? AND id NOT IN ({','.join('?' * len(skip))}) "
            "ORDER BY id",
            (upto, *skip),
        )
        kept = [list(r) for r in rows]
    finally:
        if isinstance(db, str):
            conn.close()
    return hashlib.sha1(json.dumps(kept, default=str).encode()).hexdigest()


@check_kind("unchanged")
def _unchanged(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """``{"kind": "unchanged", "table": "booking", "skip": [ids], "upto": n, "digest": ...}``:
    the seeded rows of the table that the task does not touch are as seeded (none deleted,
    none updated), so acting on every row instead of the one asked fails."""
    got = table_digest(
        probe.read()["app_db"], spec["table"], spec.get("skip", []), int(spec["upto"])
    )
    passed = got == spec["digest"]
    what = f"the other {spec['table']} rows are {'unchanged' if passed else 'changed'}"
    return CheckResult("unchanged", passed, float(passed), what)


@contextlib.contextmanager
def mutated(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """An app end state changed by a mutation: SQL run on a copy of the database (``sql`` with
    ``params``), the chat replaced (``chat``), the seeded database (``restore``), or the visit
    log replaced (``visits``: a list of visits, e.g. ``[]`` for "reported without looking")."""
    out = dict(state)
    if "chat" in mutation:
        out["chat"] = list(mutation["chat"])
    with tempfile.TemporaryDirectory(prefix="palaestra-mutant-") as folder:
        if "sql" in mutation or mutation.get("restore") or "visits" in mutation:
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
            log = visits_path(state["app_db"])
            if "visits" in mutation:
                lines = [json.dumps(v) + "\n" for v in mutation["visits"]]
                visits_path(copy).write_text("".join(lines))
            elif log.exists():
                shutil.copyfile(log, visits_path(copy))
            out["app_db"] = str(copy)
        yield out
