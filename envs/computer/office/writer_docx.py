"""A small, deterministic writer of word-processing documents (``.docx``, WordprocessingML).

The Writer templates generate their documents in the trusted process at suite build time. This
module writes them with the standard library only (``zipfile`` and escaped XML text), so:

- the same model gives the same bytes on any machine: every zip entry has a fixed timestamp
  (1980-01-01), fixed order and permissions, and no library version decides the XML;
- the gateway needs no document library (python-docx is a Debian package of the sandbox, used
  by the code oracles there, not a dependency of palaestra).

What it writes is what the tasks need and LibreOffice and python-docx read: paragraphs with a
named style (Normal, Title, Heading 1-3, and Quotations: LibreOffice's own name, so Writer and
python-docx apply the same one), runs with bold/italic, alignment, bulleted and numbered
items, tables with a header row, comments anchored on a paragraph, the page size, orientation
and margins of the one section, and the core properties (title, author).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

#: twips per millimetre (1 inch = 1440 twips = 25.4 mm)
TWIPS_MM = 1440 / 25.4
#: (width, height) in millimetres of the paper sizes the templates use, portrait
PAPERS = {"A4": (210.0, 297.0), "Letter": (215.9, 279.4), "A5": (148.0, 210.0)}
_FIXED = (1980, 1, 1, 0, 0, 0)
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#: style id -> (display name, outline level or None, run properties XML, paragraph properties XML)
STYLES = {
    "Normal": ("Normal", None, '<w:sz w:val="22"/>', '<w:spacing w:after="120"/>'),
    "Title": ("Title", None, '<w:b/><w:sz w:val="44"/>', '<w:jc w:val="center"/>'),
    "Heading1": ("heading 1", 0, '<w:b/><w:sz w:val="32"/>', '<w:spacing w:before="240"/>'),
    "Heading2": ("heading 2", 1, '<w:b/><w:sz w:val="28"/>', '<w:spacing w:before="200"/>'),
    "Heading3": ("heading 3", 2, '<w:b/><w:i/><w:sz w:val="24"/>', ""),
    "Quotations": (
        "Quotations",
        None,
        '<w:i/><w:sz w:val="22"/>',
        '<w:ind w:left="720" w:right="720"/>',
    ),
}


@dataclass(frozen=True)
class Run:
    text: str
    bold: bool = False
    italic: bool = False


@dataclass(frozen=True)
class Para:
    """A paragraph: ``text`` is a string or runs; ``style`` a key of :data:`STYLES`;
    ``align`` one of left/center/right/both; ``items`` ``"bullet"`` or ``"number"`` makes it a
    list item; ``comment`` (author, text) anchors a comment on the whole paragraph."""

    text: str | tuple[Run, ...]
    style: str = "Normal"
    align: str | None = None
    items: str | None = None
    comment: tuple[str, str] | None = None

    @property
    def plain(self) -> str:
        return self.text if isinstance(self.text, str) else "".join(r.text for r in self.text)


@dataclass(frozen=True)
class Table:
    rows: tuple[tuple[str, ...], ...]  # the first row is the header (bold)


@dataclass(frozen=True)
class Page:
    paper: str = "A4"
    landscape: bool = False
    margins_mm: tuple[float, float, float, float] = (
        25.0,
        25.0,
        25.0,
        25.0,
    )  # top right bottom left

    def size_mm(self) -> tuple[float, float]:
        w, h = PAPERS[self.paper]
        return (h, w) if self.landscape else (w, h)


@dataclass(frozen=True)
class Doc:
    blocks: tuple[Para | Table, ...]
    page: Page = field(default_factory=Page)
    title: str = ""
    author: str = ""


def twips(mm: float) -> int:
    return round(mm * TWIPS_MM)


def _run(r: Run) -> str:
    props = ("<w:b/>" if r.bold else "") + ("<w:i/>" if r.italic else "")
    rpr = f"<w:rPr>{props}</w:rPr>" if props else ""
    return f'<w:r>{rpr}<w:t xml:space="preserve">{escape(r.text)}</w:t></w:r>'


def _para(p: Para, comment_id: int | None) -> str:
    props = f'<w:pStyle w:val="{p.style}"/>' if p.style != "Normal" else ""
    if p.items:
        props += f'<w:numPr><w:ilvl w:val="0"/><w:numId w:val="{_NUM[p.items]}"/></w:numPr>'
    if p.align:
        props += f'<w:jc w:val="{p.align}"/>'
    runs = (Run(p.text),) if isinstance(p.text, str) else p.text
    body = "".join(_run(r) for r in runs)
    if comment_id is not None:
        body = (
            f'<w:commentRangeStart w:id="{comment_id}"/>{body}'
            f'<w:commentRangeEnd w:id="{comment_id}"/>'
            f'<w:r><w:commentReference w:id="{comment_id}"/></w:r>'
        )
    ppr = f"<w:pPr>{props}</w:pPr>" if props else ""
    return f"<w:p>{ppr}{body}</w:p>"


def _table(t: Table, width: int) -> str:
    ncols = max(len(r) for r in t.rows)
    col = width // ncols
    grid = "".join(f'<w:gridCol w:w="{col}"/>' for _ in range(ncols))
    border = "".join(
        f'<w:{side} w:val="single" w:sz="4" w:space="0" w:color="000000"/>'
        for side in ("top", "left", "bottom", "right", "insideH", "insideV")
    )
    rows = []
    for i, row in enumerate(t.rows):
        cells = "".join(
            f'<w:tc><w:tcPr><w:tcW w:w="{col}" w:type="dxa"/></w:tcPr>'
            f"{_para(Para((Run(text, bold=i == 0),)), None)}</w:tc>"
            for text in list(row) + [""] * (ncols - len(row))
        )
        rows.append(f"<w:tr>{cells}</w:tr>")
    return (
        f'<w:tbl><w:tblPr><w:tblW w:w="{col * ncols}" w:type="dxa"/>'
        f"<w:tblBorders>{border}</w:tblBorders></w:tblPr>"
        f"<w:tblGrid>{grid}</w:tblGrid>{''.join(rows)}</w:tbl>"
    )


_NUM = {"bullet": 1, "number": 2}


def _document(doc: Doc) -> tuple[str, str | None]:
    w, h = doc.page.size_mm()
    top, right, bottom, left = (twips(m) for m in doc.page.margins_mm)
    text_width = twips(w) - left - right
    parts: list[str] = []
    comments: list[str] = []
    for block in doc.blocks:
        if isinstance(block, Table):
            parts.append(_table(block, text_width))
            parts.append("<w:p/>")  # Word and Writer want a paragraph between tables
            continue
        cid = None
        if block.comment:
            cid = len(comments)
            author, text = block.comment
            comments.append(
                f'<w:comment w:id="{cid}" w:author="{escape(author)}" '
                f'w:date="2024-01-01T00:00:00Z" w:initials="{escape(author[:1])}">'
                f'<w:p><w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'
                "</w:comment>"
            )
        parts.append(_para(block, cid))
    orient = ' w:orient="landscape"' if doc.page.landscape else ""
    sect = (
        f'<w:sectPr><w:pgSz w:w="{twips(w)}" w:h="{twips(h)}"{orient}/>'
        f'<w:pgMar w:top="{top}" w:right="{right}" w:bottom="{bottom}" w:left="{left}" '
        'w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>'
    )
    body = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{_W}" '
        f'xmlns:r="{_R}"><w:body>{"".join(parts)}{sect}</w:body></w:document>'
    )
    notes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:comments xmlns:w="{_W}">'
        f"{''.join(comments)}</w:comments>"
        if comments
        else None
    )
    return body, notes


def _styles() -> str:
    out = []
    for sid, (name, level, rpr, ppr) in STYLES.items():
        default = ' w:default="1"' if sid == "Normal" else ""
        based = "" if sid == "Normal" else '<w:basedOn w:val="Normal"/><w:next w:val="Normal"/>'
        outline = f'<w:outlineLvl w:val="{level}"/>' if level is not None else ""
        out.append(
            f'<w:style w:type="paragraph"{default} w:styleId="{sid}"><w:name w:val="{name}"/>'
            f"{based}<w:qFormat/><w:pPr>{ppr}{outline}</w:pPr><w:rPr>{rpr}</w:rPr></w:style>"
        )
    fonts = (
        '<w:rFonts w:ascii="Liberation Serif" w:hAnsi="Liberation Serif" w:cs="Liberation Serif"/>'
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="{_W}">'
        f'<w:docDefaults><w:rPrDefault><w:rPr>{fonts}<w:lang w:val="en-US"/></w:rPr>'
        f"</w:rPrDefault></w:docDefaults>{''.join(out)}</w:styles>"
    )


def _numbering() -> str:
    def level(fmt: str, text: str) -> str:
        return (
            f'<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
            f'<w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/>'
            '<w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl>'
        )

    bullet = level("bullet", "\u2022")
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering xmlns:w="{_W}">'
        f'<w:abstractNum w:abstractNumId="0">{bullet}</w:abstractNum>'
        f'<w:abstractNum w:abstractNumId="1">{level("decimal", "%1.")}</w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num></w:numbering>'
    )


def _core(doc: Doc) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties '
        'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<dc:title>{escape(doc.title)}</dc:title><dc:creator>{escape(doc.author)}</dc:creator>"
        '<dcterms:created xsi:type="dcterms:W3CDTF">2024-01-01T00:00:00Z</dcterms:created>'
        "</cp:coreProperties>"
    )


def _rels(items: list[tuple[str, str]]) -> str:
    rels = "".join(
        f'<Relationship Id="rId{i}" Type="{kind}" Target="{target}"/>'
        for i, (kind, target) in enumerate(items, 1)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<Relationships xmlns="{_PKG}">{rels}</Relationships>'
    )


def docx(doc: Doc) -> bytes:
    """The ``.docx`` bytes of ``doc``: the same model always gives the same bytes."""
    body, comments = _document(doc)
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    overrides = {
        "/word/document.xml": f"{main}.document.main+xml",
        "/word/styles.xml": f"{main}.styles+xml",
        "/word/numbering.xml": f"{main}.numbering+xml",
        "/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
    }
    doc_rels = [(f"{_DOC_TYPE}/styles", "styles.xml"), (f"{_DOC_TYPE}/numbering", "numbering.xml")]
    if comments:
        overrides["/word/comments.xml"] = f"{main}.comments+xml"
        doc_rels.append((f"{_DOC_TYPE}/comments", "comments.xml"))
    types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns='
        '"http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        + "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in overrides.items())
        + "</Types>"
    )
    parts = {
        "[Content_Types].xml": types,
        "_rels/.rels": _rels(
            [
                (f"{_DOC_TYPE}/officeDocument", "word/document.xml"),
                (f"{_PKG}/metadata/core-properties", "docProps/core.xml"),
            ]
        ),
        "word/_rels/document.xml.rels": _rels(doc_rels),
        "word/document.xml": body,
        "word/styles.xml": _styles(),
        "word/numbering.xml": _numbering(),
        "docProps/core.xml": _core(doc),
    }
    if comments:
        parts["word/comments.xml"] = comments
    return pack(parts)


def pack(parts: dict[str, str]) -> bytes:
    """A zip of ``parts`` in the given order with fixed timestamps and permissions."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            info = zipfile.ZipInfo(name, _FIXED)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, text.encode("utf-8"))
    return out.getvalue()
