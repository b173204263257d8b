"""Read an office document (xlsx, ods, docx, odt, pptx, odp) into one canonical model.

The same source runs in two places, which is why it imports nothing but the standard library
(``zipfile`` + ``xml.etree``):

- inside the computer family's isolated runner, for the agent's document: the verifier sends
  this file's text to Debian's ``/usr/bin/python3 -I -S -c`` in a fresh read-only sandbox as
  the session's uid, and reads back one bounded line of JSON (:func:`main`). The privileged
  process never opens, unzips or parses a byte the agent wrote.
- in the trusted process, for gold files (OSWorld's expected documents, generated artifacts at
  suite build time): :func:`read_document`.

openpyxl, python-docx and odfpy would give three libraries, two Python versions (the venv's
and Debian's) and their versions' differences on each side, and none reads both OOXML and ODF
into one model; python-pptx is not even in Debian. Reading the XML ourselves gives one model
for both formats of an app (an ``.ods`` answer where ``.xlsx`` is allowed is judged by the
same assertions), with every limit under our control.

Limits (agent documents are hostile): the file is opened without following a link, must be a
regular file (a FIFO fails at once) of at most ``MAX_FILE`` bytes; at most ``MAX_MEMBERS`` zip
members, each read to at most ``MAX_PART`` bytes whatever its header claims (a zip bomb stops
there), ``MAX_TOTAL`` bytes in all; a part with a DTD is refused (no entity expansion); at
most ``MAX_CELLS`` cells, ``MAX_ITEMS`` paragraphs, slides or shapes. In the sandbox the
process also gets an address-space and CPU-time limit. Every failure is a
:class:`DocumentError` with a one-line reason, printed as ``{"ok": false, "error": ...}``.

The model (JSON-able; numbers are floats, lengths in mm, colours ``#RRGGBB``):

- spreadsheet: ``{"type": "spreadsheet", "format", "styles": [style...], "sheets": [{"name",
  "cells": {"A1": {"v": value, "f": "=SUM(A1:A3)", "s": style index}}, "merged": ["A1:B2"],
  "freeze": "B2"|None, "filter": "A1:D9"|None, "zoom", "cf": [{"range", "type", "operator",
  "values"}], "charts": [{"type", "horizontal", "title", "series": [{"values", "categories",
  "name"}]}]}]}``; a style is ``{"bold", "italic", "underline", "color", "fill", "font",
  "size", "align", "numfmt", "category", "decimals"}``. Dates are serial day numbers as in
  OOXML (days since 1899-12-30), so both formats agree; a formula is written the OOXML way
  (``=SUM(A1:A3)``, ``Sheet2!B4``) whatever the format stored.
- text_document: ``{"type": "text_document", "format", "paragraphs": [{"text", "style",
  "heading", "align", "bold", "italic", "underline", "list": {"level", "ordered"}|None}],
  "tables": [[[cell text]]], "comments": [{"text", "author"}], "page": {"width", "height",
  "orientation", "margins": {"top", "bottom", "left", "right"}}}``; body paragraphs only
  (table cells are in ``tables``; comment text is in ``comments``, not in the paragraph).
- presentation: ``{"type": "presentation", "format", "size": {"width", "height"},
  "slides": [{"title", "subtitle", "body": [paragraph...], "notes", "layout", "layout_name",
  "images", "shapes": [{"kind", "text", "x", "y", "w", "h"}]}]}``; ``layout`` is the
  placeholder kinds the slide has, in order (``"title,body"``), comparable across formats.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import posixpath
import re
import stat
import sys
import xml.etree.ElementTree as ET
import zipfile
from typing import Any

MAX_FILE = 64 * 2**20
MAX_MEMBERS = 5000
MAX_PART = 64 * 2**20
MAX_TOTAL = 256 * 2**20
MAX_CELLS = 200_000
MAX_ITEMS = 20_000
#: one cell or paragraph's text is cut here (a model must fit the runner's bounded output)
MAX_TEXT = 4000
FORMATS = ("xlsx", "ods", "docx", "odt", "pptx", "odp")
KIND = {
    "xlsx": "spreadsheet",
    "ods": "spreadsheet",
    "docx": "text_document",
    "odt": "text_document",
    "pptx": "presentation",
    "odp": "presentation",
}

NS = {
    # OOXML
    "x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "pr": "http://schemas.openxmlformats.org/package/2006/relationships",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
    "xdr": "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing",
    # ODF
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "number": "urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "chart": "urn:oasis:names:tc:opendocument:xmlns:chart:1.0",
    "config": "urn:oasis:names:tc:opendocument:xmlns:config:1.0",
    "calcext": "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0",
    "loext": "urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0",
}


class DocumentError(Exception):
    """The document cannot be read: the reason, in one line, is the verdict's detail."""


def q(name: str) -> str:
    """``"w:p"`` -> ``"{namespace}p"`` (ElementTree's names)."""
    prefix, _, local = name.partition(":")
    return f"{{{NS[prefix]}}}{local}"


def at(el: ET.Element | None, name: str, default: Any = None) -> Any:
    return default if el is None else el.get(q(name) if ":" in name else name, default)


def find(el: ET.Element | None, path: str) -> ET.Element | None:
    return None if el is None else el.find(path, NS)


def findall(el: ET.Element | None, path: str) -> list[ET.Element]:
    return [] if el is None else el.findall(path, NS)


def either(*found: ET.Element | None) -> ET.Element | None:
    """The first element found (never ``a or b``: an element without children is falsy)."""
    return next((el for el in found if el is not None), None)


# ----- the package: a bounded zip -----------------------------------------------------------
class Package:
    """The zip, read within the limits: members by name, XML parsed without DTDs."""

    def __init__(self, data: bytes) -> None:
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise DocumentError(
                f"not a zip package (corrupted or not an office file): {exc}"
            ) from None
        if len(infos) > MAX_MEMBERS:
            raise DocumentError(f"{len(infos)} zip members (more than {MAX_MEMBERS})")
        self.names = {i.filename for i in infos}
        self.total = 0

    def has(self, name: str) -> bool:
        return name in self.names

    def bytes(self, name: str) -> bytes:
        if name not in self.names:
            raise DocumentError(f"the package has no {name}")
        try:
            with self.zip.open(name) as part:
                data = part.read(MAX_PART + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError) as exc:
            raise DocumentError(f"{name} is corrupted: {exc}") from None
        except Exception as exc:  # zlib.error and friends: still a corrupted member
            raise DocumentError(f"{name} is corrupted: {type(exc).__name__}: {exc}") from None
        if len(data) > MAX_PART:
            raise DocumentError(f"{name} unpacks to more than {MAX_PART} bytes")
        self.total += len(data)
        if self.total > MAX_TOTAL:
            raise DocumentError(f"the package unpacks to more than {MAX_TOTAL} bytes")
        return data

    def xml(self, name: str) -> ET.Element:
        data = self.bytes(name)
        if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
            raise DocumentError(f"{name} declares a DTD (refused)")
        try:
            return ET.fromstring(data)
        except ET.ParseError as exc:
            raise DocumentError(f"{name} is not well-formed XML: {exc}") from None

    def xml_or_none(self, name: str) -> ET.Element | None:
        return self.xml(name) if self.has(name) else None

    def rels(self, part: str) -> dict[str, tuple[str, str]]:
        """The relationships of ``part``: id -> (type's last word, target part name)."""
        folder, base = posixpath.split(part)
        name = posixpath.join(folder, "_rels", base + ".rels")
        out = {}
        for rel in findall(self.xml_or_none(name), "pr:Relationship"):
            target = rel.get("Target", "")
            if rel.get("TargetMode") == "External":
                continue
            full = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
            out[rel.get("Id", "")] = (
                rel.get("Type", "").rsplit("/", 1)[-1],
                posixpath.normpath(full),
            )
        return out


def detect(pkg: Package) -> str:
    """The format the package's content says (never its name): ODF's ``mimetype`` member, or
    OOXML's main part type."""
    if pkg.has("mimetype"):
        mime = pkg.bytes("mimetype")[:100].decode("ascii", "replace").strip()
        for fmt, word in (("ods", "spreadsheet"), ("odt", "text"), ("odp", "presentation")):
            if mime == f"application/vnd.oasis.opendocument.{word}":
                return fmt
        raise DocumentError(f"an OpenDocument package of another kind ({mime[:60]})")
    if pkg.has("[Content_Types].xml"):
        types = " ".join(o.get("ContentType", "") for o in pkg.xml("[Content_Types].xml"))
        for fmt, word in (
            ("xlsx", "spreadsheetml.sheet.main"),
            ("xlsx", "spreadsheetml.template.main"),
            ("docx", "wordprocessingml.document.main"),
            ("docx", "wordprocessingml.template.main"),
            ("pptx", "presentationml.presentation.main"),
            ("pptx", "presentationml.slideshow.main"),
        ):
            if word in types:
                return fmt
        raise DocumentError("an Office Open XML package without a known main part")
    raise DocumentError("a zip that is not an office document (no mimetype, no content types)")


# ----- shared helpers -----------------------------------------------------------------------
def col_letter(n: int) -> str:
    """1 -> A, 27 -> AA."""
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


def split_ref(ref: str) -> tuple[int, int]:
    """``"B7"`` -> (7, 2)."""
    m = re.fullmatch(r"\$?([A-Za-z]{1,3})\$?(\d+)", ref.strip())
    if not m:
        raise DocumentError(f"a cell reference {ref[:20]!r} that does not parse")
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return int(m.group(2)), col


def cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT]


def length_mm(value: str | None) -> float | None:
    """An ODF length (``2.5cm``, ``1in``, ``12pt``) in mm."""
    if not value:
        return None
    m = re.fullmatch(r"\s*(-?[\d.]+)\s*(cm|mm|in|inch|pt|pc|px)?\s*", value)
    if not m:
        return None
    scale = {"cm": 10, "mm": 1, "in": 25.4, "inch": 25.4, "pt": 25.4 / 72, "pc": 25.4 / 6}
    return round(float(m.group(1)) * scale.get(m.group(2) or "mm", 25.4 / 96), 2)


def hex_color(value: str | None) -> str | None:
    """``FFFF0000`` / ``#ff0000`` -> ``#FF0000``; anything else (themes, ``auto``) -> None."""
    if not value:
        return None
    v = value.lstrip("#").upper()
    if len(v) == 8 and re.fullmatch(r"[0-9A-F]{8}", v):
        v = v[2:]
    return "#" + v if re.fullmatch(r"[0-9A-F]{6}", v) else None


EPOCH = datetime.datetime(1899, 12, 30)


def serial(iso: str) -> float | None:
    """An ISO date or date-time -> the OOXML serial day number."""
    try:
        when = datetime.datetime.fromisoformat(iso.strip().replace("Z", ""))
    except ValueError:
        return None
    return round((when - EPOCH).total_seconds() / 86400, 10)


def duration_days(iso: str) -> float | None:
    """An ODF time value ``PT13H30M00S`` -> a fraction of a day."""
    m = re.fullmatch(r"-?P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", iso.strip())
    if not m:
        return None
    d, h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    return round(d + h / 24 + mi / 1440 + s / 86400, 10)


def number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


# ----- number formats: one description for both families ------------------------------------
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


# ----- spreadsheets -------------------------------------------------------------------------
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


def rich_text(el: ET.Element | None, tag: str) -> str:
    """The text of every ``tag`` (``x:t``, ``a:t``) under ``el``, except phonetic runs."""
    if el is None:
        return ""
    return "".join(t.text or "" for t in el.iter(q(tag)))


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


def norm_range(text: str) -> str:
    """``'Sheet 1'!$A$1:$B$4`` / ``Sheet1.A1:Sheet1.B4`` -> ``Sheet 1!A1:B4``."""
    text = text.strip().replace("$", "")
    if "!" not in text and "." in text:  # ODF: Sheet1.A1:Sheet1.B4 or Sheet1.A1:.B4
        ends = []
        sheet = ""
        for end in text.split(":"):
            name, _, cell = end.rpartition(".")
            sheet = name.strip("'") or sheet
            ends.append(cell)
        return f"{sheet}!{':'.join(ends)}" if sheet else ":".join(ends)
    name, bang, cells = text.rpartition("!")
    return f"{name.strip(chr(39))}!{cells}" if bang else cells


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


# ----- ODF common ---------------------------------------------------------------------------
def odf_text(el: ET.Element, skip: tuple[str, ...] = ("office:annotation",)) -> str:
    """An ODF paragraph's text: spans and links inline, ``text:s`` spaces, tabs, line breaks;
    annotations (comments) and notes left out."""
    skipped = {q(s) for s in skip} | {q("text:note")}
    out: list[str] = []

    def walk(node: ET.Element) -> None:
        if node.text:
            out.append(node.text)
        for child in node:
            if child.tag in skipped:
                pass
            elif child.tag == q("text:s"):
                out.append(" " * int(child.get(q("text:c"), "1") or 1))
            elif child.tag == q("text:tab"):
                out.append("\t")
            elif child.tag == q("text:line-break"):
                out.append("\n")
            else:
                walk(child)
            if child.tail:
                out.append(child.tail)

    walk(el)
    return cut("".join(out))


class OdfStyles:
    """ODF styles by (family, name), from styles.xml and content.xml, with parent lookup."""

    def __init__(self, *roots: ET.Element | None) -> None:
        self.by: dict[tuple[str, str], ET.Element] = {}
        self.data: dict[str, ET.Element] = {}
        self.lists: dict[str, ET.Element] = {}
        self.page_layouts: dict[str, ET.Element] = {}
        self.masters: list[ET.Element] = []
        for root in roots:
            if root is None:
                continue
            for holder in ("office:styles", "office:automatic-styles"):
                for el in findall(root, holder + "/*"):
                    name = at(el, "style:name", "")
                    if el.tag == q("style:style"):
                        self.by[(at(el, "style:family", ""), name)] = el
                    elif el.tag == q("text:list-style"):
                        self.lists[name] = el
                    elif el.tag == q("style:page-layout"):
                        self.page_layouts[name] = el
                    elif el.tag.startswith(f"{{{NS['number']}}}"):
                        self.data[name] = el
            self.masters += findall(root, "office:master-styles/style:master-page")

    def chain(self, family: str, name: str | None) -> list[ET.Element]:
        """The style and its ancestors, nearest first (then the family's default style)."""
        out: list[ET.Element] = []
        while name and (family, name) in self.by and len(out) < 20:
            el = self.by[(family, name)]
            out.append(el)
            name = at(el, "style:parent-style-name")
        return out

    def prop(self, family: str, name: str | None, props: str, attr: str) -> str | None:
        for el in self.chain(family, name):
            value = at(find(el, props), attr)
            if value is not None:
                return value
        return None

    def display(self, family: str, name: str | None) -> str | None:
        """The style's name as the app shows it (the nearest named, non-automatic one)."""
        for el in self.chain(family, name):
            shown = at(el, "style:display-name") or at(el, "style:name")
            if not re.fullmatch(r"[A-Z]{1,2}\d+", shown or ""):  # P1, T3, ce2: automatic
                return shown
        return None


def odf_bold(weight: str | None) -> bool:
    return weight is not None and (weight == "bold" or (weight.isdigit() and int(weight) >= 600))


ODF_ALIGN = {"start": "left", "left": "left", "end": "right", "right": "right"}


def odf_align(value: str | None) -> str | None:
    return None if value is None else ODF_ALIGN.get(value, value)


# ----- ODS ----------------------------------------------------------------------------------
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


# ----- DOCX ---------------------------------------------------------------------------------
def w(el: ET.Element | None, name: str, default: Any = None) -> Any:
    return at(el, "w:" + name, default)


def w_on(el: ET.Element | None) -> bool | None:
    """A w:b-like toggle: absent -> None, present -> its val."""
    if el is None:
        return None
    return w(el, "val", "true") not in ("0", "false", "off", "none")


class DocxStyles:
    def __init__(self, root: ET.Element | None) -> None:
        self.by: dict[str, ET.Element] = {}
        self.default_para: str | None = None
        self.defaults_rpr = find(root, "w:docDefaults/w:rPrDefault/w:rPr")
        for st in findall(root, "w:style"):
            sid = w(st, "styleId", "")
            self.by[sid] = st
            if w(st, "type") == "paragraph" and w(st, "default") in ("1", "true"):
                self.default_para = sid

    def chain(self, sid: str | None) -> list[ET.Element]:
        out: list[ET.Element] = []
        while sid and sid in self.by and len(out) < 20:
            out.append(self.by[sid])
            sid = w(find(self.by[sid], "w:basedOn"), "val")
        return out

    def name(self, sid: str | None) -> str | None:
        st = self.by.get(sid or "")
        return w(find(st, "w:name"), "val", sid) if st is not None else sid

    def ppr(self, sid: str | None, tag: str) -> ET.Element | None:
        for st in self.chain(sid):
            el = find(st, "w:pPr/" + tag)
            if el is not None:
                return el
        return None

    def rpr(self, sid: str | None, tag: str) -> ET.Element | None:
        for st in self.chain(sid):
            el = find(st, "w:rPr/" + tag)
            if el is not None:
                return el
        return find(self.defaults_rpr, tag)


DOCX_ALIGN = {"left": "left", "start": "left", "center": "center", "right": "right",
              "end": "right", "both": "justify", "distribute": "justify"}  # fmt: skip


def docx_text(p: ET.Element) -> str:
    """A paragraph's text as Word shows it: runs (also inside hyperlinks, fields, insertions),
    tabs and breaks; deleted text left out."""
    out: list[str] = []
    for el in p.iter():
        tag = el.tag
        if tag == q("w:t"):
            out.append(el.text or "")
        elif tag == q("w:tab"):
            out.append("\t")
        elif tag in (q("w:br"), q("w:cr")):
            out.append("\n")
    return cut("".join(out))


def read_docx(pkg: Package) -> dict[str, Any]:
    main = "word/document.xml"
    rels = pkg.rels(main)
    doc = pkg.xml(main)
    by_type = {kind: target for kind, target in rels.values()}
    styles = DocxStyles(pkg.xml_or_none(by_type.get("styles", "word/styles.xml")))
    numbering = docx_numbering(pkg.xml_or_none(by_type.get("numbering", "word/numbering.xml")))
    body = find(doc, "w:body")
    if body is None:
        raise DocumentError("word/document.xml has no body")
    paragraphs, tables = [], []
    for el in body:
        if el.tag == q("w:p"):
            paragraphs.append(docx_paragraph(el, styles, numbering))
        elif el.tag == q("w:tbl"):
            tables.append(docx_table(el))
        elif el.tag == q("w:sdt"):  # a content control around body paragraphs
            for p in findall(el, "w:sdtContent/w:p"):
                paragraphs.append(docx_paragraph(p, styles, numbering))
        if len(paragraphs) + len(tables) > MAX_ITEMS:
            raise DocumentError(f"more than {MAX_ITEMS} paragraphs")
    comments = []
    croot = pkg.xml_or_none(by_type.get("comments", "word/comments.xml"))
    anchors = docx_anchors(body)
    for c in findall(croot, "w:comment"):
        text = "\n".join(docx_text(p) for p in c.iter(q("w:p")))
        anchor = cut(anchors.get(w(c, "id", ""), ""))
        comments.append({"text": cut(text), "author": w(c, "author"), "anchor": anchor})
    sect = find(body, "w:sectPr")
    size, margins = find(sect, "w:pgSz"), find(sect, "w:pgMar")

    def mm(el: ET.Element | None, name: str) -> float | None:
        v = number(w(el, name))
        return None if v is None else round(v * 25.4 / 1440, 2)

    width, height = mm(size, "w"), mm(size, "h")
    orient = w(size, "orient") or (
        "landscape" if width and height and width > height else "portrait"
    )
    page = {
        "width": width,
        "height": height,
        "orientation": orient,
        "margins": {side: mm(margins, side) for side in ("top", "bottom", "left", "right")},
    }
    return {
        "type": "text_document",
        "paragraphs": paragraphs,
        "tables": tables,
        "comments": comments,
        "page": page,
    }


def docx_anchors(body: ET.Element) -> dict[str, str]:
    """Comment id -> the text it is anchored on (commentRangeStart to commentRangeEnd)."""
    active: set[str] = set()
    text: dict[str, str] = {}
    for el in body.iter():
        if el.tag == q("w:commentRangeStart"):
            active.add(w(el, "id", ""))
            text.setdefault(w(el, "id", ""), "")
        elif el.tag == q("w:commentRangeEnd"):
            active.discard(w(el, "id", ""))
        elif el.tag == q("w:t"):
            for cid in active:
                text[cid] = (text[cid] + (el.text or ""))[:MAX_TEXT]
        elif el.tag == q("w:p"):
            for cid in active:
                text[cid] += "\n" if text[cid] else ""
    return text


def docx_numbering(root: ET.Element | None) -> dict[tuple[str, int], bool]:
    """(numId, level) -> ordered (a bullet is not)."""
    abstract: dict[str, dict[int, bool]] = {}
    for an in findall(root, "w:abstractNum"):
        levels = {}
        for lvl in findall(an, "w:lvl"):
            fmt = w(find(lvl, "w:numFmt"), "val", "decimal")
            levels[int(w(lvl, "ilvl", "0"))] = fmt not in ("bullet", "none")
        abstract[w(an, "abstractNumId", "")] = levels
    out = {}
    for num in findall(root, "w:num"):
        levels = abstract.get(w(find(num, "w:abstractNumId"), "val", ""), {})
        for level, ordered in levels.items():
            out[(w(num, "numId", ""), level)] = ordered
    return out


def docx_paragraph(
    p: ET.Element, styles: DocxStyles, numbering: dict[tuple[str, int], bool]
) -> dict[str, Any]:
    ppr = find(p, "w:pPr")
    sid = w(find(ppr, "w:pStyle"), "val") or styles.default_para
    name = styles.name(sid)
    heading = 0
    m = re.fullmatch(r"heading\s*(\d)", (name or "").strip(), re.I)
    outline = either(find(ppr, "w:outlineLvl"), styles.ppr(sid, "w:outlineLvl"))
    if m:
        heading = int(m.group(1))
    elif outline is not None and (number(w(outline, "val")) or 0) < 9:
        heading = int(w(outline, "val")) + 1
    jc = either(find(ppr, "w:jc"), styles.ppr(sid, "w:jc"))
    num = either(find(ppr, "w:numPr"), styles.ppr(sid, "w:numPr"))
    lst = None
    if num is not None:
        nid = w(find(num, "w:numId"), "val", "0")
        level = int(w(find(num, "w:ilvl"), "val", "0") or 0)
        if nid != "0":
            lst = {"level": level, "ordered": numbering.get((nid, level), True)}
    runs = []
    for r in p.iter(q("w:r")):
        rpr = find(r, "w:rPr")
        rstyle = w(find(rpr, "w:rStyle"), "val")

        def on(tag: str, rpr: ET.Element | None = rpr, rstyle: str | None = rstyle) -> bool:
            own = w_on(find(rpr, tag))
            if own is None and rstyle:
                own = w_on(styles.rpr(rstyle, tag))
            if own is None:
                own = w_on(styles.rpr(sid, tag))
            return bool(own)

        u = either(find(rpr, "w:u"), styles.rpr(sid, "w:u"))
        props = (on("w:b"), on("w:i"), u is not None and w(u, "val", "single") != "none")
        runs.append((docx_text(r), *props))
    return paragraph_model(docx_text(p), name, heading, jc, lst, runs)


def paragraph_model(
    text: str,
    style: str | None,
    heading: int,
    jc: ET.Element | str | None,
    lst: dict[str, Any] | None,
    pieces: list[tuple[str, bool, bool, bool]],
) -> dict[str, Any]:
    """A paragraph: its text, style and, from its pieces of text with their (bold, italic,
    underline), the runs (neighbours alike merged) and whether all its text is bold..."""
    runs: list[dict[str, Any]] = []
    for text_, bold, italic, underline in pieces:
        if not text_:
            continue
        props = {"bold": bold, "italic": italic, "underline": underline}
        if runs and all(runs[-1][k] == v for k, v in props.items()):
            runs[-1]["text"] += text_
        else:
            runs.append({"text": text_, **props})
    shown = [r for r in runs if r["text"].strip()]
    if isinstance(jc, ET.Element):
        align = DOCX_ALIGN.get(w(jc, "val", "left"), "left")
    else:
        align = jc or "left"
    return {
        "text": text,
        "style": style,
        "heading": heading,
        "align": align,
        "bold": bool(shown) and all(r["bold"] for r in shown),
        "italic": bool(shown) and all(r["italic"] for r in shown),
        "underline": bool(shown) and all(r["underline"] for r in shown),
        "list": lst,
        "runs": runs[:200],
    }


def docx_table(tbl: ET.Element) -> list[list[str]]:
    rows = []
    for tr in findall(tbl, "w:tr"):
        rows.append(
            ["\n".join(docx_text(p) for p in findall(tc, ".//w:p")) for tc in findall(tr, "w:tc")]
        )
    return rows


# ----- ODT ----------------------------------------------------------------------------------
def read_odt(pkg: Package) -> dict[str, Any]:
    content = pkg.xml("content.xml")
    styles_root = pkg.xml_or_none("styles.xml")
    styles = OdfStyles(styles_root, content)
    body = find(content, "office:body/office:text")
    if body is None:
        raise DocumentError("content.xml has no text body")
    paragraphs: list[dict[str, Any]] = []
    tables: list[list[list[str]]] = []
    comments: list[dict[str, Any]] = []

    def walk(el: ET.Element, lst: dict[str, Any] | None, list_style: str | None) -> None:
        for child in el:
            if len(paragraphs) + len(tables) > MAX_ITEMS:
                raise DocumentError(f"more than {MAX_ITEMS} paragraphs")
            tag = child.tag
            if tag in (q("text:p"), q("text:h")):
                paragraphs.append(odt_paragraph(child, styles, lst))
                for ann in child.iter(q("office:annotation")):
                    comments.append(
                        {
                            "text": cut("\n".join(odf_text(p) for p in findall(ann, "text:p"))),
                            "author": (who.text or "")
                            if (who := find(ann, "dc:creator")) is not None
                            else None,
                        }
                    )
            elif tag == q("text:list"):
                style = at(child, "text:style-name") or list_style
                level = lst["level"] + 1 if lst is not None else 0
                for item in child:
                    if item.tag in (q("text:list-item"), q("text:list-header")):
                        walk(
                            item,
                            {"level": level, "ordered": odt_ordered(styles, style, level)},
                            style,
                        )
            elif tag == q("table:table"):
                rows = []
                for tr in child.iter(q("table:table-row")):
                    rows.append(
                        [
                            "\n".join(odf_text(p) for p in tc.iter(q("text:p")))
                            for tc in tr
                            if tc.tag == q("table:table-cell")
                        ]
                    )
                tables.append(rows)
            elif tag == q("text:section") or tag == q("text:soft-page-break"):
                walk(child, lst, list_style)

    walk(body, None, None)
    anchors = odt_anchors(body)
    for comment, anchor in zip(comments, anchors, strict=False):
        comment["anchor"] = cut(anchor)
    return {
        "type": "text_document",
        "paragraphs": paragraphs,
        "tables": tables,
        "comments": comments,
        "page": odf_page(styles),
    }


def odt_anchors(body: ET.Element) -> list[str]:
    """The text each annotation is anchored on, in document order (from the annotation to
    its ``office:annotation-end`` of the same name; empty for a comment on a point)."""
    found: list[str] = []
    active: dict[str, int] = {}

    def add(text: str | None) -> None:
        for i in active.values():
            found[i] = (found[i] + (text or ""))[:MAX_TEXT]

    def walk(el: ET.Element) -> None:
        add(el.text)
        for child in el:
            if child.tag == q("office:annotation"):
                found.append("")
                name = at(child, "office:name")
                if name:
                    active[name] = len(found) - 1
            elif child.tag == q("office:annotation-end"):
                active.pop(at(child, "office:name", ""), None)
            elif child.tag == q("text:s"):
                add(" " * int(at(child, "text:c", "1") or 1))
            elif child.tag != q("text:note"):
                if child.tag in (q("text:p"), q("text:h")):
                    add("\n" if any(found[i] for i in active.values()) else "")
                walk(child)
            add(child.tail)

    walk(body)
    return [a.strip("\n") for a in found]


def odt_ordered(styles: OdfStyles, style: str | None, level: int) -> bool:
    ls = styles.lists.get(style or "")
    for lvl in findall(ls, "*"):
        if int(at(lvl, "text:level", "1")) == level + 1:
            return lvl.tag == q("text:list-level-style-number") and bool(
                at(lvl, "style:num-format")
            )
    return False


def odt_paragraph(p: ET.Element, styles: OdfStyles, lst: dict[str, Any] | None) -> dict[str, Any]:
    sname = at(p, "text:style-name")
    fam = "paragraph"
    heading = int(at(p, "text:outline-level", "1") or 1) if p.tag == q("text:h") else 0
    if not heading:
        level = styles.prop(fam, sname, "style:paragraph-properties", "style:default-outline-level")
        for el in styles.chain(fam, sname):
            lvl = at(el, "style:default-outline-level")
            if lvl:
                level = lvl
                break
        else:
            level = None
        heading = int(level) if level and level.isdigit() else 0

    align = styles.prop(fam, sname, "style:paragraph-properties", "fo:text-align")
    pieces = odf_pieces(p, styles, fam, sname)
    return paragraph_model(
        odf_text(p), styles.display(fam, sname), heading, odf_align(align), lst, pieces
    )


def odf_props(styles: OdfStyles, family: str, name: str | None) -> list[bool | None]:
    """(bold, italic, underline) a style sets (None: it says nothing of one)."""

    def get(attr: str, test: Any) -> bool | None:
        value = styles.prop(family, name, "style:text-properties", attr)
        return None if value is None else bool(test(value))

    return [
        get("fo:font-weight", odf_bold),
        get("fo:font-style", lambda v: v in ("italic", "oblique")),
        get("style:text-underline-style", lambda v: v != "none"),
    ]


def odf_pieces(
    p: ET.Element, styles: OdfStyles, family: str, name: str | None
) -> list[tuple[str, bool, bool, bool]]:
    """The paragraph's text in pieces, each with its (bold, italic, underline): a span's own
    style over the paragraph's."""
    base = tuple(bool(v) for v in odf_props(styles, family, name))
    out: list[tuple[str, bool, bool, bool]] = []
    skipped = (q("office:annotation"), q("text:note"))

    def add(text: str | None, props: tuple[bool, ...]) -> None:
        if text:
            out.append((text, *props))  # type: ignore[arg-type]

    def walk(el: ET.Element, props: tuple[bool, ...]) -> None:
        add(el.text, props)
        for child in el:
            if child.tag in skipped:
                pass
            elif child.tag == q("text:span"):
                own = odf_props(styles, "text", at(child, "text:style-name"))
                walk(
                    child, tuple(o if o is not None else i for o, i in zip(own, props, strict=True))
                )
            elif child.tag == q("text:s"):
                add(" " * int(at(child, "text:c", "1") or 1), props)
            elif child.tag == q("text:tab"):
                add("\t", props)
            elif child.tag == q("text:line-break"):
                add("\n", props)
            else:
                walk(child, props)
            add(child.tail, props)

    walk(p, base)
    return out


def odf_page(styles: OdfStyles) -> dict[str, Any]:
    masters = styles.masters
    master = next((m for m in masters if at(m, "style:name") in ("Standard", "Default")), None)
    master = master if master is not None else (masters[0] if masters else None)
    layout = styles.page_layouts.get(at(master, "style:page-layout-name", ""))
    props = find(layout, "style:page-layout-properties")
    width = length_mm(at(props, "fo:page-width"))
    height = length_mm(at(props, "fo:page-height"))
    orient = at(props, "style:print-orientation") or (
        "landscape" if width and height and width > height else "portrait"
    )
    return {
        "width": width,
        "height": height,
        "orientation": orient,
        "margins": {
            side: length_mm(at(props, f"fo:margin-{side}"))
            for side in ("top", "bottom", "left", "right")
        },
    }


# ----- PPTX ---------------------------------------------------------------------------------
EMU_MM = 36000


def pptx_paragraphs(body: ET.Element | None) -> list[str]:
    out = []
    for p in findall(body, "a:p"):
        text = []
        for el in p.iter():
            if el.tag == q("a:t"):
                text.append(el.text or "")
            elif el.tag == q("a:br"):
                text.append("\n")
        out.append(cut("".join(text)))
    return out


PPTX_KIND = {"title": "title", "ctrTitle": "title", "subTitle": "subtitle", "body": "body",
             "obj": "body", "pic": "image", "tbl": "table", "chart": "chart"}  # fmt: skip


def pptx_shapes(tree: ET.Element | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for el in tree if tree is not None else []:
        tag = el.tag.split("}")[1]
        if tag == "grpSp":
            out += pptx_shapes(el)
            continue
        if tag not in ("sp", "pic", "graphicFrame", "cxnSp"):
            continue
        nv = next(
            (
                c
                for c in el
                if c.tag.endswith("}nvSpPr")
                or c.tag.endswith("}nvPicPr")
                or c.tag.endswith("}nvGraphicFramePr")
            ),
            None,
        )
        ph = find(nv, "p:nvPr/p:ph")
        if ph is not None:
            kind = PPTX_KIND.get(ph.get("type", "obj"), ph.get("type", "obj"))
        elif tag == "pic":
            kind = "image"
        elif tag == "graphicFrame":
            kind = "table" if any(True for _ in el.iter(q("a:tbl"))) else "object"
        else:
            kind = "text" if find(el, "p:txBody") is not None else "shape"
        off = either(find(el, "p:spPr/a:xfrm/a:off"), find(el, "p:xfrm/a:off"))
        ext = either(find(el, "p:spPr/a:xfrm/a:ext"), find(el, "p:xfrm/a:ext"))

        def emu(node: ET.Element | None, name: str) -> float | None:
            v = number(at(node, name))
            return None if v is None else round(v / EMU_MM, 2)

        paras = pptx_paragraphs(find(el, "p:txBody"))
        rows = [
            ["".join(t.text or "" for t in tc.iter(q("a:t"))) for tc in tr.iter(q("a:tc"))]
            for tr in el.iter(q("a:tr"))
        ]
        if rows:
            paras = ["\t".join(row) for row in rows]
        if tag == "pic" and ph is not None:
            kind = "image"
        runs = []
        for r in el.iter(q("a:r")):
            rpr = find(r, "a:rPr")
            flags = [at(rpr, k) in ("1", "true") for k in ("b", "i")]
            runs.append((rich_text(r, "a:t"), *flags, at(rpr, "u") not in (None, "none")))
        out.append(
            {
                "kind": kind,
                "text": cut("\n".join(paras)),
                "paragraphs": paras,
                "rows": rows,
                "runs": runs,
                "x": emu(off, "x"),
                "y": emu(off, "y"),
                "w": emu(ext, "cx"),
                "h": emu(ext, "cy"),
            }
        )
        if len(out) > MAX_ITEMS:
            raise DocumentError(f"more than {MAX_ITEMS} shapes")
    return out


def read_pptx(pkg: Package) -> dict[str, Any]:
    main = "ppt/presentation.xml"
    pres = pkg.xml(main)
    rels = pkg.rels(main)
    size = find(pres, "p:sldSz")
    slides: list[dict[str, Any]] = []
    for sid in findall(pres, "p:sldIdLst/p:sldId"):
        part = rels.get(at(sid, "r:id", ""), ("", ""))[1]
        if not part or not pkg.has(part):
            raise DocumentError(f"slide {len(slides) + 1} has no part")
        root = pkg.xml(part)
        shapes = pptx_shapes(find(root, "p:cSld/p:spTree"))
        srels = pkg.rels(part)
        layout_name, layout_type, notes = None, None, ""
        for kind, target in srels.values():
            if kind == "slideLayout" and pkg.has(target):
                layout = pkg.xml(target)
                layout_name, layout_type = at(find(layout, "p:cSld"), "name"), layout.get("type")
            elif kind == "notesSlide" and pkg.has(target):
                nshapes = pptx_shapes(find(pkg.xml(target), "p:cSld/p:spTree"))
                notes = "\n".join(s["text"] for s in nshapes if s["kind"] == "body")
        fill = find(root, "p:cSld/p:bg/p:bgPr/a:solidFill/a:srgbClr")
        slides.append(
            slide_model(
                shapes,
                notes,
                layout_name,
                PPTX_LAYOUT_NAMES.get((layout_name or "").casefold())
                or PPTX_LAYOUTS.get(layout_type or "", layout_type),
                root.get("show") in ("0", "false"),
                hex_color(at(fill, "val")),
            )
        )
        if len(slides) > MAX_ITEMS:
            raise DocumentError(f"more than {MAX_ITEMS} slides")
    return {
        "type": "presentation",
        "size": {
            "width": round(float(size.get("cx", 0)) / EMU_MM, 2) if size is not None else None,
            "height": round(float(size.get("cy", 0)) / EMU_MM, 2) if size is not None else None,
        },
        "slides": slides,
    }


#: a layout by what it holds, the same name for Impress's ``AL1T<n>`` and PowerPoint's types
LAYOUT_KINDS = {0: "title_slide", 1: "title_content", 3: "two_content", 19: "title_only",
                20: "blank", 32: "centered_text"}  # fmt: skip
#: LibreOffice writes some layouts' type as "tx" or "obj" whatever they hold: their names say
PPTX_LAYOUT_NAMES = {"title slide": "title_slide", "title, content": "title_content",
                     "title and content": "title_content", "title only": "title_only",
                     "blank slide": "blank", "blank": "blank", "two content": "two_content",
                     "title, 2 content": "two_content"}  # fmt: skip
PPTX_LAYOUTS = {"title": "title_slide", "obj": "title_content", "twoObj": "two_content",
                "titleOnly": "title_only", "blank": "blank"}  # fmt: skip


def slide_model(
    shapes: list[dict[str, Any]],
    notes: str,
    layout_name: str | None,
    layout_kind: str | None,
    hidden: bool,
    background: str | None,
) -> dict[str, Any]:
    def first(kind: str) -> str | None:
        return next((s["text"] for s in shapes if s["kind"] == kind), None)

    placeholders = [s["kind"] for s in shapes if s["kind"] in ("title", "subtitle", "body")]
    runs = []
    for shape in shapes:
        for text, bold, italic, underline in shape["runs"]:
            if text.strip():
                runs.append({"text": cut(text), "bold": bold, "italic": italic,
                             "underline": underline})  # fmt: skip
    return {
        "title": first("title"),
        "subtitle": first("subtitle"),
        "body": [p for s in shapes if s["kind"] == "body" for p in s["paragraphs"]],
        "texts": [s["text"] for s in shapes if s["kind"] == "text"],
        "tables": [s["rows"] for s in shapes if s["rows"]],
        "notes": cut(notes),
        "layout": ",".join(placeholders),
        "layout_name": layout_name,
        "layout_kind": layout_kind,
        "hidden": hidden,
        "background": background,
        "images": sum(1 for s in shapes if s["kind"] == "image"),
        "runs": runs[:500],
        "shapes": [
            {k: v for k, v in s.items() if k not in ("paragraphs", "runs", "rows")} for s in shapes
        ],
    }


# ----- ODP ----------------------------------------------------------------------------------
ODP_KIND = {"title": "title", "subtitle": "subtitle", "outline": "body", "text": "body",
            "graphic": "image", "table": "table", "chart": "chart", "object": "object",
            "notes": "notes"}  # fmt: skip


def odp_paragraphs(el: ET.Element) -> list[str]:
    out = []
    for node in el.iter():
        if node.tag in (q("text:p"), q("text:h")):
            out.append(odf_text(node))
    return out


def odp_shapes(page: ET.Element, styles: OdfStyles) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for el in page:
        tag = el.tag.split("}")[1]
        if tag == "g":
            out += odp_shapes(el, styles)
            continue
        if el.tag.split("}")[0][1:] != NS["draw"] or tag in ("page-thumbnail",):
            continue
        cls = at(el, "presentation:class")
        empty = at(el, "presentation:placeholder") == "true"
        if cls:
            kind = ODP_KIND.get(cls, cls)
        elif find(el, "table:table") is not None:  # a table's frame holds a picture of it too
            kind = "table"
        elif find(el, "draw:object") is not None or find(el, "draw:object-ole") is not None:
            kind = "object"
        elif find(el, "draw:image") is not None:
            kind = "image"
        else:
            kind = "text" if any(True for _ in el.iter(q("text:p"))) else "shape"
        if kind == "image" and find(el, "draw:image") is None:
            empty = True
        paras = [] if empty else odp_paragraphs(el)
        rows = [
            [
                "\n".join(odf_text(p) for p in tc.iter(q("text:p")))
                for tc in tr
                if tc.tag == q("table:table-cell")
            ]
            for tr in el.iter(q("table:table-row"))
        ]
        if rows:
            paras = ["\t".join(row) for row in rows]
        if empty and kind == "image":
            kind = "placeholder"
        runs = (
            []
            if empty
            else [
                piece
                for p in el.iter()
                if p.tag in (q("text:p"), q("text:h"))
                for piece in odf_pieces(p, styles, "paragraph", at(p, "text:style-name"))
            ]
        )
        out.append(
            {
                "kind": kind,
                "text": cut("\n".join(paras)),
                "paragraphs": paras,
                "rows": rows,
                "runs": runs,
                "x": length_mm(at(el, "svg:x")),
                "y": length_mm(at(el, "svg:y")),
                "w": length_mm(at(el, "svg:width")),
                "h": length_mm(at(el, "svg:height")),
            }
        )
        if len(out) > MAX_ITEMS:
            raise DocumentError(f"more than {MAX_ITEMS} shapes")
    return out


def read_odp(pkg: Package) -> dict[str, Any]:
    content = pkg.xml("content.xml")
    styles = OdfStyles(pkg.xml_or_none("styles.xml"), content)
    body = find(content, "office:body/office:presentation")
    if body is None:
        raise DocumentError("content.xml has no presentation body")
    slides: list[dict[str, Any]] = []
    for page in findall(body, "draw:page"):
        shapes = odp_shapes(page, styles)
        notes_el = find(page, "presentation:notes")
        notes = ""
        if notes_el is not None:
            notes_shapes = odp_shapes(notes_el, styles)
            notes = "\n".join(s["text"] for s in notes_shapes if s["kind"] == "notes")
        layout = at(page, "presentation:presentation-page-layout-name")
        m = re.fullmatch(r"AL\d+T(\d+)", layout or "")
        kind = LAYOUT_KINDS.get(int(m.group(1)), f"T{m.group(1)}") if m else None
        look = at(page, "draw:style-name")

        def page_prop(attr: str, look: str | None = look) -> str | None:
            return styles.prop("drawing-page", look, "style:drawing-page-properties", attr)

        solid = page_prop("draw:fill") == "solid"
        background = hex_color(page_prop("draw:fill-color")) if solid else None
        hidden = page_prop("presentation:visibility") == "hidden"
        hidden = hidden or at(page, "presentation:visibility") == "hidden"
        slides.append(slide_model(shapes, notes, layout, kind, hidden, background))
        if len(slides) > MAX_ITEMS:
            raise DocumentError(f"more than {MAX_ITEMS} slides")
    master = styles.masters[0] if styles.masters else None
    layout = styles.page_layouts.get(at(master, "style:page-layout-name", ""))
    props = find(layout, "style:page-layout-properties")
    return {
        "type": "presentation",
        "size": {
            "width": length_mm(at(props, "fo:page-width")),
            "height": length_mm(at(props, "fo:page-height")),
        },
        "slides": slides,
    }


# ----- PPTX as python-pptx sees it (OSWorld's compare_pptx_files) ---------------------------
PPTX_TYPES = {"pic": 13, "graphicFrame": 7, "grpSp": 6, "cxnSp": 9}


def pptx_runs(p: ET.Element) -> list[dict[str, Any]]:
    """A paragraph's ``a:r`` runs with their font as python-pptx reports it (None: unset)."""
    runs = []
    for r in findall(p, "a:r"):
        rpr = find(r, "a:rPr")

        def flag(name: str, rpr: ET.Element | None = rpr) -> bool | None:
            v = at(rpr, name)
            return None if v is None else v in ("1", "true")

        u = at(rpr, "u")
        rgb = at(find(rpr, "a:solidFill/a:srgbClr"), "val")
        runs.append(
            {
                "text": cut(rich_text(r, "a:t")),
                "font": at(find(rpr, "a:latin"), "typeface"),
                "size": at(rpr, "sz"),
                "b": flag("b"),
                "i": flag("i"),
                "u": None if u is None else (False if u == "none" else (True if u == "sng" else u)),
                "rgb": rgb.upper() if rgb else None,
                "strike": at(rpr, "strike", "noStrike"),
            }
        )
    return runs


def pptx_text_frame(body: ET.Element | None) -> list[dict[str, Any]]:
    paras = []
    for p in findall(body, "a:p"):
        ppr = find(p, "a:pPr")
        text = []
        for el in p:
            if el.tag in (q("a:r"), q("a:fld")):
                text.append(rich_text(el, "a:t"))
            elif el.tag == q("a:br"):
                text.append("\v")
        paras.append(
            {
                "text": cut("".join(text)),
                "align": at(ppr, "algn"),
                "level": int(at(ppr, "lvl", "0") or 0),
                "runs": pptx_runs(p),
            }
        )
    return paras


def pptx_placeholders(pkg: Package, part: str) -> dict[tuple[str, str], list[int | None]]:
    """(kind, idx or type) -> the xfrm of the placeholders of a layout or master part."""
    out: dict[tuple[str, str], list[int | None]] = {}
    for sp in pkg.xml(part).iter(q("p:sp")):
        ph = find(sp, "p:nvSpPr/p:nvPr/p:ph")
        xfrm = find(sp, "p:spPr/a:xfrm")
        if ph is None or xfrm is None:
            continue
        box = pptx_box(xfrm)
        out.setdefault(("idx", ph.get("idx", "0")), box)
        out.setdefault(("type", ph.get("type", "body")), box)
    return out


def pptx_box(xfrm: ET.Element | None) -> list[int | None]:
    off, ext = find(xfrm, "a:off"), find(xfrm, "a:ext")
    return [
        int(v) if v is not None else None
        for v in (at(off, "x"), at(off, "y"), at(ext, "cx"), at(ext, "cy"))
    ]


def pptx_detail(pkg: Package) -> list[dict[str, Any]]:
    """Per slide: its shapes with positions (EMU), text frames, runs and tables, notes, the
    background and the bullets of its XML, the way python-pptx presents them."""
    main = "ppt/presentation.xml"
    rels = pkg.rels(main)
    out = []
    for sid in findall(pkg.xml(main), "p:sldIdLst/p:sldId"):
        part = rels.get(at(sid, "r:id", ""), ("", ""))[1]
        root = pkg.xml(part)
        srels = {kind: target for kind, target in pkg.rels(part).values()}
        layout = srels.get("slideLayout", "")
        master = dict(pkg.rels(layout).values()).get("slideMaster", "") if layout else ""
        inherited = [pptx_placeholders(pkg, p) for p in (layout, master) if p and pkg.has(p)]
        bg = find(root, "p:cSld/p:bg")
        if bg is None and master and pkg.has(master):
            bg = find(pkg.xml(master), "p:cSld/p:bg")
        solid = find(bg, "p:bgPr/a:solidFill")
        notes = ""
        if srels.get("notesSlide") and pkg.has(srels["notesSlide"]):
            for sp in pkg.xml(srels["notesSlide"]).iter(q("p:sp")):
                if at(find(sp, "p:nvSpPr/p:nvPr/p:ph"), "type") == "body":
                    paras = pptx_text_frame(find(sp, "p:txBody"))
                    notes = "\n".join(p["text"] for p in paras)
                    break
        bullets: list[Any] = []
        joinable = True  # python-pptx's side fails to join a run without text: no comparison
        for p in root.iter(q("a:p")):
            ppr = find(p, "a:pPr")
            found = [t.text for t in p.iter(q("a:t"))]
            texts = [t for t in found if t is not None]
            if len(texts) < len(found):
                joinable = False
                break
            if ppr is not None:
                lvl, char = ppr.get("lvl"), at(find(ppr, "a:buChar"), "char", "No Bullet")
            else:
                lvl, char = "No Level", "No Bullet"
            if "".join(texts).strip():
                bullets.append(["0" if lvl is None else lvl, char, "".join(texts)])
        tree = find(root, "p:cSld/p:spTree")
        out.append(
            {
                "bg": at(find(solid, "a:srgbClr"), "val") if solid is not None else None,
                "notes": cut(notes),
                "shapes": [pptx_detail_shape(el, inherited) for el in pptx_children(tree)],
                "text_shapes": [
                    pptx_detail_shape(el, inherited)
                    for el in (tree.iter(q("p:sp")) if tree is not None else [])
                ],
                "bullets": bullets if joinable else None,
            }
        )
    return out


def pptx_children(tree: ET.Element | None) -> list[ET.Element]:
    kinds = (q("p:sp"), q("p:pic"), q("p:graphicFrame"), q("p:grpSp"), q("p:cxnSp"))
    return [el for el in (tree if tree is not None else []) if el.tag in kinds]


def pptx_detail_shape(
    el: ET.Element, inherited: list[dict[tuple[str, str], list[int | None]]]
) -> dict[str, Any]:
    tag = el.tag.split("}")[1]
    ph = next(iter(el.iter(q("p:ph"))), None) if tag != "grpSp" else None
    xfrm = either(find(el, "p:spPr/a:xfrm"), find(el, "p:xfrm"), find(el, "p:grpSpPr/a:xfrm"))
    box = pptx_box(xfrm) if xfrm is not None else [None] * 4
    if ph is not None and xfrm is None:
        for table in inherited:
            found = table.get(("idx", ph.get("idx", ""))) or table.get(
                ("type", ph.get("type", "body"))
            )
            if found:
                box = found
                break
    if ph is not None:
        kind = 14
    elif tag == "sp":
        kind = (
            17
            if at(find(el, "p:nvSpPr/p:cNvSpPr"), "txBox") == "1"
            else (5 if find(el, "p:spPr/a:custGeom") is not None else 1)
        )
    elif tag == "graphicFrame" and any(True for _ in el.iter(q("a:tbl"))):
        kind = 19
    else:
        kind = PPTX_TYPES.get(tag, 1)
    shape: dict[str, Any] = {"type": kind, "box": box, "has_text": tag == "sp"}
    if tag == "sp":
        paras = pptx_text_frame(find(el, "p:txBody"))
        shape["paragraphs"] = paras or [{"text": "", "align": None, "level": 0, "runs": []}]
        shape["text"] = "\n".join(p["text"] for p in shape["paragraphs"])
    if kind == 19:
        tbl = next(el.iter(q("a:tbl")))
        shape["table"] = [
            [pptx_text_frame(find(tc, "a:txBody")) for tc in findall(tr, "a:tc")]
            for tr in findall(tbl, "a:tr")
        ]
        shape["columns"] = len(findall(tbl, "a:tblGrid/a:gridCol"))
    return shape


READERS = {
    "xlsx": read_xlsx,
    "ods": read_ods,
    "docx": read_docx,
    "odt": read_odt,
    "pptx": read_pptx,
    "odp": read_odp,
}


# ----- entry points -------------------------------------------------------------------------
def parse(
    data: bytes, formats: list[str] | tuple[str, ...] = FORMATS, ext: str = "", detail: bool = False
) -> dict[str, Any]:
    """The model of a document's bytes. ``formats``: what the task allows; ``ext``: the
    file's extension, which must agree with the content when it names a known format."""
    if len(data) > MAX_FILE:
        raise DocumentError(f"{len(data)} bytes (more than {MAX_FILE})")
    pkg = Package(data)
    fmt = detect(pkg)
    ext = ext.lower().lstrip(".")
    if ext in FORMATS and ext != fmt:
        raise DocumentError(f"the file is named .{ext} but holds {fmt} content")
    if fmt not in formats:
        raise DocumentError(f"{fmt} is not a format this task allows ({', '.join(formats)})")
    try:
        model = READERS[fmt](pkg)
    except DocumentError:
        raise
    except RecursionError:
        raise DocumentError("the document nests too deeply") from None
    except (KeyError, ValueError, IndexError, TypeError, AttributeError) as exc:
        raise DocumentError(
            f"{fmt} content that does not parse: {type(exc).__name__}: {exc}"
        ) from None
    model["format"] = fmt
    if detail and fmt == "pptx":
        try:
            model["pptx"] = pptx_detail(pkg)
        except (KeyError, ValueError, IndexError, TypeError, AttributeError) as exc:
            raise DocumentError(f"pptx content that does not parse: {exc}") from None
    return model


def read_file(path: str) -> bytes:
    """The file's bytes: never through a link, regular files only, never blocking, bounded."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a symbolic link
            raise DocumentError(f"{path} is a symbolic link (not followed)") from None
        raise DocumentError(f"{path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DocumentError(f"{path} is not a regular file")
        if st.st_size > MAX_FILE:
            raise DocumentError(f"{path} is {st.st_size} bytes (more than {MAX_FILE})")
        chunks, left = [], MAX_FILE + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_FILE:
            raise DocumentError(f"{path} is more than {MAX_FILE} bytes")
        return data
    finally:
        os.close(fd)


def read_document(
    path: str, formats: list[str] | tuple[str, ...] = FORMATS, detail: bool = False
) -> dict[str, Any]:
    """The model of the document at ``path`` (the first of ``path`` and its other allowed
    extensions that exists); ``detail``: a pptx's shapes as python-pptx sees them too."""
    found = first_existing(candidates(path, formats))
    return parse(read_file(found), formats, posixpath.splitext(found)[1], detail)


def candidates(path: str, formats: list[str] | tuple[str, ...]) -> list[str]:
    """``path`` itself, then its stem with each allowed extension (an ``.ods`` answer where
    the task allows it as well as ``.xlsx``)."""
    stem, ext = posixpath.splitext(path)
    if ext.lower().lstrip(".") not in FORMATS:
        stem = path
    out = [path] if ext.lower().lstrip(".") in FORMATS else []
    out += [f"{stem}.{f}" for f in formats if f"{stem}.{f}" not in out]
    return out


def first_existing(paths: list[str]) -> str:
    for path in paths:
        try:
            os.lstat(path)
            return path
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise DocumentError(f"{path}: {exc.strerror}") from None
    raise DocumentError(f"no document at {' or '.join(paths)}")


def main(argv: list[str]) -> int:
    """In the sandbox: ``python3 -I -S -c SOURCE PATH FORMATS`` prints one JSON line, the
    model or the reason it could not be read, and exits 0 either way."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        resource.setrlimit(resource.RLIMIT_CPU, (30, 30))
    except (ImportError, ValueError, OSError):
        pass
    sys.setrecursionlimit(3000)
    try:
        formats = [f for f in argv[2].split(",") if f in FORMATS]
        model = read_document(argv[1], formats, detail=argv[3:4] == ["detail"])
        found = {"ok": True, "model": model}
    except DocumentError as exc:
        found = {"ok": False, "error": str(exc)}
    except MemoryError:
        found = {"ok": False, "error": "the document needs more memory than a check may use"}
    except RecursionError:
        found = {"ok": False, "error": "the document nests too deeply"}
    sys.stdout.write(json.dumps(found, separators=(",", ":"), ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
