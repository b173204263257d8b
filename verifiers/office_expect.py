"""The assertions of the office check kinds (:mod:`.office`), one judge per assertion key,
over the document model of :mod:`.office_read`; the spec language is :mod:`.office`'s
docstring. A judge returns (holds, what it found); the comparisons are shared by all three
apps: numbers within a tolerance, text stripped and case-blind where the spec allows."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from palaestra.verifiers import office_xml

Model = dict[str, Any]
#: (model, assertion, the check's spec) -> (holds, detail)
Judge = Callable[[Model, Mapping[str, Any], Mapping[str, Any]], tuple[bool, str]]


# ----- comparisons --------------------------------------------------------------------------
def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _date_serial(text: str) -> float:
    return float((date.fromisoformat(text) - date(1899, 12, 30)).days)


def text_equal(actual: Any, want: Any, ignore_case: bool = False, strip: bool = True) -> bool:
    if actual is None:
        return want is None or want == ""
    a, b = str(actual), str(want)
    if strip:
        a, b = a.strip(), b.strip()
    if ignore_case:
        a, b = a.casefold(), b.casefold()
    return a == b


def value_equal(actual: Any, want: Any, tol: float = 1e-6, ignore_case: bool = False) -> bool:
    """A cell's value against the expected one (numbers within ``tol``, text tolerant)."""
    if isinstance(want, Mapping) and "date" in want:
        want = _date_serial(str(want["date"]))
        return _is_number(actual) and abs(math.floor(actual) - want) < 1e-9
    if isinstance(want, bool) or isinstance(actual, bool):
        return actual is want or (isinstance(actual, bool) and actual == want)
    if _is_number(want):
        return _is_number(actual) and abs(float(actual) - float(want)) <= tol + 1e-9 * abs(want)
    if want is None:
        return actual is None or actual == ""
    return isinstance(actual, str) and text_equal(actual, want, ignore_case)


def formula_key(formula: str) -> str:
    return re.sub(r"[\s$]", "", formula).upper().lstrip("=")


def match_text(actual: str, want: str, how: str, ignore_case: bool) -> bool:
    if how == "pattern":
        return re.search(want, actual, re.IGNORECASE if ignore_case else 0) is not None
    if how == "contains":
        a, b = (actual.casefold(), want.casefold()) if ignore_case else (actual, want)
        return b.strip() in a
    return text_equal(actual, want, ignore_case)


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ic(assertion: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    return bool(assertion.get("ignore_case", spec.get("ignore_case", False)))


# ----- spreadsheets -------------------------------------------------------------------------
def _sheet(model: Model, assertion: Mapping[str, Any], spec: Mapping[str, Any]) -> Model:
    want = assertion.get("sheet", spec.get("sheet"))
    sheets = model["sheets"]
    if want is None:
        return sheets[0]
    if isinstance(want, int):
        if want >= len(sheets):
            raise KeyError(f"no sheet {want} (the workbook has {len(sheets)})")
        return sheets[want]
    for sheet in sheets:
        if text_equal(sheet["name"], want, ignore_case=True):
            return sheet
    raise KeyError(f"no sheet {want!r} (sheets: {[s['name'] for s in sheets]})")


def _cells(ref: str) -> list[list[str]]:
    """``"A2:C3"`` -> rows of cell names."""
    a, _, b = ref.replace("$", "").partition(":")
    r1, c1 = office_xml.split_ref(a)
    r2, c2 = office_xml.split_ref(b or a)
    return [
        [f"{office_xml.col_letter(c)}{r}" for c in range(min(c1, c2), max(c1, c2) + 1)]
        for r in range(min(r1, r2), max(r1, r2) + 1)
    ]


def _cell(model: Model, sheet: Model, name: str) -> tuple[Model, Model]:
    cell = sheet["cells"].get(name.replace("$", "").upper(), {"v": None})
    styles = model["styles"]
    style = styles[cell["s"]] if "s" in cell and cell["s"] < len(styles) else {}
    return cell, style


STYLE_PROPS = ("bold", "italic", "underline", "font", "size", "align")


def _cell_problems(
    model: Model, sheet: Model, name: str, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> list[str]:
    """What about cell ``name`` differs from assertion ``a`` (empty when all holds)."""
    cell, style = _cell(model, sheet, name)
    value, formula = cell.get("v"), cell.get("f")
    bad = []
    if "value" in a and not value_equal(value, a["value"], float(a.get("tol", 1e-6)), _ic(a, spec)):
        why = " (a formula with no computed value saved)" if formula and value is None else ""
        bad.append(f"{name} is {show(value)}, not {show(a['value'])}{why}")
    if "empty" in a and (value in (None, "") and not formula) != bool(a["empty"]):
        bad.append(f"{name} is {'empty' if value in (None, '') else show(value)}")
    if "formula" in a:
        want = a["formula"]
        if isinstance(want, bool):
            ok = bool(formula) == want
        else:
            ok = formula is not None and formula_key(formula) == formula_key(str(want))
        if not ok:
            bad.append(f"{name} has formula {show(formula)}")
    contains = formula_key(str(a.get("formula_contains", "")))
    if "formula_contains" in a and (formula is None or contains not in formula_key(formula)):
        bad.append(f"{name} has formula {show(formula)}")
    for prop in STYLE_PROPS:
        if prop in a:
            have = style.get(prop)
            ok = (
                abs((have or 0) - float(a[prop])) < 0.51
                if prop == "size" and a[prop] is not None
                else text_equal(have, a[prop], ignore_case=True)
                if isinstance(a[prop], str)
                else bool(have) == bool(a[prop])
            )
            if prop == "align" and a[prop] in ("left", None) and have in (None, "general"):
                ok = ok or a[prop] in ("left", None)
            if not ok:
                bad.append(f"{name} {prop} is {show(have)}")
    for prop in ("fill", "color"):
        if prop in a:
            have = style.get(prop)
            want = a[prop]
            ok = (have or "").upper() == (want or "").upper()
            if prop == "fill" and want is None:
                ok = have in (None, "#FFFFFF")
            if not ok:
                bad.append(f"{name} {prop} is {show(have)}")
    if "number_format" in a and style.get("category") != a["number_format"]:
        bad.append(f"{name} number format is {style.get('category')} ({style.get('numfmt')})")
    if "decimals" in a and style.get("decimals") != a["decimals"]:
        bad.append(f"{name} shows {style.get('decimals')} decimals")
    return bad


def _judge_cell(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    sheet = _sheet(model, a, spec)
    bad = _cell_problems(model, sheet, str(a["cell"]), a, spec)
    return not bad, "; ".join(bad) or f"{a['cell']} as expected"


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None or value == "":
        return (2, "")
    if _is_number(value):
        return (0, float(value))
    return (1, str(value).casefold())


def _judge_range(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    sheet = _sheet(model, a, spec)
    names = _cells(str(a["range"]))
    rows = [[sheet["cells"].get(n, {}).get("v") for n in row] for row in names]
    tol, ic = float(a.get("tol", 1e-6)), _ic(a, spec)

    def same(row: list[Any], want: list[Any]) -> bool:
        return len(row) == len(want) and all(
            value_equal(x, y, tol, ic) for x, y in zip(row, want, strict=True)
        )

    if "values" in a:
        want = a["values"]
        for i, (row, wrow) in enumerate(zip(rows, want, strict=False)):
            if not same(row, wrow):
                return False, f"row {i + 1} of {a['range']} is {show(row)}, not {show(wrow)}"
        if len(rows) != len(want):
            return False, f"{a['range']} has {len(rows)} rows, {len(want)} expected"
        return True, f"{a['range']} holds the expected values"
    if "rows_any_order" in a:
        left = list(a["rows_any_order"])
        for row in rows:
            hit = next((i for i, w in enumerate(left) if same(row, w)), None)
            if hit is None:
                return False, f"{a['range']} has a row {show(row)} not expected"
            left.pop(hit)
        return not left, f"{a['range']} {'holds' if not left else 'lacks'} the expected rows"
    if "sorted" in a:
        how = a["sorted"]
        by = how.get("by", 0)
        first_col = office_xml.split_ref(names[0][0])[1]
        idx = by if isinstance(by, int) else office_xml.split_ref(f"{by}1")[1] - first_col
        keys = [_sort_key(row[idx]) for row in rows]
        order = sorted(keys, reverse=bool(how.get("descending")))
        if how.get("descending"):  # empty cells still go last
            order = [k for k in order if k[0] != 2] + [k for k in order if k[0] == 2]
        ok = keys == order
        return ok, f"{a['range']} is {'' if ok else 'not '}sorted by {by}"
    bad = [p for row in names for n in row for p in _cell_problems(model, sheet, n, a, spec)]
    return not bad, "; ".join(bad[:5]) or f"every cell of {a['range']} as expected"


def _judge_sheets(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    names = [s["name"] for s in model["sheets"]]
    ok = len(names) == len(a["sheets"]) and all(
        text_equal(n, w, _ic(a, spec)) for n, w in zip(names, a["sheets"], strict=False)
    )
    return ok, f"sheets are {names}"


def _judge_has_sheet(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    names = [s["name"] for s in model["sheets"]]
    ok = any(text_equal(n, a["has_sheet"], ignore_case=True) for n in names)
    return ok == a.get("present", True), f"sheets are {names}"


def _sheet_field(field: str) -> Judge:
    def judge(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
        sheet = _sheet(model, a, spec)
        have, want = sheet.get(field), a[field]
        if field == "zoom":
            ok = have is not None and abs(float(have) - float(want)) < 0.5
        elif want is True:
            ok = bool(have)
        elif want is None or want is False:
            ok = not have
        else:
            ok = have is not None and str(have).replace("$", "").upper() == str(want).upper()
        return ok, f"{sheet['name']} {field} is {show(have)}"

    return judge


def _judge_merged(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    sheet = _sheet(model, a, spec)
    have = [m.upper() for m in sheet["merged"]]
    ok = str(a["merged"]).replace("$", "").upper() in have
    return ok == a.get("present", True), f"{sheet['name']} merged ranges: {have[:10]}"


def _values_match(have: list[Any], want: list[Any]) -> bool:
    if len(have) != len(want):
        return False
    for h, w in zip(have, want, strict=True):
        hv = office_xml.number(str(h).lstrip("="))
        if _is_number(w) and hv is not None:
            if abs(hv - float(w)) > 1e-6:
                return False
        elif str(h).strip().strip('"').casefold() != str(w).strip().strip('"').casefold():
            return False
    return True


def _judge_cf(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    sheet = _sheet(model, a, spec)
    want = a["conditional_format"]
    for rule in sheet["cf"]:
        if "range" in want and str(want["range"]).replace("$", "").upper() not in [
            r.upper() for r in rule["ranges"]
        ]:
            continue
        if "type" in want and rule["type"] != want["type"]:
            continue
        if "operator" in want and rule["operator"] != want["operator"]:
            continue
        if "values" in want and not _values_match(rule["values"], list(want["values"])):
            continue
        return True, f"{sheet['name']} has the conditional format"
    return False, f"{sheet['name']} conditional formats: {show(sheet['cf'][:3])}"


def _range_matches(have: str | None, want: str) -> bool:
    if have is None:
        return False
    want = want.replace("$", "")
    return have.upper() == want.upper() or have.rpartition("!")[2].upper() == want.upper()


def _judge_chart(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    sheet = _sheet(model, a, spec) if "sheet" in a or "sheet" in spec else None
    charts = sheet["charts"] if sheet else [c for s in model["sheets"] for c in s["charts"]]
    want = a["chart"]
    for chart in charts:
        if "type" in want and chart["type"] != want["type"]:
            continue
        if "horizontal" in want and chart["horizontal"] != want["horizontal"]:
            continue
        if "title" in want and not text_equal(chart["title"], want["title"], _ic(a, spec)):
            continue
        if "values" in want and not any(
            _range_matches(s["values"], want["values"]) for s in chart["series"]
        ):
            continue
        if "categories" in want and not any(
            _range_matches(s["categories"], want["categories"]) for s in chart["series"]
        ):
            continue
        return True, "a chart as expected"
    return False, f"charts: {show([(c['type'], c['title']) for c in charts])}"


def _judge_charts(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    n = sum(len(s["charts"]) for s in model["sheets"])
    return n == int(a["charts"]), f"{n} chart(s)"


SPREADSHEET: dict[str, Judge] = {
    "cell": _judge_cell,
    "range": _judge_range,
    "sheets": _judge_sheets,
    "has_sheet": _judge_has_sheet,
    "freeze": _sheet_field("freeze"),
    "filter": _sheet_field("filter"),
    "zoom": _sheet_field("zoom"),
    "merged": _judge_merged,
    "conditional_format": _judge_cf,
    "chart": _judge_chart,
    "charts": _judge_charts,
}


# ----- text documents -----------------------------------------------------------------------
STYLE_ALIASES = {"standard": "normal", "default paragraph style": "normal", "default": "normal"}


def style_key(name: str | None) -> str:
    key = re.sub(r"\s+", " ", (name or "").strip().casefold())
    return STYLE_ALIASES.get(key, key)


def _nonempty(model: Model) -> list[Model]:
    return [p for p in model["paragraphs"] if p["text"].strip()]


def _find_paragraphs(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> list[Model]:
    want = a["paragraph"]
    if isinstance(want, int):
        paras = _nonempty(model)
        return [paras[want]] if -len(paras) <= want < len(paras) else []
    how = a.get("match", "equals")
    return [p for p in model["paragraphs"] if match_text(p["text"], str(want), how, _ic(a, spec))]


def _paragraph_problems(p: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
    bad = []
    if "text" in a and not text_equal(p["text"], a["text"], _ic(a, spec)):
        bad.append(f"text is {show(p['text'])}")
    if "style" in a and style_key(p["style"]) != style_key(a["style"]):
        bad.append(f"style is {show(p['style'])}")
    if "heading" in a and p["heading"] != int(a["heading"]):
        bad.append(f"heading level is {p['heading']}")
    if "align" in a and p["align"] != a["align"]:
        bad.append(f"aligned {p['align']}")
    for prop in ("bold", "italic", "underline"):
        if prop in a and bool(p[prop]) != bool(a[prop]):
            bad.append(f"{'' if p[prop] else 'not '}{prop}")
    if "list" in a:
        lst = p["list"]
        kind = None if lst is None else ("numbered" if lst["ordered"] else "bullet")
        if kind != a["list"]:
            bad.append(f"list: {kind}")
    if "level" in a and (p["list"] or {}).get("level") != int(a["level"]):
        bad.append(f"list level {(p['list'] or {}).get('level')}")
    for key, prop in STYLED.items():
        if key in a and not styled(p.get("runs", []), str(a[key]), prop, _ic(a, spec)):
            bad.append(f"{show(a[key])} is not {prop}")
    return bad


def styled(runs: list[Model], needle: str, prop: str, ignore_case: bool = False) -> bool:
    """Some occurrence of ``needle`` in the runs' text has ``prop`` (bold...) on every
    character that is not a space."""
    text = "".join(r["text"] for r in runs)
    flags = [bool(r.get(prop)) for r in runs for _ in r["text"]]
    hay, want = text, needle.strip()
    if ignore_case and len(text.lower()) == len(text):  # lower() keeps the flags' positions
        hay, want = text.lower(), want.lower()
    start = hay.find(want) if want else -1
    while start >= 0:
        span = range(start, start + len(want))
        if all(flags[i] or text[i].isspace() for i in span):
            return True
        start = hay.find(want, start + 1)
    return False


STYLED = {"bold_text": "bold", "italic_text": "italic", "underline_text": "underline"}


def _judge_styled(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    """``{"bold_text": "net total"}``: some paragraph has these words, all of them bold."""
    key = next(k for k in STYLED if k in a)
    ok = any(
        styled(p.get("runs", []), str(a[key]), STYLED[key], _ic(a, spec))
        for p in model["paragraphs"]
    )
    return ok, f"{show(a[key])} is {'' if ok else 'not '}{STYLED[key]}"


def _judge_paragraph(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    found = _find_paragraphs(model, a, spec)
    if a.get("absent"):
        return not found, f"{len(found)} paragraph(s) match {show(a['paragraph'])}"
    if not found:
        return False, f"no paragraph matches {show(a['paragraph'])}"
    problems = [_paragraph_problems(p, a, spec) for p in found]
    if any(not bad for bad in problems):
        return True, f"paragraph {show(a['paragraph'])} as expected"
    return False, f"paragraph {show(a['paragraph'])}: {', '.join(problems[0])}"


def _all_text(model: Model) -> str:
    parts = [p["text"] for p in model["paragraphs"]]
    parts += [cell for table in model["tables"] for row in table for cell in row]
    return "\n".join(parts)


def _judge_contains(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    text = _all_text(model)
    key = "contains" if "contains" in a else "absent"
    needles = a[key] if isinstance(a[key], list) else [a[key]]
    found = [n for n in needles if match_text(text, str(n), "contains", _ic(a, spec))]
    if key == "contains":
        missing = [n for n in needles if n not in found]
        return not missing, f"the text lacks {show(missing)}" if missing else "the text has it"
    return not found, f"the text still has {show(found)}" if found else "the text lacks it"


def _judge_occurrences(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    text, needle = _all_text(model), str(a["occurrences"])
    if _ic(a, spec):
        text, needle = text.casefold(), needle.casefold()
    n = text.count(needle)
    return n == int(a["count"]), f"{show(a['occurrences'])} occurs {n} time(s)"


def _judge_headings(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    have = [[p["heading"], p["text"].strip()] for p in model["paragraphs"] if p["heading"]]
    want = [[int(level), str(text)] for level, text in a["headings"]]
    ok = len(have) == len(want) and all(
        h[0] == w[0] and text_equal(h[1], w[1], _ic(a, spec))
        for h, w in zip(have, want, strict=True)
    )
    return ok, f"headings are {show(have)}"


def _judge_order(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    texts = [p["text"] for p in model["paragraphs"] if p["text"].strip() or not a.get("adjacent")]
    at, last = 0, None
    for want in a["order"]:
        hit = next(
            (i for i in range(at, len(texts)) if text_equal(texts[i], want, _ic(a, spec))),
            None,
        )
        if hit is None:
            return False, f"{show(want)} is missing or out of order"
        if a.get("adjacent") and last is not None and hit != last + 1:
            return False, f"{show(want)} does not follow directly"
        at, last = hit + 1, hit
    return True, "the paragraphs are in order"


def _judge_list(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    paras, want = model["paragraphs"], list(a["list"])
    for i in range(len(paras) - len(want) + 1):
        run = paras[i : i + len(want)]
        if all(
            p["list"] is not None and text_equal(p["text"], w, _ic(a, spec))
            for p, w in zip(run, want, strict=True)
        ):
            if "ordered" in a and any(p["list"]["ordered"] != a["ordered"] for p in run):
                return False, f"the list is {'not ' if a['ordered'] else ''}numbered"
            return True, "the list is there"
    return False, "no list with these items"


def _judge_table(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    tables = model["tables"]
    idx = int(a["table"])
    if not -len(tables) <= idx < len(tables):
        return False, f"no table {idx} (the document has {len(tables)})"
    rows = tables[idx]
    bad = []
    if "rows" in a and len(rows) != int(a["rows"]):
        bad.append(f"{len(rows)} rows")
    if "cols" in a and max((len(r) for r in rows), default=0) != int(a["cols"]):
        bad.append(f"{max((len(r) for r in rows), default=0)} columns")
    if "cells" in a:
        want = a["cells"]
        same = len(rows) == len(want) and all(
            len(r) == len(w)
            and all(text_equal(x, y, _ic(a, spec)) for x, y in zip(r, w, strict=True))
            for r, w in zip(rows, want, strict=True)
        )
        if not same:
            bad.append(f"cells {show(rows)}")
    if "cell" in a:
        r, c = a["cell"]
        have = rows[r][c] if r < len(rows) and c < len(rows[r]) else None
        if not text_equal(have, a.get("text", ""), _ic(a, spec)):
            bad.append(f"cell {r},{c} is {show(have)}")
    return not bad, f"table {idx}: " + (", ".join(bad) or "as expected")


def _judge_tables(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    n = len(model["tables"])
    return n == int(a["tables"]), f"{n} table(s)"


def _judge_comment(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    how = a.get("match", "contains")
    for c in model["comments"]:
        if (
            match_text(c["text"], str(a["comment"]), how, _ic(a, spec))
            and ("author" not in a or text_equal(c["author"], a["author"], ignore_case=True))
            and (
                "anchor" not in a
                or match_text(c.get("anchor") or "", a["anchor"], "contains", True)
            )
        ):
            return True, "the comment is there"
    return False, f"comments: {show([c['text'] for c in model['comments']])}"


def _judge_comments(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    n = len(model["comments"])
    return n == int(a["comments"]), f"{n} comment(s)"


def _judge_page(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    page, want = model["page"], a["page"]
    tol = float(want.get("tol", 1.0))
    bad = []
    if "orientation" in want and page["orientation"] != want["orientation"]:
        bad.append(page["orientation"])
    for dim in ("width", "height"):
        if dim in want and (page[dim] is None or abs(page[dim] - float(want[dim])) > tol):
            bad.append(f"{dim} {page[dim]} mm")
    for side, value in dict(want.get("margins", {})).items():
        have = page["margins"].get(side)
        if have is None or abs(have - float(value)) > tol:
            bad.append(f"{side} margin {have} mm")
    return not bad, "page: " + (", ".join(bad) or "as expected")


TEXT_DOCUMENT: dict[str, Judge] = {
    "paragraph": _judge_paragraph,
    "contains": _judge_contains,
    "absent": _judge_contains,
    "occurrences": _judge_occurrences,
    "headings": _judge_headings,
    "order": _judge_order,
    "list": _judge_list,
    "table": _judge_table,
    "tables": _judge_tables,
    "comment": _judge_comment,
    "bold_text": _judge_styled,
    "italic_text": _judge_styled,
    "underline_text": _judge_styled,
    "comments": _judge_comments,
    "page": _judge_page,
}


# ----- presentations ------------------------------------------------------------------------
def _find_slide(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> Model | None:
    slides, want = model["slides"], a["slide"]
    if isinstance(want, int):
        return slides[want] if -len(slides) <= want < len(slides) else None
    return next((s for s in slides if text_equal(s["title"], want, _ic(a, spec))), None)


def _slide_text(slide: Model) -> str:
    return "\n".join([s["text"] for s in slide["shapes"]] + [slide["notes"]])


def _judge_slide(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    slide = _find_slide(model, a, spec)
    if a.get("absent"):
        return slide is None, f"slide {show(a['slide'])} is {'there' if slide else 'gone'}"
    if slide is None:
        return False, f"no slide {show(a['slide'])} ({len(model['slides'])} slides)"
    ic = _ic(a, spec)
    bad = []
    for field in ("title", "subtitle", "notes", "layout", "layout_kind", "background"):
        if field in a and not text_equal(slide[field], a[field], ic or field in LOOSE):
            bad.append(f"{field} is {show(slide[field])}")
    if "hidden" in a and slide["hidden"] != bool(a["hidden"]):
        bad.append("hidden" if slide["hidden"] else "shown")
    if "table" in a:
        want = [[str(c) for c in row] for row in a["table"]]
        if not any(_same_rows(t, want, ic) for t in slide["tables"]):
            bad.append(f"tables are {show(slide['tables'])}")
    for key, prop in STYLED.items():
        if key in a and not styled(slide["runs"], str(a[key]), prop, ic):
            bad.append(f"{show(a[key])} is not {prop}")
    if "images_at_least" in a and slide["images"] < int(a["images_at_least"]):
        bad.append(f"{slide['images']} image(s)")
    if "body" in a:
        have = [b for b in slide["body"] if b.strip()]
        want = [b for b in a["body"] if str(b).strip()]
        if len(have) != len(want) or not all(
            text_equal(h, w, ic) for h, w in zip(have, want, strict=True)
        ):
            bad.append(f"body is {show(have)}")
    for field, text in (
        ("body_contains", "\n".join(slide["body"])),
        ("notes_contains", slide["notes"]),
        ("contains", _slide_text(slide)),
    ):
        if field in a and not match_text(text, str(a[field]), "contains", ic):
            bad.append(f"{field.split('_')[0]} lacks {show(a[field])}")
    if "images" in a and slide["images"] != int(a["images"]):
        bad.append(f"{slide['images']} image(s)")
    return not bad, f"slide {show(a['slide'])}: " + (", ".join(bad) or "as expected")


LOOSE = ("layout", "layout_kind", "background")


def _same_rows(have: list[list[str]], want: list[list[str]], ic: bool) -> bool:
    return len(have) == len(want) and all(
        len(h) == len(w) and all(text_equal(x, y, ic) for x, y in zip(h, w, strict=True))
        for h, w in zip(have, want, strict=True)
    )


def _judge_deck_text(
    model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]
) -> tuple[bool, str]:
    """``{"contains": "X"}``: some slide shows X; ``{"absent": "X"}``: none does (notes
    included)."""
    key = "contains" if "contains" in a else "absent"
    hits = [
        i
        for i, s in enumerate(model["slides"])
        if match_text(_slide_text(s), str(a[key]), "contains", _ic(a, spec))
    ]
    ok = bool(hits) == (key == "contains")
    return ok, f"{show(a[key])} is on slide(s) {hits}" if hits else f"{show(a[key])} is nowhere"


def _judge_slides(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    n = len(model["slides"])
    return n == int(a["slides"]), f"{n} slide(s)"


def _judge_titles(model: Model, a: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[bool, str]:
    have = [s["title"] for s in model["slides"]]
    want = list(a["titles"])
    ok = len(have) == len(want) and all(
        text_equal(h, w, _ic(a, spec)) for h, w in zip(have, want, strict=True)
    )
    return ok, f"titles are {show(have)}"


PRESENTATION: dict[str, Judge] = {
    "slide": _judge_slide,
    "slides": _judge_slides,
    "titles": _judge_titles,
    "contains": _judge_deck_text,
    "absent": _judge_deck_text,
}

JUDGES = {"spreadsheet": SPREADSHEET, "text_document": TEXT_DOCUMENT, "presentation": PRESENTATION}
