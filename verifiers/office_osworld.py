"""OSWorld's office metrics as check kinds: ``compare_table``, ``compare_docx_files``,
``compare_pptx_files`` (its comparison in :mod:`.office_osworld_pptx`) and
``check_include_exclude``, with the semantics of OSWorld's own
functions (``desktop_env/evaluators/metrics/{table,docs,slides,general}.py``), written over our
document model (:mod:`.office_read`), not over openpyxl, pandas, python-docx and python-pptx.

The agent's file is read in the session's isolated runner like every office check
(:func:`.office.read_model`); the expected file is a trusted gold file (OSWorld's download,
from the cache), read in this process by the same reader. Spec (the OSWorld loader makes it
from a task's ``evaluator``)::

    {"kind": "compare_table", "path": "/home/user/Desktop/x.xlsx",
     "expected": {"name": "gold.xlsx", "base64": "..."},   # or {"path": "/cache/file"}
     "options": {"rules": [...]}}                          # OSWorld's options, verbatim

    {"kind": "check_include_exclude", "command": "...",      # or "path": a home file's text
     "rules": {"include": [...], "exclude": [...]}}

The score is the metric's (``compare_docx_files`` with ``fuzzy_match`` or ``content_only``
gives a similarity); the check passes at ``threshold`` (default 1.0). A rule or option OSWorld
has but this module does not compute (``pivot_table``, ``data_validation``, ``row_props``,
``col_props``, ``sheet_print``, ``sparkline``) raises: the loader lists such a task as not
supported, it never scores it wrongly.

Where we differ, knowingly: compare_table's ``style`` rule reads cells' own styles, not the
styles a conditional format would paint (OSWorld evaluates the rule's formulas with the
``formulas`` package); its ``filter`` rule compares the autofilter's range, not its column
criteria; compare_docx_files reads an ``.odt``'s paragraphs as our model does (OSWorld reads
every ``text:p`` with odfpy, headings aside). tests/verifiers/test_office_osworld.py runs
OSWorld's functions beside these on the same documents.
"""

from __future__ import annotations

import base64
import hashlib
import operator
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from palaestra.verifiers import office_read, office_xml
from palaestra.verifiers.base import CheckResult, check_kind
from palaestra.verifiers.computer import ComputerProbe
from palaestra.verifiers.office import TIMEOUT, Model, Unreadable, read_model
from palaestra.verifiers.office_osworld_pptx import compare_pptx_files

Metric = Callable[[Model, Model | None, Mapping[str, Any]], tuple[float, str]]


# ----- the documents ------------------------------------------------------------------------
@lru_cache(maxsize=32)
def _gold(digest: str, data: bytes, ext: str) -> Model:
    return office_read.parse(data, office_read.FORMATS, ext, detail=True)


def expected_model(spec: Mapping[str, Any]) -> tuple[Model, str] | None:
    """The gold document's model and its extension (trusted: read in this process)."""
    gold = spec.get("expected")
    if gold is None:
        return None
    if "base64" in gold:
        data = base64.b64decode(gold["base64"])
        name = str(gold.get("name", ""))
    else:
        name = str(gold["path"])
        data = Path(name).read_bytes()
    ext = Path(name).suffix.lower().lstrip(".")
    return _gold(hashlib.sha256(data).hexdigest(), data, ext), ext


def _osworld_check(kind: str, formats: tuple[str, ...], metric: Metric) -> None:
    @check_kind(kind)
    def check(probe: Any, spec: dict[str, Any]) -> CheckResult:
        options = dict(spec.get("options") or {})
        gold = expected_model(spec)  # a missing or broken gold file is a broken task: raises
        path = str(spec["path"])
        ext = Path(path).suffix.lower().lstrip(".")
        if gold is not None and kind == "compare_docx_files" and ext != gold[1]:
            # OSWorld compares a .docx with a .docx, an .odt with an .odt, else scores 0
            return CheckResult(kind, False, 0.0, f"{path}: a .{ext} against a .{gold[1]}")
        allowed = tuple(f for f in formats if f == ext) or formats
        try:
            result = read_model(
                probe, path, allowed, float(spec.get("timeout", TIMEOUT)), detail=True
            )
        except Unreadable as exc:
            return CheckResult(kind, False, 0.0, f"{path}: {exc}")
        score, detail = metric(result, gold[0] if gold else None, options)
        passed = score >= float(spec.get("threshold", 1.0)) - 1e-9
        return CheckResult(kind, passed, round(float(score), 6), f"{path}: {detail}")


# ----- shared: rapidfuzz's ratio, OSWorld's value rules ---------------------------------------
def fuzz_ratio(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.ratio``: 100 * (1 - indel distance / total length), the longest
    common subsequence found bit-parallel (Hyyrö), so a page of text costs little."""
    if not a and not b:
        return 100.0
    if len(a) < len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for i, ch in enumerate(b):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for ch in a:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    lcs = len(b) - bin(v).count("1")
    return 100.0 * (1 - (len(a) + len(b) - 2 * lcs) / (len(a) + len(b)))


def match_rule(value: Any, rule: Mapping[str, Any]) -> bool:
    """OSWorld's ``_match_value_to_rule``: ``eq ne le lt ge gt``, ``re[.FLAG...]``,
    ``approx:THRESHOLD``, ``range.XY`` ([a, b] with X, Y in ``e``/``t``), ``str_list_eq``,
    ``str_set_eq``."""
    method, ref = str(rule["method"]), rule["ref"]
    try:
        if method.startswith("re"):
            flags = 0
            for name in method.split(".")[1:]:
                flags |= getattr(re, name)
            return re.search(ref, value, flags) is not None
        if method in ("eq", "ne", "le", "lt", "ge", "gt"):
            return bool(getattr(operator, method)(value, ref))
        if method.startswith("approx"):
            try:
                return abs(float(value) - float(ref)) <= float(method.split(":")[1])
            except (TypeError, ValueError):
                return False
        if method.startswith("range."):
            left, right = method[6], method[7]
            return bool(
                getattr(operator, "l" + left)(ref[0], value)
                and getattr(operator, "l" + right)(value, ref[1])
            )
        if method in ("str_list_eq", "str_set_eq"):
            items = str(value).strip("\"'").split(",")
            return (list if method == "str_list_eq" else set)(items) == (
                list if method == "str_list_eq" else set
            )(ref)
    except TypeError:  # None against a number: OSWorld's comparison raises, scoring 0
        return False
    raise ValueError(f"OSWorld value rule {method!r} is not supported")


# ----- compare_table --------------------------------------------------------------------------
NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
      "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}  # fmt: skip
CHART_TAGS = {"bar": "barChart", "line": "lineChart", "pie": "pieChart", "donut": "doughnutChart",
              "area": "areaChart", "scatter": "scatterChart", "radar": "radarChart",
              "bubble": "bubbleChart", "stock": "stockChart"}  # fmt: skip
UNSUPPORTED = ("pivot_table", "data_validation", "row_props", "col_props", "sheet_print",
               "sparkline")  # fmt: skip


def _sheet_ref(
    idx: Any, result: Model, expected: Model | None
) -> tuple[Model | None, Model | None]:
    """OSWorld's sheet index (``0``, ``"RI0"``, ``"RNSheet1"``, ``"EI0"``, ``"ENSheet1"``) ->
    (the book, the sheet, or None when it has no such sheet)."""
    if isinstance(idx, int):
        sheets = result["sheets"]
        return result, sheets[idx] if 0 <= idx < len(sheets) else None
    text = str(idx)
    book: Model | None = result if text[:1] == "R" else expected
    if book is None or text[:2] not in ("RI", "RN", "EI", "EN"):
        raise ValueError(f"unrecognized sheet index {text!r}")
    if text[1] == "I":
        i = int(text[2:])
        return book, book["sheets"][i] if 0 <= i < len(book["sheets"]) else None
    name = text[2:]
    return book, next((s for s in book["sheets"] if s["name"] == name), None)


def _value(cell: Model | None) -> Any:
    """OSWorld's ``read_cell_value``: numbers as floats, text as text, else None."""
    if cell is None:
        return None
    v = cell.get("v")
    if isinstance(v, bool):
        return None
    if isinstance(v, dict):
        return v.get("error")
    return float(v) if isinstance(v, int | float) else v


def _grid(sheet: Model) -> tuple[int, int, int, int] | None:
    refs = [office_xml.split_ref(k) for k in sheet["cells"]]
    if not refs:
        return None
    rows, cols = [r for r, _ in refs], [c for _, c in refs]
    return min(rows), min(cols), max(rows), max(cols)


def _kind(value: Any, style: Model) -> tuple[str, Any]:
    """A cell as pandas would hold it: (kind, value)."""
    if value is None or (isinstance(value, str) and value in NA):
        return "nan", None
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, dict):
        return "str", value.get("error")
    if isinstance(value, int | float):
        if style.get("category") in ("date", "datetime"):
            return "date", round(float(value), 6)
        if style.get("category") == "time":
            return "time", round(float(value), 6)
        return ("int" if float(value).is_integer() else "float"), float(value)
    return "str", value


def _frame(book: Model, sheet: Model, precision: int) -> tuple[list[Any], list[tuple[str, list]]]:
    """The sheet as ``pd.read_excel`` makes it: header labels, and per column its dtype and
    values (numbers rounded as ``DataFrame.round`` does, NaN as None)."""
    box = _grid(sheet)
    if box is None:
        return [], []
    r0, c0, r1, c1 = box
    styles = book["styles"]
    rows = []
    for r in range(r0, r1 + 1):
        row = []
        for c in range(c0, c1 + 1):
            cell = sheet["cells"].get(f"{office_xml.col_letter(c)}{r}")
            style = styles[cell["s"]] if cell and cell.get("s", 0) < len(styles) else {}
            row.append(_kind(cell.get("v") if cell else None, style))
        while row and row[-1][0] == "nan":  # pandas drops a row's trailing empty cells
            row.pop()
        rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        return [], []
    width = max(len(r) for r in rows)
    rows = [r + [("nan", None)] * (width - len(r)) for r in rows]
    labels: list[Any] = []
    seen: dict[Any, int] = {}
    for i, (kind, value) in enumerate(rows[0]):
        label = f"Unnamed: {i}" if kind == "nan" else value
        if label in seen:  # pandas mangles a repeated label: "x", "x.1"
            seen[label] += 1
            label = f"{label}.{seen[label]}"
        else:
            seen[label] = 0
        labels.append(label)
    columns = []
    for j in range(width):
        cells = [row[j] for row in rows[1:]]
        kinds = {k for k, _ in cells if k != "nan"}
        missing = any(k == "nan" for k, _ in cells)
        if not kinds or kinds <= {"int", "float"}:
            dtype = "int" if kinds == {"int"} and not missing else "float"
        elif kinds == {"bool"} and not missing:
            dtype = "bool"
        elif kinds == {"date"}:
            dtype = "date"
        else:
            dtype = "object"
        values = []
        for _, value in cells:
            if dtype in ("int", "float") and value is not None:
                value = round(float(value), precision)
            values.append(value)
        columns.append((dtype, values))
    return labels, columns


def _style_of(book: Model, cell: Model | None, prop: str, merged: bool) -> Any:
    """OSWorld's ``_read_cell_style`` for one property, as openpyxl would report it."""
    if prop == "merge":
        return merged
    style = book["styles"][cell["s"]] if cell and cell.get("s", 0) < len(book["styles"]) else {}
    has_value = cell is not None and cell.get("v") is not None
    numeric = has_value and isinstance(cell.get("v"), int | float)  # type: ignore[union-attr]
    fill = style.get("fill")
    table = {
        "number_format": style.get("numfmt", "General") if numeric else None,
        "font_name": style.get("font") if has_value else None,
        "font_color": ("FF" + style["color"][1:]) if has_value and style.get("color") else None,
        "font_bold": bool(style.get("bold")) if has_value else None,
        "font_italic": bool(style.get("italic")) if has_value else None,
        "font_underline": ("single" if style.get("underline") else None) if has_value else None,
        "font_size": style.get("size") if has_value else None,
        "fill_type": "patternFill",
        "bgcolor": ("FF" + fill[1:]) if fill else "00000000",
        "fgcolor": ("FF" + fill[1:]) if fill else "00000000",
    }
    if prop not in table:
        raise ValueError(f"OSWorld cell style {prop!r} is not supported")
    return table[prop]


def _merged_cells(sheet: Model) -> set[str]:
    """The cells inside a merged range but its first (openpyxl's MergedCell)."""
    out = set()
    for ref in sheet["merged"]:
        a, _, b = ref.partition(":")
        (r1, c1), (r2, c2) = office_xml.split_ref(a), office_xml.split_ref(b or a)
        for r in range(r1, r2 + 1):
            for c in range(c1, c2 + 1):
                if (r, c) != (r1, c1):
                    out.add(f"{office_xml.col_letter(c)}{r}")
    return out


class MetricRaises(Exception):
    """OSWorld's function raises on this document (its runner scores that 0)."""


CF_OPS = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le,
          "=": operator.eq, "!=": operator.ne}  # fmt: skip


def _cf_active(sheet: Model) -> dict[str, int | None]:
    """The cells a ``cellIs`` conditional format with constant bounds paints, and the
    differential style it paints them with (a later rule over an earlier one)."""
    out: dict[str, int | None] = {}
    for rule in sheet["cf"]:
        if rule["type"] != "cell":
            raise ValueError(f"a {rule['type']} conditional format's style is not computed")
        bounds = [office_xml.number(v) for v in rule["values"]]
        if any(b is None for b in bounds):
            raise ValueError("a conditional format with a formula bound is not computed")
        op = rule["operator"]
        for rng in rule["ranges"]:
            a, _, b = rng.partition(":")
            (r1, c1), (r2, c2) = office_xml.split_ref(a), office_xml.split_ref(b or a)
            for r in range(r1, r2 + 1):
                for c in range(c1, c2 + 1):
                    name = f"{office_xml.col_letter(c)}{r}"
                    value = _value(sheet["cells"].get(name))
                    if value is None or isinstance(value, str):
                        continue  # OSWorld skips empty cells; text against a number is False
                    if _cf_hit(op, value, bounds):  # type: ignore[arg-type]
                        out[name] = rule.get("dxf")
    return out


def _cf_hit(op: str, value: float, bounds: list[float]) -> bool:
    if op in CF_OPS:
        return bool(CF_OPS[op](value, bounds[0]))
    lo, hi = min(bounds), max(bounds)
    if op == "between":
        return lo <= value <= hi
    if op == "not-between":
        return value < lo or value > hi
    raise ValueError(f"conditional format operator {op!r} is not computed")


FONT_KEYS = {"font_bold": "bold", "font_italic": "italic", "font_size": "size",
             "font_name": "name", "font_underline": "underline", "font_color": "color"}  # fmt: skip


def _dxf_style(book: Model, dxf_id: int | None, cell: Model | None, prop: str) -> Any:
    """A property as the conditional format's differential style gives it (openpyxl raises
    where the style has no such part, and so does OSWorld's metric)."""
    dxfs = book.get("dxfs", [])
    dxf = dxfs[dxf_id] if dxf_id is not None and dxf_id < len(dxfs) else None
    if dxf is None:
        raise MetricRaises("a conditional format without its style")
    has_value = cell is not None and cell.get("v") is not None
    if prop in ("bgcolor", "fgcolor"):
        return dxf["bg"]
    if prop == "fill_type":
        return "patternFill"
    if prop == "number_format":
        if not (has_value and isinstance(_value(cell), float)):
            return None
        if dxf["numfmt"] is None:
            raise MetricRaises("a conditional style without a number format")
        return dxf["numfmt"]
    if prop not in FONT_KEYS:
        raise ValueError(f"OSWorld cell style {prop!r} is not supported")
    if not has_value:
        return None
    font = dxf["font"]
    if font is None or (prop == "font_color" and font["color"] is None):
        raise MetricRaises(f"a conditional style without a font for {prop}")
    value = font[FONT_KEYS[prop]]
    if prop in ("font_bold", "font_italic"):
        return bool(value)
    if prop == "font_underline":
        return "single" if value else None
    return value


def _styles(book: Model, sheet: Model | None, props: list[str]) -> dict[str, list[Any]]:
    """OSWorld's ``load_xlsx_styles``: each cell's properties, a conditional format's over
    the cells it paints."""
    if sheet is None:
        return {}
    box = _grid(sheet)
    merged = _merged_cells(sheet)
    out = {}
    if box is not None:
        for r in range(box[0], box[2] + 1):
            for c in range(box[1], box[3] + 1):
                name = f"{office_xml.col_letter(c)}{r}"
                cell = sheet["cells"].get(name)
                out[name] = [_style_of(book, cell, p, name in merged) for p in props]
    for name, dxf in _cf_active(sheet).items():
        cell = sheet["cells"].get(name)
        out[name] = [
            name in merged if p == "merge" else _dxf_style(book, dxf, cell, p) for p in props
        ]
    return out


def _charts(sheet: Model | None, props: list[str]) -> dict[str, dict[str, Any]]:
    if sheet is None:
        return {}
    out = {}
    for chart in sheet["charts"]:
        key = ";".join(f"{s['values'] or ''},{s['categories'] or ''}" for s in chart["series"])
        info: dict[str, Any] = {}
        for prop in props:
            if prop == "type":
                info["type"] = CHART_TAGS.get(chart["type"] or "", chart["type"])
            elif prop == "title":
                info["title"] = chart["title"]
            elif prop == "direction":
                info["direction"] = (
                    ("bar" if chart["horizontal"] else "col") if chart["type"] == "bar" else None
                )
            else:
                raise ValueError(f"OSWorld chart property {prop!r} is not supported")
        out[key] = info
    return out


def _fuzzy_value(book: Model, sheet: Model | None, ref: str) -> str:
    return str(_value(sheet["cells"].get(ref)) if sheet else None)


def compare_table(
    result: Model, expected: Model | None, options: Mapping[str, Any]
) -> tuple[float, str]:
    for rule in options["rules"]:
        kind = rule["type"]
        if kind in UNSUPPORTED:
            raise ValueError(f"compare_table rule {kind!r} is not supported")

    def pair() -> tuple[tuple[Model | None, Model | None], tuple[Model | None, Model | None]]:
        return _sheet_ref(rule["sheet_idx0"], result, expected), _sheet_ref(
            rule["sheet_idx1"], result, expected
        )

    for rule in options["rules"]:
        kind = rule["type"]
        if kind == "sheet_name":
            ok = expected is not None and [s["name"] for s in result["sheets"]] == [
                s["name"] for s in expected["sheets"]
            ]
        elif kind == "sheet_data":
            (b1, s1), (b2, s2) = pair()
            if s1 is None or s2 is None or b1 is None or b2 is None:
                return 0.0, f"sheet_data: no sheet {rule['sheet_idx0']!r}/{rule['sheet_idx1']!r}"
            precision = int(rule.get("precision", 4))
            ok = _frame(b1, s1, precision) == _frame(b2, s2, precision)
        elif kind == "sheet_fuzzy":
            (b1, s1), (b2, s2) = pair()
            ok = all(_fuzzy(b1, s1, b2, s2, sub) for sub in rule["rules"])
        elif kind == "chart":
            (_, s1), (_, s2) = pair()
            props = list(rule.get("chart_props", []))
            ok = _charts(s1, props) == _charts(s2, props)
        elif kind == "style":
            (b1, s1), (b2, s2) = pair()
            props = list(rule.get("props", []))
            try:
                ok = b1 is not None and b2 is not None
                ok = ok and _styles(b1, s1, props) == _styles(b2, s2, props)  # type: ignore[arg-type]
            except MetricRaises as exc:
                return 0.0, f"compare_table: OSWorld's metric fails here: {exc}"
        elif kind == "freeze":
            (_, s1), (_, s2) = pair()
            if s1 is None:
                return 0.0, f"freeze: no sheet {rule['sheet_idx0']!r}"
            ok = s2 is not None and s1["freeze"] == s2["freeze"]
        elif kind == "zoom":
            _, sheet = _sheet_ref(rule["sheet_idx"], result, expected)
            if sheet is None:
                return 0.0, f"zoom: no sheet {rule['sheet_idx']!r}"
            ok = match_rule(sheet["zoom"] or 100.0, rule)
        elif kind == "filter":
            (_, s1), (_, s2) = pair()
            ok = (s1 or {}).get("filter") == (s2 or {}).get("filter")
        elif kind == "check_cell":
            book, sheet = _sheet_ref(rule["sheet_idx"], result, expected)
            if sheet is None or book is None:
                return 0.0, f"check_cell: no sheet {rule['sheet_idx']!r}"
            coord = str(rule["coordinate"])
            cell = sheet["cells"].get(coord)
            merged = coord in _merged_cells(sheet)
            ok = all(
                match_rule(
                    _value(cell) if prop == "value" else _style_of(book, cell, prop, merged), how
                )
                for prop, how in rule["props"].items()
            )
        else:
            raise ValueError(f"compare_table rule {kind!r} is not supported")
        if not ok:
            return 0.0, f"compare_table: rule {kind} fails"
    return 1.0, "compare_table: every rule holds"


def _fuzzy(
    b1: Model | None, s1: Model | None, b2: Model | None, s2: Model | None, rule: Mapping[str, Any]
) -> bool:
    ranges = rule["range"] if isinstance(rule["range"], list) else str(rule["range"]).split()
    for rng in ranges:
        a, _, b = str(rng).partition(":")
        (r1, c1), (r2, c2) = office_xml.split_ref(a), office_xml.split_ref(b or a)
        for r in range(r1, r2 + 1):
            for c in range(c1, c2 + 1):
                ref = f"{office_xml.col_letter(c)}{r}"
                v1, v2 = _fuzzy_value(b1 or {}, s1, ref), _fuzzy_value(b2 or {}, s2, ref)
                for old, new in rule.get("normalization", []):
                    v1, v2 = v1.replace(old, new), v2.replace(old, new)
                if "trim_leadings" in rule:
                    v1, v2 = v1.lstrip(rule["trim_leadings"]), v2.lstrip(rule["trim_leadings"])
                if "trim_trailings" in rule:
                    v1 = v1.rstrip(rule["trim_trailings"])
                    v2 = v2.rstrip(rule["trim_trailings"])
                if "ignore_chars" in rule:
                    drop = set(rule["ignore_chars"])
                    v1 = "".join(ch for ch in v1 if ch not in drop)
                    v2 = "".join(ch for ch in v2 if ch not in drop)
                if rule.get("ignore_case"):
                    v1, v2 = v1.lower(), v2.lower()
                how = rule["type"]
                ok = (
                    v2 in v1
                    if how == "includes"
                    else v1 in v2
                    if how == "included_by"
                    else fuzz_ratio(v1, v2) >= float(rule.get("threshold", 85.0))
                    if how == "fuzzy_match"
                    else v1 == v2
                )
                if not ok:
                    return False
    return True


# ----- compare_docx_files -------------------------------------------------------------------
def compare_docx_files(
    result: Model, expected: Model | None, options: Mapping[str, Any]
) -> tuple[float, str]:
    if expected is None:
        return 0.0, "compare_docx_files needs the expected document"
    ignore_blanks = options.get("ignore_blanks", True)
    ignore_case = options.get("ignore_case", False)
    fuzzy = options.get("fuzzy_match", False)
    p1 = [p["text"] for p in result["paragraphs"]]
    p2 = [p["text"] for p in expected["paragraphs"]]
    if options.get("ignore_order", False):
        p1, p2 = sorted(p1), sorted(p2)
    if options.get("delete_empty_lines", False):
        p1, p2 = [p for p in p1 if p.strip()], [p for p in p2 if p.strip()]

    def joined(paras: list[str]) -> str:
        text = re.sub(r"\s+", " ", "\n".join(paras)).strip()
        return text.lower() if ignore_case else text

    if options.get("content_only", False):
        score = fuzz_ratio(joined(p1), joined(p2)) / 100
        return score, f"the text is {score:.0%} alike"
    if ignore_blanks:
        t1, t2 = joined(p1), joined(p2)
        if fuzzy:
            score = fuzz_ratio(t1, t2) / 100
            return score, f"the text is {score:.0%} alike"
        return (1.0, "the text matches") if t1 == t2 else (0.0, "the text differs")
    if len(p1) != len(p2):
        return 0.0, f"{len(p1)} paragraphs, {len(p2)} expected"
    if fuzzy:
        if not p1:
            return 1.0, "no paragraphs"
        total = sum(
            fuzz_ratio(a.lower(), b.lower()) if ignore_case else fuzz_ratio(a, b)
            for a, b in zip(p1, p2, strict=True)
        )
        score = total / 100 / len(p1)
        return score, f"the paragraphs are {score:.0%} alike"
    for i, (a, b) in enumerate(zip(p1, p2, strict=True)):
        if (a.lower() != b.lower()) if ignore_case else (a != b):
            return 0.0, f"paragraph {i + 1} differs"
    return 1.0, "every paragraph matches"


# ----- check_include_exclude ----------------------------------------------------------------
@check_kind("check_include_exclude")
def _check_include_exclude(probe: Any, spec: dict[str, Any]) -> CheckResult:
    """OSWorld's ``check_include_exclude``: every ``include`` string is in the result and no
    ``exclude`` string; the result is a command's output (run like ``command_output``) or a
    home file's text."""
    if not isinstance(probe, ComputerProbe):
        raise TypeError("check_include_exclude needs a computer session's probe")
    rules = spec["rules"]
    try:
        if "command" in spec:
            _code, text, _err = probe.run(str(spec["command"]), float(spec.get("timeout", 10)))
        else:
            text = probe.text(str(spec["path"]))
    except Exception as exc:  # the agent's doing (a file gone, a command hung): a failed check
        return CheckResult("check_include_exclude", False, 0.0, f"{type(exc).__name__}: {exc}")
    missing = [s for s in rules.get("include", []) if s not in text]
    present = [s for s in rules.get("exclude", []) if s in text]
    ok = not missing and not present
    detail = "included and excluded as required" if ok else f"lacks {missing}, has {present}"
    return CheckResult("check_include_exclude", ok, float(ok), detail)


_osworld_check("compare_table", ("xlsx",), compare_table)
_osworld_check("compare_docx_files", ("docx", "odt"), compare_docx_files)
_osworld_check("compare_pptx_files", ("pptx",), compare_pptx_files)
