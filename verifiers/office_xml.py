"""What every office reader shares: the limits, the bounded zip package, XML helpers,
units and colours, and ODF's styles and text. Standard library only, like every
``office_*`` reader module: :mod:`.office_read` sends their sources to the sandbox."""

from __future__ import annotations

import datetime
import io
import posixpath
import re
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


def rich_text(el: ET.Element | None, tag: str) -> str:
    """The text of every ``tag`` (``x:t``, ``a:t``) under ``el``, except phonetic runs."""
    if el is None:
        return ""
    return "".join(t.text or "" for t in el.iter(q(tag)))


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
