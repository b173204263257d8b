"""Text documents (``.docx`` and ``.odt``) into the model :mod:`.office_read` describes:
body paragraphs with their style, heading level, alignment, list and runs, tables, comments
with the text they are anchored on, and the page."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from palaestra.verifiers.office_xml import (
    MAX_ITEMS,
    MAX_TEXT,
    DocumentError,
    OdfStyles,
    Package,
    at,
    cut,
    either,
    find,
    findall,
    length_mm,
    number,
    odf_align,
    odf_pieces,
    odf_text,
    q,
)


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
