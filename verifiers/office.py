"""Check kinds that read a saved office document: ``spreadsheet``, ``text_document``,
``presentation`` (and, in :mod:`.office_osworld`, OSWorld's metrics).

The agent's document is read where the agent's files are: the reader's source
(:mod:`.office_read` and its modules) runs in the computer family's isolated runner (the
probe's ``run``: a fresh read-only sandbox as the session's uid, bounded output, Debian's
``/usr/bin/python3 -I -S``), and this process parses
nothing of it but one bounded line of JSON, the document's canonical model. A document that
cannot be read (corrupted, hollow, a zip bomb, a link, a FIFO, too big, the wrong format)
fails the check with the reader's reason; it never raises. A spec that makes no sense (an
unknown assertion) raises, so a broken task is an error, never a silent 0.

Spec (one check reads the document once and judges every assertion)::

    {"kind": "spreadsheet", "path": "~/budget.xlsx", "formats": ["xlsx", "ods"],
     "sheet": "Budget",                      # default sheet of the assertions (default: first)
     "ignore_case": false,                   # default of every text comparison below
     "expect": [assertion, ...]}

``path`` is home-relative (``~/`` and ``/home/user/`` accepted). ``formats`` is what the task
allows (default: both formats of the app); the file is ``path``, or its stem with another
allowed extension (``~/budget.ods`` where ``.xlsx`` is also allowed), and its content must be
the format its extension names. ``kind`` and ``formats`` must agree (a text document is no
answer to a spreadsheet check).

Comparisons: numbers within ``tol`` (default ``1e-6``, absolute); text with surrounding space
stripped, case kept unless ``ignore_case``; a value given as ``{"date": "2026-03-01"}`` is a
date (compared as a day number, whatever the cell's display format); a formula cell counts by
its computed value (so a formula where a value is required is fine when its value is right).
Formulas compare without spaces, ``$`` and case (``=sum(b2:b4)`` is ``=SUM($B$2:$B$4)``).

Spreadsheet assertions (``sheet`` in any of them overrides the check's):

- ``{"cell": "B7", ...}`` with any of: ``value`` (+ ``tol``), ``formula`` (the formula, or
  ``true``: any formula; ``false``: a plain value), ``formula_contains`` (e.g. ``"SUM("``),
  ``empty``, ``bold``, ``italic``, ``underline``, ``fill`` (``#RRGGBB`` or ``null``: none),
  ``color``, ``font``, ``size``, ``align`` (``left|center|right|justify``), ``number_format``
  (a category: ``general|number|percent|currency|date|time|datetime|scientific|text``),
  ``decimals``.
- ``{"range": "A2:C9", ...}`` with ``values`` (rows of values, ``null`` for empty), or
  ``rows_any_order`` (the same rows in any order), or ``sorted`` (``{"by": "B", "descending":
  false}``: the rows ordered by that column), or any cell property above (every cell has it).
- ``{"sheets": ["Budget", "Notes"]}`` (exactly, in order); ``{"has_sheet": "Summary"}``.
- ``{"freeze": "A2"}`` (``null``: no frozen panes); ``{"filter": "A1:D20"}`` (``true``: any
  autofilter, ``null``: none); ``{"merged": "A1:D1"}``; ``{"zoom": 150}``.
- ``{"conditional_format": {"range": "C2:C9", "type": "cell", "operator": ">", "values":
  [1000]}}``: some rule has every field given (types ``cell|expression|color-scale|data-bar|
  icon-set|duplicate|unique|top``; operators ``> < >= <= = != between not-between``).
- ``{"chart": {"type": "bar", "horizontal": false, "title": "Costs", "values": "B2:B9",
  "categories": "A2:A9"}}``: some chart has every field given (a range matches any series,
  with or without its sheet); ``{"charts": 1}``: how many.

Text-document assertions:

- ``{"paragraph": "Quarterly report", "match": "equals|contains|pattern", ...}`` (or an int:
  the n-th non-empty paragraph) with any of ``text``, ``style`` (its name, ``Normal`` and
  ``Standard`` alike), ``heading`` (level, 0 for body text), ``align``, ``bold``, ``italic``,
  ``underline`` (all its text), ``list`` (``"bullet"``, ``"numbered"`` or ``null``), ``level``
  (0-based), ``bold_text`` / ``italic_text`` / ``underline_text`` (these words of it, every
  character); ``{"paragraph": ..., "absent": true}``: no paragraph matches.
- ``{"bold_text": "net total"}`` (or ``italic_text``, ``underline_text``): some paragraph has
  these words with that property on every character.
- ``{"contains": "text"}`` / ``{"absent": "text"}`` over the whole text (paragraphs and
  tables); ``{"occurrences": "colour", "count": 0}`` (find and replace outcomes).
- ``{"headings": [[1, "Intro"], [2, "Scope"]]}``: the document's headings, exactly, in order.
- ``{"order": ["first", "second"]}``: paragraphs with these texts appear in this order
  (``"adjacent": true``: each directly after the one before, empty paragraphs aside).
- ``{"list": ["milk", "eggs"], "ordered": false}``: consecutive list items with these texts.
- ``{"table": 0, "cells": [[...]]}``, ``{"table": 0, "cell": [1, 2], "text": "..."}``,
  ``{"table": 0, "rows": 3, "cols": 4}``; ``{"tables": 1}``.
- ``{"comment": "check the totals", "match": "contains", "author": "...", "anchor": "..."}``
  (``anchor``: the commented text contains this);
  ``{"comments": 2}``.
- ``{"page": {"orientation": "landscape", "width": 297, "height": 210, "margins": {"top": 20},
  "tol": 1.0}}`` (mm).

Presentation assertions:

- ``{"slides": 5}``; ``{"titles": ["Intro", "Plan", "Costs"]}`` (every slide's title, in order);
  ``{"contains": "X"}`` / ``{"absent": "X"}``: some slide / no slide shows X (notes included).
- ``{"slide": 2, ...}`` (0-based; or a str: the slide with that title) with any of ``title``,
  ``subtitle``, ``body`` (its paragraphs, exactly), ``body_contains``, ``notes``,
  ``notes_contains``, ``layout`` (the placeholder kinds in order, ``"title,body"``),
  ``layout_kind`` (``title_slide|title_content|two_content|title_only|blank|centered_text``,
  Impress's ``AL1T<n>`` and PowerPoint's layouts alike), ``images`` (how many),
  ``images_at_least``, ``contains`` (any text on the slide, text boxes and tables too),
  ``table`` (some table's rows of cell texts), ``hidden``, ``background`` (``#RRGGBB``, a
  solid fill), ``bold_text`` / ``italic_text`` / ``underline_text``; ``{"slide": "Old",
  "absent": true}``: no slide has that title.
"""

from __future__ import annotations

import base64
import json
import shlex
import zlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from palaestra.verifiers import office_read, office_sheet, office_slides, office_text, office_xml
from palaestra.verifiers.base import CheckResult, check_kind
from palaestra.verifiers.computer import HOME, ComputerProbe
from palaestra.verifiers.office_expect import JUDGES, Judge, Model, show

APP_FORMATS = {
    "spreadsheet": ("xlsx", "ods"),
    "text_document": ("docx", "odt"),
    "presentation": ("pptx", "odp"),
}
#: Debian's interpreter, the one the sandbox has (never the venv's: not in the sandbox's view)
PYTHON = "/usr/bin/python3"
#: seconds the reader may take in the sandbox
TIMEOUT = 30.0


class Unreadable(Exception):
    """The agent's document could not be read: the check fails with this reason."""


#: the reader's modules (standard library only), each after those it imports
READER = (office_xml, office_sheet, office_text, office_slides, office_read)
#: what the sandbox's Python runs: the modules' sources under their own names, then the
#: reader's ``main`` (palaestra itself is not in the sandbox's view, nor needed)
BOOT = """import base64,json,sys,types,zlib
sources = json.loads(zlib.decompress(base64.b64decode('{packed}')))
for name in ('palaestra', 'palaestra.verifiers'):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = []
for name, source in sources.items():
    sys.modules[name] = module = types.ModuleType(name)
    exec(compile(source, name, 'exec'), module.__dict__)
sys.exit(sys.modules['palaestra.verifiers.office_read'].main(sys.argv))
"""


@lru_cache(maxsize=1)
def _command_head() -> str:
    """The reader, compressed into one argument (well under the kernel's 128 KiB limit for
    one), run by an isolated Python without site packages."""
    sources = {m.__name__: Path(str(m.__file__)).read_text() for m in READER}
    packed = base64.b64encode(zlib.compress(json.dumps(sources).encode(), 9)).decode()
    return f"exec {PYTHON} -I -S -c {shlex.quote(BOOT.format(packed=packed))}"


def home_rel(path: str) -> str:
    rel = str(path).removeprefix(HOME + "/").removeprefix("~/").lstrip("/")
    if not rel or ".." in rel.split("/"):
        raise ValueError(f"an office check's path must name a file under the home: {path!r}")
    return rel


def read_model(
    probe: Any, path: str, formats: Iterable[str], timeout: float = TIMEOUT, detail: bool = False
) -> Model:
    """The model of the agent's document, read in the session's isolated runner (``detail``:
    a pptx's shapes as python-pptx sees them, for OSWorld's comparison)."""
    if not isinstance(probe, ComputerProbe):
        raise TypeError("an office check needs a computer session's probe")
    allowed = ",".join(formats)
    command = f'{_command_head()} "$HOME"/{shlex.quote(home_rel(path))} {shlex.quote(allowed)}'
    command += " detail" if detail else ""
    try:
        code, out, err = probe.run(command, timeout)
    except Exception as exc:  # a timeout is the document's doing: a failed check
        raise Unreadable(f"the reader did not finish: {type(exc).__name__}: {exc}") from None
    line = out.split("\n", 1)[0]
    try:
        found = json.loads(line)
    except ValueError:
        why = err.strip().splitlines()[-1:] or [f"exit {code}"]
        raise Unreadable(f"the reader gave no summary ({why[0][:200]})") from None
    if not isinstance(found, dict) or not found.get("ok"):
        raise Unreadable(str(found.get("error") if isinstance(found, dict) else found)[:500])
    model = found.get("model")
    if not isinstance(model, dict):
        raise Unreadable("the reader's summary has no model")
    return model


def trusted_model(path: str | Path, formats: Iterable[str] = office_read.FORMATS) -> Model:
    """The model of a trusted file (a gold document, a generated artifact), read in-process by
    the same code the sandbox runs."""
    return office_read.read_document(str(path), tuple(formats))


# ----- the check kinds ----------------------------------------------------------------------


def _document_check(kind: str, judges: Mapping[str, Judge]) -> None:
    """Register ``kind``: read the document once, judge each assertion by its first key
    that names a judge."""

    @check_kind(kind)
    def check(probe: Any, spec: dict[str, Any]) -> CheckResult:
        formats = list(spec.get("formats") or APP_FORMATS[kind])
        wrong = [f for f in formats if f not in APP_FORMATS[kind]]
        if wrong:
            raise ValueError(f"a {kind} check cannot allow {wrong} (only {APP_FORMATS[kind]})")
        expect = list(spec.get("expect", []))
        picked = [_pick(judges, a, kind) for a in expect]  # a bad spec fails before reading
        try:
            model = read_model(probe, spec["path"], formats, float(spec.get("timeout", TIMEOUT)))
        except Unreadable as exc:
            return CheckResult(kind, False, 0.0, f"{spec['path']}: {exc}")
        return judge_model(kind, model, spec, list(zip(picked, expect, strict=True)))


def judge_model(
    kind: str,
    model: Model,
    spec: Mapping[str, Any],
    assertions: list[tuple[Judge, Mapping[str, Any]]] | None = None,
) -> CheckResult:
    """Every assertion of ``spec`` over ``model``: the check's result, one child each."""
    if assertions is None:
        judges = JUDGES[kind]
        assertions = [(_pick(judges, a, kind), a) for a in spec.get("expect", [])]
    kids = []
    for judge, assertion in assertions:
        try:
            ok, detail = judge(model, assertion, spec)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        kids.append(CheckResult(f"{kind}.{_first_key(assertion)}", ok, float(ok), detail))
    failed = [k.detail for k in kids if not k.passed]
    passed = not failed
    detail = f"{spec.get('path', '')} ({model.get('format')}): " + (
        f"{len(kids)} assertion(s) hold" if passed else "; ".join(failed)[:800]
    )
    return CheckResult(kind, passed, float(passed), detail, kids)


def _first_key(assertion: Mapping[str, Any]) -> str:
    return next(iter(assertion), "")


def _pick(judges: Mapping[str, Judge], assertion: Mapping[str, Any], kind: str) -> Judge:
    if not isinstance(assertion, Mapping):
        raise ValueError(f"a {kind} assertion is an object, not {show(assertion)}")
    for key in assertion:
        if key in judges:
            return judges[key]
    raise ValueError(f"no {kind} assertion in {sorted(assertion)}; known: {sorted(judges)}")


for _kind, _judges in JUDGES.items():
    _document_check(_kind, _judges)
