"""Slide decks as OpenDocument presentation bytes (``.odp``), written with the standard library.

Why by hand: the trusted process that builds the suite has no odfpy or python-pptx, and a deck
written from a small model with a fixed zip timestamp is the same bytes for the same seed on every
machine and every library version (the template contract). The file holds only what Impress and
the verifiers need: slides with a title, a subtitle or a bulleted body, speaker notes, pictures,
text boxes and tables, each slide tagged with Impress's layout name (``AL1T0`` title slide,
``AL1T1`` title and content, ``AL1T19`` title only) so a slide added by the user lands on the
same master.

:func:`png` makes the pictures the image tasks put in the home: a banded logo, deterministic.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from xml.sax.saxutils import escape, quoteattr

from palaestra.verifiers.office_xml import NS as ODF

#: a fixed zip time (the template contract: the same seed gives the same bytes)
STAMP = (2024, 1, 1, 0, 0, 0)
MIME = "application/vnd.oasis.opendocument.presentation"
#: Impress's own names of the layouts a generated slide uses
LAYOUTS = {"title": "AL1T0", "content": "AL1T1", "title_only": "AL1T19"}

#: the namespaces an ``.odp`` declares, in this order: the URIs are the readers' own
#: (:data:`palaestra.verifiers.office_xml.NS`) so writer and verifiers cannot drift apart, but
#: for ``meta`` and ``smil``, which no reader looks up
NS = {
    **{k: ODF[k] for k in ("office", "style", "text", "table", "draw", "fo", "xlink", "dc")},
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
    "svg": ODF["svg"],
    "presentation": ODF["presentation"],
    "smil": "urn:oasis:names:tc:opendocument:xmlns:smil-compatible:1.0",
    "loext": ODF["loext"],
}
_XMLNS = " ".join(f"xmlns:{k}={quoteattr(v)}" for k, v in NS.items())
_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'


@dataclass(frozen=True)
class Picture:
    """A picture on a slide: ``href`` inside the package (``Pictures/logo.png``)."""

    href: str
    data: bytes
    x: float = 20.0
    y: float = 10.0
    w: float = 6.0
    h: float = 4.0


@dataclass(frozen=True)
class Slide:
    """One slide: ``layout`` is a key of :data:`LAYOUTS`; ``body`` is the bullets of a content
    slide or the subtitle lines of a title slide; ``boxes`` are free text boxes; ``table`` rows
    of cell texts."""

    title: str
    body: tuple[str, ...] = ()
    notes: str = ""
    layout: str = "content"
    pictures: tuple[Picture, ...] = ()
    boxes: tuple[str, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()
    background: str = ""  # "#rrggbb" or "" for the master's


@dataclass(frozen=True)
class Deck:
    slides: tuple[Slide, ...]
    title: str = ""

    def with_slides(self, slides: list[Slide] | tuple[Slide, ...]) -> Deck:
        return replace(self, slides=tuple(slides))


@dataclass
class _Styles:
    """The automatic styles the slides need, named as they are met."""

    pages: dict[str, str] = field(default_factory=dict)  # background -> dp name

    def page(self, background: str) -> str:
        if background not in self.pages:
            self.pages[background] = f"dp{len(self.pages) + 1}"
        return self.pages[background]

    def xml(self) -> str:
        out = []
        for bg, name in self.pages.items():
            fill = (
                f'draw:fill="solid" draw:fill-color="{bg}"'
                if bg
                else 'presentation:background-visible="true"'
            )
            out.append(
                f'<style:style style:name="{name}" style:family="drawing-page">'
                f"<style:drawing-page-properties {fill} "
                'presentation:background-objects-visible="true"/></style:style>'
            )
        out.append(
            '<style:style style:name="gr1" style:family="graphic">'
            '<style:graphic-properties draw:stroke="none" draw:fill="none" '
            'draw:auto-grow-height="true" fo:min-height="1cm"/></style:style>'
        )
        return "".join(out)


def _p(text: str) -> str:
    return f"<text:p>{escape(text)}</text:p>"


def _frame(cls: str, x: float, y: float, w: float, h: float, inner: str) -> str:
    return (
        f'<draw:frame presentation:style-name="{_PRES_STYLE[cls]}" draw:layer="layout" '
        f'svg:width="{w}cm" svg:height="{h}cm" svg:x="{x}cm" svg:y="{y}cm" '
        f'presentation:class="{cls}" presentation:user-transformed="true">'
        f"<draw:text-box>{inner}</draw:text-box></draw:frame>"
    )


_PRES_STYLE = {
    "title": "Default-title",
    "subtitle": "Default-subtitle",
    "outline": "Default-outline1",
    "notes": "Default-notes",
}


def _bullets(items: tuple[str, ...]) -> str:
    return (
        "<text:list>"
        + "".join(f"<text:list-item>{_p(t)}</text:list-item>" for t in items)
        + ("</text:list>")
    )


def _table(rows: tuple[tuple[str, ...], ...], y: float) -> str:
    cols = max(len(r) for r in rows)
    cells = "".join(
        "<table:table-row>"
        + "".join(f"<table:table-cell>{_p(c)}</table:table-cell>" for c in r)
        + "</table:table-row>"
        for r in rows
    )
    return (
        f'<draw:frame draw:layer="layout" svg:width="20cm" svg:height="{1.2 * len(rows)}cm" '
        f'svg:x="4cm" svg:y="{y}cm"><table:table>'
        f'<table:table-column table:number-columns-repeated="{cols}"/>{cells}'
        "</table:table></draw:frame>"
    )


def _page(i: int, s: Slide, styles: _Styles) -> str:
    parts = [_frame("title", 1.4, 0.6, 25.2, 2.6, _p(s.title))]
    if s.layout == "title":
        parts = [
            _frame("title", 1.4, 3.5, 25.2, 3.0, _p(s.title)),
            _frame("subtitle", 1.4, 7.0, 25.2, 5.0, "".join(_p(t) for t in s.body)),
        ]
    elif s.layout == "content":
        parts.append(_frame("outline", 1.4, 3.7, 25.2, 7.6, _bullets(s.body)))
    for n, pic in enumerate(s.pictures):
        parts.append(
            f'<draw:frame draw:name="Image {n + 1}" draw:layer="layout" svg:width="{pic.w}cm" '
            f'svg:height="{pic.h}cm" svg:x="{pic.x}cm" svg:y="{pic.y}cm">'
            f'<draw:image xlink:href="{pic.href}" xlink:type="simple" xlink:show="embed" '
            'xlink:actuate="onLoad"/></draw:frame>'
        )
    for n, box in enumerate(s.boxes):
        parts.append(
            f'<draw:frame draw:style-name="gr1" draw:layer="layout" svg:width="10cm" '
            f'svg:height="1.2cm" svg:x="{1.4 + 11 * n}cm" svg:y="13.6cm">'
            f"<draw:text-box>{_p(box)}</draw:text-box></draw:frame>"
        )
    if s.table:
        parts.append(_table(s.table, 4.0))
    notes = (
        '<presentation:notes><draw:page-thumbnail draw:layer="layout" svg:width="14cm" '
        'svg:height="7.9cm" svg:x="3.5cm" svg:y="2.2cm" draw:page-number="'
        f'{i}" presentation:class="page"/>'
        + _frame("notes", 2.1, 11.2, 16.8, 13.4, _p(s.notes) if s.notes else "")
        + "</presentation:notes>"
    )
    return (
        f'<draw:page draw:name="page{i}" draw:style-name="{styles.page(s.background)}" '
        'draw:master-page-name="Default" '
        f'presentation:presentation-page-layout-name="{LAYOUTS[s.layout]}">'
        + "".join(parts)
        + notes
        + "</draw:page>"
    )


def _content(deck: Deck) -> str:
    styles = _Styles()
    styles.page("")
    pages = "".join(_page(i + 1, s, styles) for i, s in enumerate(deck.slides))
    return (
        f'{_HEAD}<office:document-content {_XMLNS} office:version="1.3">'
        f"<office:automatic-styles>{styles.xml()}</office:automatic-styles>"
        f"<office:body><office:presentation>{pages}</office:presentation></office:body>"
        "</office:document-content>"
    )


def _layout(name: str, *objects: tuple[str, float, float, float, float]) -> str:
    return (
        f'<style:presentation-page-layout style:name="{name}">'
        + "".join(
            f'<presentation:placeholder presentation:object="{o}" svg:x="{x}cm" svg:y="{y}cm" '
            f'svg:width="{w}cm" svg:height="{h}cm"/>'
            for o, x, y, w, h in objects
        )
        + "</style:presentation-page-layout>"
    )


def _pstyle(name: str, size: str, bold: bool = False) -> str:
    weight = ' fo:font-weight="bold"' if bold else ""
    return (
        f'<style:style style:name="Default-{name}" style:family="presentation">'
        '<style:graphic-properties draw:stroke="none" draw:fill="none"/>'
        f'<style:text-properties fo:font-family="\'Liberation Sans\'" fo:font-size="{size}"'
        f"{weight}/></style:style>"
    )


_TITLE = ("title", 1.4, 0.6, 25.2, 2.6)
_STYLES = (
    f'{_HEAD}<office:document-styles {_XMLNS} office:version="1.3"><office:styles>'
    '<style:default-style style:family="graphic"><style:graphic-properties '
    'draw:fill-color="#729fcf"/><style:text-properties fo:font-size="18pt" '
    "fo:font-family=\"'Liberation Sans'\"/></style:default-style>"
    + _layout("AL1T0", ("title", 1.4, 3.5, 25.2, 3.0), ("subtitle", 1.4, 7.0, 25.2, 5.0))
    + _layout("AL1T1", _TITLE, ("outline", 1.4, 3.7, 25.2, 7.6))
    + _layout("AL1T19", _TITLE)
    + "</office:styles><office:automatic-styles>"
    '<style:page-layout style:name="PM1"><style:page-layout-properties fo:margin-top="0cm" '
    'fo:margin-bottom="0cm" fo:margin-left="0cm" fo:margin-right="0cm" fo:page-width="28cm" '
    'fo:page-height="15.75cm" style:print-orientation="landscape"/></style:page-layout>'
    '<style:page-layout style:name="PM2"><style:page-layout-properties fo:page-width="21cm" '
    'fo:page-height="29.7cm" style:print-orientation="portrait"/></style:page-layout>'
    '<style:style style:name="Mdp1" style:family="drawing-page"><style:drawing-page-properties '
    'draw:fill="solid" draw:fill-color="#ffffff"/></style:style>'
    "</office:automatic-styles><office:master-styles>"
    + '<style:master-page style:name="Default" style:page-layout-name="PM1" '
    'draw:style-name="Mdp1">'
    + "".join(
        _pstyle(n, s, b)
        for n, s, b in (
            ("title", "40pt", False),
            ("subtitle", "24pt", False),
            ("outline1", "28pt", False),
            ("notes", "16pt", False),
        )
    )
    + '<presentation:notes style:page-layout-name="PM2"/>'
    "</style:master-page></office:master-styles></office:document-styles>"
)


def _meta(title: str) -> str:
    return (
        f'{_HEAD}<office:document-meta {_XMLNS} office:version="1.3"><office:meta>'
        f"<dc:title>{escape(title)}</dc:title>"
        "<meta:generator>palaestra office</meta:generator>"
        "<meta:creation-date>2024-01-01T00:00:00</meta:creation-date>"
        "</office:meta></office:document-meta>"
    )


def _manifest(pictures: list[str]) -> str:
    entries = [
        ("/", MIME),
        ("content.xml", "text/xml"),
        ("styles.xml", "text/xml"),
        ("meta.xml", "text/xml"),
        *((p, "image/png") for p in pictures),
    ]
    return (
        f'{_HEAD}<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
        'manifest:1.0" manifest:version="1.3">'
        + "".join(
            f'<manifest:file-entry manifest:full-path="{p}" manifest:media-type="{t}"'
            + (' manifest:version="1.3"' if p == "/" else "")
            + "/>"
            for p, t in entries
        )
        + "</manifest:manifest>"
    )


def _put(z: zipfile.ZipFile, name: str, data: bytes | str, stored: bool = False) -> None:
    info = zipfile.ZipInfo(name, STAMP)
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    z.writestr(info, data)


def odp(deck: Deck) -> bytes:
    """The deck as ``.odp`` bytes (the same deck gives the same bytes)."""
    pictures = {p.href: p.data for s in deck.slides for p in s.pictures}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        _put(z, "mimetype", MIME, stored=True)
        _put(z, "content.xml", _content(deck))
        _put(z, "styles.xml", _STYLES)
        _put(z, "meta.xml", _meta(deck.title))
        for href in sorted(pictures):
            _put(z, href, pictures[href], stored=True)
        _put(z, "META-INF/manifest.xml", _manifest(sorted(pictures)))
    return buf.getvalue()


def png(width: int, height: int, colors: tuple[tuple[int, int, int], ...]) -> bytes:
    """A PNG of vertical bands of ``colors`` (a generated logo or chart stand-in)."""
    band = max(1, width // len(colors))
    row = b"".join(bytes(colors[min(x // band, len(colors) - 1)]) for x in range(width))
    raw = b"".join(b"\x00" + row for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
