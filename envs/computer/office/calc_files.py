"""A small, deterministic writer of spreadsheets: ``.xlsx`` (SpreadsheetML) and ``.ods`` (ODF).

The Calc templates generate their workbooks in the trusted process at suite build time. This
module writes them with the standard library only (``zipfile`` and escaped XML text), so:

- the same workbook gives the same bytes on any machine: every zip entry has a fixed timestamp
  (1980-01-01), a fixed order, and no library version decides the XML;
- the gateway needs no spreadsheet library (openpyxl and odfpy are Debian packages of the
  sandbox, used by the code oracles there, not dependencies of palaestra).

What it writes is what the tasks start from: sheets of values (text, numbers, dates), formulas
with their cached results (computed by the template, so a reader that does not recalculate sees
the same numbers LibreOffice shows), bold cells, number formats and column widths.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

_FIXED = (1980, 1, 1, 0, 0, 0)
_EPOCH = dt.date(1899, 12, 30)  # spreadsheet day 0 (both formats' default null date)
Value = str | int | float | dt.date | None


@dataclass(frozen=True)
class Cell:
    """A cell: ``value`` (the cached result when ``formula`` is set, written without ``=``)."""

    value: Value
    formula: str | None = None
    bold: bool = False
    fmt: str | None = None  # a number format code, e.g. "#,##0.00" or "YYYY-MM-DD"


@dataclass
class Sheet:
    name: str
    rows: list[list[Cell | Value]]
    widths: dict[int, float] = field(default_factory=dict)  # 0-based column -> width in chars


def col_name(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    out = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def ref(row: int, col: int) -> str:
    """A cell address from 0-based row and column: (0, 0) -> A1."""
    return f"{col_name(col)}{row + 1}"


def table(header: list[str], body: list[list[Value]], fmts: dict[int, str] | None = None):
    """Rows of a header (bold) and a body; ``fmts`` gives a number format per column."""
    fmts = fmts or {}
    rows: list[list[Cell | Value]] = [[Cell(h, bold=True) for h in header]]
    for line in body:
        rows.append([Cell(v, fmt=fmts.get(i)) if i in fmts else v for i, v in enumerate(line)])
    return rows


def _cell(c: Cell | Value) -> Cell:
    return c if isinstance(c, Cell) else Cell(c, fmt="YYYY-MM-DD" if _is_date(c) else None)


def _is_date(v: object) -> bool:
    return isinstance(v, dt.date)


def _serial(d: dt.date) -> int:
    return (d - _EPOCH).days


def _zip(entries: list[tuple[str, str]], stored_first: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in entries:
            info = zipfile.ZipInfo(name, date_time=_FIXED)
            stored = name == stored_first
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, text.encode())
    return buf.getvalue()


# --- OOXML ---------------------------------------------------------------------------------

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_BUILTIN = {"General": 0, "0": 1, "0.00": 2, "#,##0": 3, "#,##0.00": 4, "0%": 9, "0.00%": 10}


def xlsx(sheets: list[Sheet]) -> bytes:
    styles: dict[tuple[bool, str | None], int] = {(False, None): 0}
    custom: dict[str, int] = {}
    parts = []
    for sheet in sheets:
        parts.append(_xlsx_sheet(sheet, styles, custom))
    entries = [
        ("[Content_Types].xml", _content_types(len(sheets))),
        ("_rels/.rels", _rels([("officeDocument", "xl/workbook.xml")])),
        ("xl/workbook.xml", _workbook(sheets)),
        (
            "xl/_rels/workbook.xml.rels",
            _rels(
                [("worksheet", f"worksheets/sheet{i + 1}.xml") for i in range(len(sheets))]
                + [("styles", "styles.xml")]
            ),
        ),
        ("xl/styles.xml", _styles(styles, custom)),
    ]
    entries += [(f"xl/worksheets/sheet{i + 1}.xml", part) for i, part in enumerate(parts)]
    return _zip(entries)


def _style(c: Cell, styles: dict[tuple[bool, str | None], int], custom: dict[str, int]) -> int:
    key = (c.bold, c.fmt)
    if key not in styles:
        if c.fmt and c.fmt not in _BUILTIN and c.fmt not in custom:
            custom[c.fmt] = 164 + len(custom)
        styles[key] = len(styles)
    return styles[key]


def _xlsx_sheet(sheet: Sheet, styles: dict, custom: dict) -> str:
    rows = []
    for r, line in enumerate(sheet.rows):
        cells = []
        for col, raw in enumerate(line):
            c = _cell(raw)
            if c.value is None and c.formula is None and not c.bold:
                continue
            s = _style(c, styles, custom)
            attrs = f'r="{ref(r, col)}"' + (f' s="{s}"' if s else "")
            f = f"<f>{escape(c.formula)}</f>" if c.formula else ""
            v = c.value
            if isinstance(v, str):
                if c.formula:
                    cells.append(f'<c {attrs} t="str">{f}<v>{escape(v)}</v></c>')
                else:
                    text = f'<is><t xml:space="preserve">{escape(v)}</t></is>'
                    cells.append(f'<c {attrs} t="inlineStr">{text}</c>')
            elif v is None:
                cells.append(f"<c {attrs}>{f}</c>")
            else:
                num = _serial(v) if isinstance(v, dt.date) else v
                cells.append(f"<c {attrs}>{f}<v>{num!r}</v></c>")
        rows.append(f'<row r="{r + 1}">{"".join(cells)}</row>')
    cols = "".join(
        f'<col min="{i + 1}" max="{i + 1}" width="{w}" customWidth="1"/>'
        for i, w in sorted(sheet.widths.items())
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_MAIN}" '
        f'xmlns:r="{_RELS}">{f"<cols>{cols}</cols>" if cols else ""}'
        f"<sheetData>{''.join(rows)}</sheetData></worksheet>"
    )


def _content_types(n: int) -> str:
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    sheets = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i + 1}.xml" ContentType="{ct}.worksheet+xml"/>'
        for i in range(n)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.'
        'openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="'
        'application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        f'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="{ct}'
        f'.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.'
        f'openxmlformats-officedocument.spreadsheetml.styles+xml"/>{sheets}</Types>'
    )


def _rels(targets: list[tuple[str, str]]) -> str:
    items = "".join(
        f'<Relationship Id="rId{i + 1}" Type="{_RELS}/{kind}" Target="{target}"/>'
        for i, (kind, target) in enumerate(targets)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<Relationships xmlns="{_PKG}">{items}</Relationships>'
    )


def _workbook(sheets: list[Sheet]) -> str:
    items = "".join(
        f'<sheet name={quoteattr(s.name)} sheetId="{i + 1}" r:id="rId{i + 1}"/>'
        for i, s in enumerate(sheets)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="{_MAIN}" '
        f'xmlns:r="{_RELS}"><sheets>{items}</sheets></workbook>'
    )


def _styles(styles: dict[tuple[bool, str | None], int], custom: dict[str, int]) -> str:
    fmts = "".join(
        f"<numFmt numFmtId={quoteattr(str(i))} formatCode={quoteattr(code)}/>"
        for code, i in custom.items()
    )
    xfs = []
    for (bold, fmt), _ in sorted(styles.items(), key=lambda kv: kv[1]):
        num = 0 if fmt is None else _BUILTIN.get(fmt, custom.get(fmt, 0))
        applied = (' applyNumberFormat="1"' if num else "") + (' applyFont="1"' if bold else "")
        xfs.append(
            f'<xf numFmtId="{num}" fontId="{int(bold)}" fillId="0" borderId="0" xfId="0"{applied}/>'
        )
    numfmts = f'<numFmts count="{len(custom)}">{fmts}</numFmts>' if custom else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="{_MAIN}">'
        f"{numfmts}"
        '<fonts count="2"><font><sz val="11"/><name val="Liberation Sans"/></font>'
        '<font><b/><sz val="11"/><name val="Liberation Sans"/></font></fonts>'
        '<fills count="2"><fill><patternFill patternType="none"/></fill>'
        '<fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
        f'</cellStyleXfs><cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        "</styleSheet>"
    )


# --- ODF -----------------------------------------------------------------------------------

_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" '
    'xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2"'
)


def ods(sheets: list[Sheet]) -> bytes:
    """The same workbook as ODF: bold, dates (ISO) and two-decimal numbers are kept; formulas
    are written in OpenFormula (``of:=SUM([.B2:.B9])``) from the A1 text the template gives."""
    body = "".join(_ods_sheet(s) for s in sheets)
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_ODF_NS}>'
        "<office:automatic-styles>"
        '<number:date-style style:name="N1"><number:year number:style="long"/><number:text>-'
        '</number:text><number:month number:style="long"/><number:text>-</number:text>'
        '<number:day number:style="long"/></number:date-style>'
        '<number:number-style style:name="N2"><number:number number:decimal-places="2" '
        'number:min-integer-digits="1" number:grouping="true"/></number:number-style>'
        '<style:style style:name="co1" style:family="table-column">'
        '<style:table-column-properties style:column-width="1.2in"/></style:style>'
        '<style:style style:name="cb" style:family="table-cell">'
        '<style:text-properties fo:font-weight="bold"/></style:style>'
        '<style:style style:name="cd" style:family="table-cell" style:data-style-name="N1"/>'
        '<style:style style:name="cn" style:family="table-cell" style:data-style-name="N2"/>'
        f"</office:automatic-styles><office:body><office:spreadsheet>{body}"
        "</office:spreadsheet></office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="urn:oasis:'
        'names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry '
        'manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.'
        'spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type='
        '"text/xml"/></manifest:manifest>'
    )
    return _zip(
        [
            ("mimetype", "application/vnd.oasis.opendocument.spreadsheet"),
            ("META-INF/manifest.xml", manifest),
            ("content.xml", content),
        ],
        stored_first="mimetype",
    )


def _ods_sheet(sheet: Sheet) -> str:
    width = max((len(line) for line in sheet.rows), default=1)
    rows = []
    for line in sheet.rows:
        cells = []
        for raw in line:
            c = _cell(raw)
            style = "cb" if c.bold else "cd" if _is_date(c.value) else "cn" if c.fmt else ""
            attrs = f' table:style-name="{style}"' if style else ""
            if c.formula:
                attrs += f" table:formula={quoteattr('of:=' + _of(c.formula))}"
            v = c.value
            if v is None:
                cells.append(f"<table:table-cell{attrs}/>")
            elif isinstance(v, str):
                cells.append(
                    f'<table:table-cell{attrs} office:value-type="string">'
                    f"<text:p>{escape(v)}</text:p></table:table-cell>"
                )
            elif isinstance(v, dt.date):
                iso = v.isoformat()
                cells.append(
                    f'<table:table-cell{attrs} office:value-type="date" office:date-value="{iso}">'
                    f"<text:p>{iso}</text:p></table:table-cell>"
                )
            else:
                cells.append(
                    f'<table:table-cell{attrs} office:value-type="float" office:value="{v!r}">'
                    f"<text:p>{v}</text:p></table:table-cell>"
                )
        rows.append(f"<table:table-row>{''.join(cells)}</table:table-row>")
    return (
        f"<table:table table:name={quoteattr(sheet.name)}>"
        f'<table:table-column table:style-name="co1" table:number-columns-repeated="{width}"/>'
        f"{''.join(rows)}</table:table>"
    )


def _of(formula: str) -> str:
    """An A1 formula as OpenFormula: cell references in brackets with a leading dot, sheet
    references as ``[$Sheet.A1]``; argument separators become semicolons (so no text literal
    with a comma, and no function named like a cell, e.g. LOG10, in a formula written here)."""

    def one(m: re.Match[str]) -> str:
        sheet, a, b = m.group(1), m.group(2), m.group(3)
        pre = f"${sheet.strip(chr(39))}." if sheet else "."
        return f"[{pre}{a}" + (f":.{b}]" if b else "]")

    out = re.sub(
        r"(?:('[^']+'|[A-Za-z_]\w*)!)?(\$?[A-Z]{1,3}\$?\d+)(?::(\$?[A-Z]{1,3}\$?\d+))?",
        one,
        formula,
    )
    return out.replace(",", ";")
