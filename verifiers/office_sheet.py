"""Spreadsheets (``.xlsx`` and ``.ods``) into the model :mod:`.office_read` describes:
cells with values, formulas and styles, number formats, merged cells, frozen panes,
autofilters, conditional formats and charts."""

from __future__ import annotations

import json
import posixpath
import re
import xml.etree.ElementTree as ET
from typing import Any

from palaestra.verifiers.office_xml import (
    MAX_CELLS,
    DocumentError,
    OdfStyles,
    Package,
    at,
    col_letter,
    cut,
    duration_days,
    either,
    find,
    findall,
    hex_color,
    length_mm,
    norm_range,
    number,
    odf_align,
    odf_bold,
    odf_text,
    q,
    rich_text,
    serial,
    split_ref,
)

BUILTIN_FORMATS = {
    0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00",
    5: '"$"#,##0_);("$"#,##0)', 6: '"$"#,##0_);[Red]("$"#,##0)',
    7: '"$"#,##0.00_);("$"#,##0.00)', 8: '"$"#,##0.00_);[Red]("$"#,##0.00)',
    9: "0%", 10: "0.00%", 11: "0.00E+00", 12: "# ?/?", 13: "# ??/??",
    14: "mm-dd-yy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 18: "h:mm AM/PM",
    19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss", 22: "m/d/yy h:mm",
    37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)",
    40: "#,##0.00;[Red](#,##0.00)", 44: '_("$"* #,##0.00_)', 45: "mm:ss", 46: "[h]:mm:ss",
    47: "mmss.0", 48: "##0.0E+0", 49: "@",
}  # fmt: skip


CURRENCY = "$€£¥₹₽¢"


def describe_format(code: str) -> tuple[str, int | None]:
    """(category, decimals) of an OOXML number format code: ``general``, ``text``,
    ``percent``, ``scientific``, ``currency``, ``date``, ``datetime``, ``time``, ``number``."""
    first = code.split(";")[0]
    bare = re.sub(r'"[^"]*"|\\.', "", first)  # quoted and escaped text say nothing of kind
    currency = re.search(r"\[\$[^\]-]", bare) is not None or any(ch in first for ch in CURRENCY)
    bare = re.sub(r"\[[^\]]*\]", "", bare)  # [Red], [$€-407], [h]
    m = re.search(r"\.([0#?]+)", bare)
    decimals = len(m.group(1)) if m else (0 if re.search(r"[0#?]", bare) else None)
    low = bare.lower()
    if low.strip() in ("general", ""):
        return "general", None
    if low.strip() == "@":
        return "text", None
    if "%" in bare:
        return "percent", decimals
    if re.search(r"e[+-]", low):
        return "scientific", decimals
    if currency:
        return "currency", decimals
    has_date = re.search(r"[dy]", low) is not None or re.search(r"m{3,}", low) is not None
    has_time = re.search(r"[hs]", low) is not None
    if has_date and has_time:
        return "datetime", None
    if has_date or (("m" in low) and not has_time and not re.search(r"[0#?]", low)):
        return "date", None
    if has_time:
        return "time", None
    return "number", decimals


class Styles:
    """A table of canonical cell styles, each stored once."""

    def __init__(self) -> None:
        self.table: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}

    def add(self, style: dict[str, Any]) -> int:
        key = json.dumps(style, sort_keys=True)
        if key not in self.index:
            self.index[key] = len(self.table)
            self.table.append(style)
        return self.index[key]


def cell_style(
    bold: bool = False,
    italic: bool = False,
    underline: bool = False,
    color: str | None = None,
    fill: str | None = None,
    font: str | None = None,
    size: float | None = None,
    align: str | None = None,
    numfmt: str = "General",
    category: str | None = None,
    decimals: int | None = None,
) -> dict[str, Any]:
    if category is None:
        category, decimals = describe_format(numfmt)
    return {
        "bold": bold,
        "italic": italic,
        "underline": underline,
        "color": color,
        "fill": fill,
        "font": font,
        "size": size,
        "align": align,
        "numfmt": numfmt,
        "category": category,
        "decimals": decimals,
    }


def sheet_model(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "cells": {},
        "merged": [],
        "freeze": None,
        "filter": None,
        "zoom": 100.0,
        "cf": [],
        "charts": [],
    }


class CellBudget:
    def __init__(self) -> None:
        self.left = MAX_CELLS

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise DocumentError(f"more than {MAX_CELLS} cells")


REF = re.compile(r"(\$?)([A-Z]{1,3})(\$?)(\d+)(?![\d(A-Za-z_])")


def shift_formula(formula: str, drow: int, dcol: int) -> str:
    """A shared formula moved by (drow, dcol): relative references shift, strings stay."""
    parts = re.split(r'("[^"]*")', formula)
    for i in range(0, len(parts), 2):

        def move(m: re.Match[str]) -> str:
            row, col = split_ref(m.group(2) + m.group(4))
            if not m.group(1):
                col += dcol
            if not m.group(3):
                row += drow
            return f"{m.group(1)}{col_letter(col)}{m.group(3)}{row}"

        parts[i] = REF.sub(move, parts[i])
    return "".join(parts)


def read_xlsx(pkg: Package) -> dict[str, Any]:
    book = pkg.xml("xl/workbook.xml")
    rels = pkg.rels("xl/workbook.xml")
    strings = [
        rich_text(si, "x:t")
        for si in findall(pkg.xml_or_none("xl/sharedStrings.xml"), "x:si")
        if si is not None
    ]
    # phonetic guides (rPh) are part of si's iter: drop them the way Excel shows the text
    shared = pkg.xml_or_none("xl/sharedStrings.xml")
    if shared is not None:
        strings = []
        for si in findall(shared, "x:si"):
            text = "".join(
                t.text or ""
                for part in si
                if part.tag != q("x:rPh")
                for t in ([part] if part.tag == q("x:t") else part.iter(q("x:t")))
            )
            strings.append(cut(text))
    styles = Styles()
    xf_style = xlsx_styles(pkg.xml_or_none("xl/styles.xml"), styles)
    budget = CellBudget()
    sheets = []
    for sh in findall(book, "x:sheets/x:sheet"):
        target = rels.get(at(sh, "r:id", ""), ("", ""))[1]
        if not target or not pkg.has(target):
            raise DocumentError(f"sheet {sh.get('name')!r} has no part")
        sheet = sheet_model(sh.get("name", ""))
        xlsx_sheet(pkg, target, sheet, strings, xf_style, budget)
        sheets.append(sheet)
    if not sheets:
        raise DocumentError("the workbook has no sheets")
    dxfs = xlsx_dxfs(pkg.xml_or_none("xl/styles.xml"))
    return {"type": "spreadsheet", "styles": styles.table, "sheets": sheets, "dxfs": dxfs}


def xlsx_dxfs(root: ET.Element | None) -> list[dict[str, Any]]:
    """The differential styles conditional formats apply: the parts each one has (a rule
    whose style has no font sets no font)."""
    out = []
    for dxf in findall(root, "x:dxfs/x:dxf"):
        font, fill, fmt = find(dxf, "x:font"), find(dxf, "x:fill"), find(dxf, "x:numFmt")
        out.append(
            {
                "font": None
                if font is None
                else {
                    "bold": w_on_x(find(font, "x:b")),
                    "italic": w_on_x(find(font, "x:i")),
                    "underline": w_on_x(find(font, "x:u")),
                    "color": at(find(font, "x:color"), "rgb"),
                    "size": number(at(find(font, "x:sz"), "val")),
                    "name": at(find(font, "x:name"), "val"),
                },
                "bg": None
                if fill is None
                else at(find(fill, "x:patternFill/x:bgColor"), "rgb", "00000000"),
                "numfmt": at(fmt, "formatCode"),
            }
        )
    return out


def w_on_x(el: ET.Element | None) -> bool | None:
    return None if el is None else el.get("val", "true") not in ("0", "false", "none")


def xlsx_styles(root: ET.Element | None, styles: Styles) -> list[int]:
    """Style index of each ``cellXfs`` entry."""
    if root is None:
        return [styles.add(cell_style())]
    formats = dict(BUILTIN_FORMATS)
    for nf in findall(root, "x:numFmts/x:numFmt"):
        formats[int(nf.get("numFmtId", "0"))] = nf.get("formatCode", "General")
    fonts = []
    for f in findall(root, "x:fonts/x:font"):

        def on(tag: str, f: ET.Element = f) -> bool:
            el = find(f, tag)
            return el is not None and el.get("val", "true") not in ("0", "false", "none")

        fonts.append(
            {
                "bold": on("x:b"),
                "italic": on("x:i"),
                "underline": on("x:u"),
                "color": hex_color(at(find(f, "x:color"), "rgb")),
                "font": at(find(f, "x:name"), "val"),
                "size": number(at(find(f, "x:sz"), "val")),
            }
        )
    fills = []
    for fill in findall(root, "x:fills/x:fill"):
        pattern = find(fill, "x:patternFill")
        solid = pattern is not None and pattern.get("patternType") not in (None, "none")
        fills.append(hex_color(at(find(pattern, "x:fgColor"), "rgb")) if solid else None)
    out = []
    for xf in findall(root, "x:cellXfs/x:xf"):
        font = fonts[int(xf.get("fontId", "0"))] if fonts else {}
        fill_id = int(xf.get("fillId", "0"))
        code = formats.get(int(xf.get("numFmtId", "0")), "General")
        out.append(
            styles.add(
                cell_style(
                    **font,
                    fill=fills[fill_id] if fill_id < len(fills) else None,
                    align=at(find(xf, "x:alignment"), "horizontal"),
                    numfmt=code,
                )
            )
        )
    return out or [styles.add(cell_style())]


def xlsx_sheet(
    pkg: Package,
    part: str,
    sheet: dict[str, Any],
    strings: list[str],
    xf_style: list[int],
    budget: CellBudget,
) -> None:
    root = pkg.xml(part)
    cells = sheet["cells"]
    shared: dict[str, tuple[int, int, str]] = {}
    for r_index, row in enumerate(findall(root, "x:sheetData/x:row"), start=1):
        row_no = int(row.get("r", r_index))
        col_no = 0
        for c in findall(row, "x:c"):
            budget.take()
            ref = c.get("r")
            if ref:
                row_no, col_no = split_ref(ref)
            else:
                col_no += 1
            key = f"{col_letter(col_no)}{row_no}"
            kind = c.get("t", "n")
            raw = find(c, "x:v")
            text = raw.text if raw is not None else None
            value: Any = None
            if kind == "s" and text is not None:
                idx = int(text)
                value = strings[idx] if 0 <= idx < len(strings) else None
            elif kind == "inlineStr":
                value = cut(rich_text(find(c, "x:is"), "x:t"))
            elif kind == "str":
                value = cut(text or "")
            elif kind == "b":
                value = text in ("1", "true")
            elif kind == "e":
                value = {"error": text}
            elif kind == "d" and text:
                value = serial(text)
            elif text is not None:
                value = number(text)
            cell: dict[str, Any] = {"v": value}
            f = find(c, "x:f")
            if f is not None:
                formula = f.text or ""
                if f.get("t") == "shared" and f.get("si") is not None:
                    si = f.get("si", "")
                    if formula:
                        shared[si] = (row_no, col_no, formula)
                    elif si in shared:
                        r0, c0, base = shared[si]
                        formula = shift_formula(base, row_no - r0, col_no - c0)
                if formula:
                    cell["f"] = "=" + formula
            s = int(c.get("s", "0"))
            cell["s"] = xf_style[s] if s < len(xf_style) else xf_style[0]
            cells[key] = cell
    sheet["merged"] = [m.get("ref", "") for m in findall(root, "x:mergeCells/x:mergeCell")]
    auto = find(root, "x:autoFilter")
    sheet["filter"] = auto.get("ref") if auto is not None else None
    view = find(root, "x:sheetViews/x:sheetView")
    if view is not None:
        sheet["zoom"] = number(view.get("zoomScale")) or 100.0
        pane = find(view, "x:pane")
        if pane is not None and pane.get("state") in ("frozen", "frozenSplit"):
            top_left = pane.get("topLeftCell")
            if not top_left:
                xs = int(float(pane.get("xSplit", "0")))
                ys = int(float(pane.get("ySplit", "0")))
                top_left = f"{col_letter(xs + 1)}{ys + 1}"
            sheet["freeze"] = top_left
    for cf in findall(root, "x:conditionalFormatting"):
        for rule in findall(cf, "x:cfRule"):
            sheet["cf"].append(xlsx_cf(cf.get("sqref", ""), rule))
    rels = pkg.rels(part)
    for el in findall(root, "x:drawing"):
        target = rels.get(at(el, "r:id", ""), ("", ""))[1]
        if target and pkg.has(target):
            sheet["charts"] += xlsx_charts(pkg, target)


XLSX_OPS = {
    "greaterThan": ">",
    "lessThan": "<",
    "greaterThanOrEqual": ">=",
    "lessThanOrEqual": "<=",
    "equal": "=",
    "notEqual": "!=",
    "between": "between",
    "notBetween": "not-between",
    "containsText": "contains",
    "notContains": "not-contains",
    "beginsWith": "begins-with",
    "endsWith": "ends-with",
}


def xlsx_cf(sqref: str, rule: ET.Element) -> dict[str, Any]:
    kind = rule.get("type", "")
    canon = {
        "cellIs": "cell",
        "expression": "expression",
        "colorScale": "color-scale",
        "dataBar": "data-bar",
        "iconSet": "icon-set",
        "duplicateValues": "duplicate",
        "uniqueValues": "unique",
        "top10": "top",
        "containsText": "cell",
        "notContainsText": "cell",
        "beginsWith": "cell",
        "endsWith": "cell",
    }.get(kind, kind)
    op = XLSX_OPS.get(rule.get("operator", ""), rule.get("operator"))
    values = [f.text or "" for f in findall(rule, "x:formula")]
    if kind in ("containsText", "notContainsText", "beginsWith", "endsWith"):
        op = XLSX_OPS.get(rule.get("operator", ""), kind)
        values = [rule.get("text", "")]
    return {
        "range": sqref.split()[0] if sqref else "",
        "ranges": sqref.split(),
        "type": canon,
        "operator": op,
        "values": values,
        "dxf": int(rule.get("dxfId", "")) if rule.get("dxfId", "").isdigit() else None,
    }


CHART_TYPES = {
    "barChart": "bar",
    "bar3DChart": "bar",
    "lineChart": "line",
    "line3DChart": "line",
    "pieChart": "pie",
    "pie3DChart": "pie",
    "doughnutChart": "donut",
    "areaChart": "area",
    "area3DChart": "area",
    "scatterChart": "scatter",
    "radarChart": "radar",
    "bubbleChart": "bubble",
    "stockChart": "stock",
}


def xlsx_charts(pkg: Package, drawing: str) -> list[dict[str, Any]]:
    out = []
    rels = pkg.rels(drawing)
    root = pkg.xml(drawing)
    for el in root.iter(q("c:chart")):
        target = rels.get(at(el, "r:id", ""), ("", ""))[1]
        if not target or not pkg.has(target):
            continue
        space = pkg.xml(target)
        plot = find(space, "c:chart/c:plotArea")
        kinds = [
            CHART_TYPES[k]
            for k in (c.tag.split("}")[1] for c in list(plot if plot is not None else []))
            if k in CHART_TYPES
        ]
        bar = either(find(plot, "c:barChart/c:barDir"), find(plot, "c:bar3DChart/c:barDir"))
        series = []
        for ser in plot.iter(q("c:ser")) if plot is not None else []:
            vals = either(find(ser, "c:val//c:f"), find(ser, "c:yVal//c:f"))
            cats = either(find(ser, "c:cat//c:f"), find(ser, "c:xVal//c:f"))
            name = find(ser, "c:tx//c:f")
            series.append(
                {
                    "values": norm_range(vals.text or "") if vals is not None else None,
                    "categories": norm_range(cats.text or "") if cats is not None else None,
                    "name": norm_range(name.text or "") if name is not None else None,
                }
            )
        title = find(space, "c:chart/c:title")
        out.append(
            {
                "type": kinds[0] if kinds else None,
                "horizontal": bar is not None and bar.get("val") == "bar",
                "title": cut(rich_text(title, "a:t")) if title is not None else None,
                "series": series,
            }
        )
    return out


def ods_format(styles: OdfStyles, name: str | None) -> tuple[str, str, int | None]:
    """(code, category, decimals) of an ODF data style, the code written the OOXML way."""
    el = styles.data.get(name or "")
    if el is None:
        return "General", "general", None
    tag = el.tag.split("}")[1]
    num = either(find(el, "number:number"), find(el, "number:scientific-number"))
    decimals = int(at(num, "number:decimal-places", "0") or 0) if num is not None else None
    grouping = at(num, "number:grouping") == "true"
    body = ("#,##0" if grouping else "0") + ("." + "0" * decimals if decimals else "")
    if tag == "percentage-style":
        return body + "%", "percent", decimals
    if tag == "currency-style":
        symbol = "".join(s.text or "" for s in findall(el, "number:currency-symbol"))
        return f"{symbol}{body}", "currency", decimals
    if tag == "date-style":
        has_time = find(el, "number:hours") is not None
        return "date", "datetime" if has_time else "date", None
    if tag == "time-style":
        return "time", "time", None
    if tag == "boolean-style":
        return "BOOLEAN", "boolean", None
    if tag == "text-style":
        return "@", "text", None
    if find(el, "number:scientific-number") is not None:
        return body + "E+00", "scientific", decimals
    if num is None:
        return "General", "general", None
    return body, "number", decimals


def ods_cell_style(styles: OdfStyles, name: str | None, table: Styles) -> int:
    fam = "table-cell"

    def text(attr: str) -> str | None:
        return styles.prop(fam, name, "style:text-properties", attr)

    code, category, decimals = ods_format(
        styles,
        next(
            (
                at(el, "style:data-style-name")
                for el in styles.chain(fam, name)
                if at(el, "style:data-style-name")
            ),
            None,
        ),
    )
    underline = text("style:text-underline-style")
    size_mm = length_mm(text("fo:font-size"))
    bg = styles.prop(fam, name, "style:table-cell-properties", "fo:background-color")
    align = styles.prop(fam, name, "style:paragraph-properties", "fo:text-align")
    return table.add(
        cell_style(
            bold=odf_bold(text("fo:font-weight")),
            italic=text("fo:font-style") in ("italic", "oblique"),
            underline=underline not in (None, "none"),
            color=hex_color(text("fo:color")),
            fill=None if bg in (None, "transparent") else hex_color(bg),
            font=text("style:font-name"),
            size=round(size_mm * 72 / 25.4, 1) if size_mm else None,
            align=odf_align(align),
            numfmt=code,
            category=category,
            decimals=decimals,
        )
    )


def ods_formula(formula: str) -> str:
    """``of:=SUM([.A1:.A3];[Sheet2.B1])`` -> ``=SUM(A1:A3,Sheet2!B1)``."""
    text = re.sub(r"^[a-z]+:", "", formula)
    parts = re.split(r'("[^"]*")', text)
    for i in range(0, len(parts), 2):
        p = parts[i]

        def ref(m: re.Match[str]) -> str:
            inner = m.group(1)
            ends = []
            for end in inner.split(":"):
                sheet, _, cell = end.rpartition(".")
                sheet = sheet.strip("$").strip("'")
                ends.append(f"{sheet}!{cell}" if sheet else cell)
            return ":".join(ends)

        p = re.sub(r"\[([^\]]*)\]", ref, p)
        parts[i] = p.replace(";", ",")
    out = "".join(parts)
    return out if out.startswith("=") else "=" + out


def ods_value(cell: ET.Element) -> Any:
    kind = at(cell, "office:value-type") or at(cell, "calcext:value-type")
    if kind in ("float", "percentage", "currency"):
        return number(at(cell, "office:value"))
    if kind == "date":
        return serial(at(cell, "office:date-value", ""))
    if kind == "time":
        return duration_days(at(cell, "office:time-value", ""))
    if kind == "boolean":
        return at(cell, "office:boolean-value") == "true"
    if kind == "string":
        value = at(cell, "office:string-value")
        if value is not None:
            return cut(value)
        return cut("\n".join(odf_text(p) for p in findall(cell, "text:p")))
    if kind == "error" or at(cell, "calcext:value-type") == "error":
        return {"error": "\n".join(odf_text(p) for p in findall(cell, "text:p"))}
    return None


def read_ods(pkg: Package) -> dict[str, Any]:
    content = pkg.xml("content.xml")
    styles = OdfStyles(pkg.xml_or_none("styles.xml"), content)
    settings = pkg.xml_or_none("settings.xml")
    table_styles = Styles()
    default = ods_cell_style(styles, "Default", table_styles)
    budget = CellBudget()
    sheets = []
    body = find(content, "office:body/office:spreadsheet")
    if body is None:
        raise DocumentError("content.xml has no spreadsheet body")
    cached: dict[str | None, int] = {}

    def style_of(name: str | None) -> int:
        if name not in cached:
            cached[name] = ods_cell_style(styles, name, table_styles) if name else default
        return cached[name]

    for tbl in findall(body, "table:table"):
        sheet = sheet_model(at(tbl, "table:name", ""))
        col_styles: list[str | None] = []
        for col in tbl.iter(q("table:table-column")):
            n = int(at(col, "table:number-columns-repeated", "1"))
            col_styles += [at(col, "table:default-cell-style-name")] * min(n, 1024)
        row_no = 0
        for row in tbl.iter(q("table:table-row")):
            rrep = int(at(row, "table:number-rows-repeated", "1"))
            col_no = 0
            row_cells: list[tuple[int, int, dict[str, Any]]] = []
            for cell in row:
                if cell.tag not in (q("table:table-cell"), q("table:covered-table-cell")):
                    continue
                crep = int(at(cell, "table:number-columns-repeated", "1"))
                value = ods_value(cell)
                formula = at(cell, "table:formula")
                sname = at(cell, "table:style-name")
                if sname is None and col_no < len(col_styles):
                    sname = col_styles[col_no]
                spans = (
                    int(at(cell, "table:number-columns-spanned", "1")),
                    int(at(cell, "table:number-rows-spanned", "1")),
                )
                if spans != (1, 1):
                    a = f"{col_letter(col_no + 1)}{row_no + 1}"
                    b = f"{col_letter(col_no + spans[0])}{row_no + spans[1]}"
                    sheet["merged"].append(f"{a}:{b}")
                style = style_of(sname)
                # an empty cell counts only for a style of its own (a fill on a blank cell),
                # not for the default style LibreOffice writes on every blank it touched
                if value is not None or formula or (style != default and crep * rrep <= 1024):
                    record: dict[str, Any] = {"v": value, "s": style}
                    if formula:
                        record["f"] = ods_formula(formula)
                    row_cells.append((col_no, crep, record))
                col_no += crep
            for r in range(rrep if row_cells else 0):
                for c0, crep, record in row_cells:
                    budget.take(crep)
                    for c in range(c0, c0 + crep):
                        sheet["cells"][f"{col_letter(c + 1)}{row_no + r + 1}"] = dict(record)
            row_no += rrep
        for fmt in tbl.iter(q("calcext:conditional-format")):
            for cond in fmt:
                sheet["cf"].append(ods_cf(at(fmt, "calcext:target-range-address", ""), cond))
        for obj in tbl.iter(q("draw:object")):
            href = (at(obj, "xlink:href") or "").lstrip("./").rstrip("/")
            part = posixpath.join(href, "content.xml")
            if href and pkg.has(part):
                sheet["charts"].append(ods_chart(pkg.xml(part)))
        sheets.append(sheet)
    for rng in findall(body, "table:database-ranges/table:database-range"):
        if at(rng, "table:display-filter-buttons") == "true":
            target = norm_range(at(rng, "table:target-range-address", ""))
            name, _, cells = target.rpartition("!")
            for sheet in sheets:
                if sheet["name"] == name or (not name and sheet is sheets[0]):
                    sheet["filter"] = cells
    ods_view(settings, sheets)
    if not sheets:
        raise DocumentError("the spreadsheet has no sheets")
    return {"type": "spreadsheet", "styles": table_styles.table, "sheets": sheets}


def ods_cf(target: str, cond: ET.Element) -> dict[str, Any]:
    rng = norm_range(target.split()[0]) if target else ""
    ranges = [norm_range(t).rpartition("!")[2] for t in target.split()]
    tag = cond.tag.split("}")[1]
    if tag != "condition":  # color-scale, data-bar, icon-set: the same names as ours
        return {
            "range": rng.rpartition("!")[2],
            "ranges": ranges,
            "type": tag,
            "operator": None,
            "values": [],
        }
    value = at(cond, "calcext:value", "")
    kind: str = "cell"
    op: str | None = None
    values: list[str] = [value]
    m = re.fullmatch(r"(<=|>=|!=|<|>|=)(.*)", value, re.S)
    call = re.fullmatch(r"([a-z-]+)\((.*)\)", value, re.S)
    if m:
        op, values = m.group(1), [m.group(2)]
    elif call and call.group(1) == "formula-is":
        kind, values = "expression", [call.group(2)]
    elif call:
        op = call.group(1)
        values = [v for v in re.split(r"[,;]", call.group(2))]
        kind = {"top-elements": "top", "bottom-elements": "bottom"}.get(op, "cell")
    elif value in ("duplicate", "unique"):
        kind, values = value, []
    return {
        "range": rng.rpartition("!")[2],
        "ranges": ranges,
        "type": kind,
        "operator": op,
        "values": values,
    }


def ods_chart(root: ET.Element) -> dict[str, Any]:
    chart = find(root, "office:body/office:chart/chart:chart")
    kind = (at(chart, "chart:class") or "").split(":")[-1]
    plot = find(chart, "chart:plot-area")
    styles = OdfStyles(root)
    horizontal = (
        styles.prop(
            "chart", at(plot, "chart:style-name"), "style:chart-properties", "chart:vertical"
        )
        == "true"
    )
    cats = find(plot, "chart:axis/chart:categories")
    series = []
    for ser in findall(plot, "chart:series"):
        values = at(ser, "chart:values-cell-range-address")
        name = at(ser, "chart:label-cell-address")
        series.append(
            {
                "values": norm_range(values) if values else None,
                "categories": norm_range(at(cats, "table:cell-range-address"))
                if at(cats, "table:cell-range-address")
                else None,
                "name": norm_range(name) if name else None,
            }
        )
    title = find(chart, "chart:title")
    kinds = {"circle": "pie", "ring": "donut", "filled-radar": "radar"}
    return {
        "type": kinds.get(kind, kind) or None,
        "horizontal": horizontal,
        "title": odf_text(heading) if (heading := find(title, "text:p")) is not None else None,
        "series": series,
    }


def ods_view(settings: ET.Element | None, sheets: list[dict[str, Any]]) -> None:
    """Freeze panes and zoom per sheet, from settings.xml's view settings."""
    if settings is None:
        return
    for entries in settings.iter(q("config:config-item-map-named")):
        if at(entries, "config:name") != "Tables":
            continue
        for entry in findall(entries, "config:config-item-map-entry"):
            items = {
                at(i, "config:name"): (i.text or "") for i in findall(entry, "config:config-item")
            }
            for sheet in sheets:
                if sheet["name"] != at(entry, "config:name"):
                    continue
                cols = int(items.get("HorizontalSplitPosition") or 0)
                rows = int(items.get("VerticalSplitPosition") or 0)
                cols = cols if items.get("HorizontalSplitMode") == "2" else 0
                rows = rows if items.get("VerticalSplitMode") == "2" else 0
                if cols or rows:
                    sheet["freeze"] = f"{col_letter(cols + 1)}{rows + 1}"
                zoom = number(items.get("ZoomValue"))
                if zoom:
                    sheet["zoom"] = zoom
