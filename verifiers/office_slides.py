"""Presentations (``.pptx`` and ``.odp``) into the model :mod:`.office_read` describes:
slides with titles, bodies, notes, text boxes, tables, pictures, layouts and backgrounds; and
a ``.pptx``'s shapes as python-pptx presents them, for OSWorld's ``compare_pptx_files``."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from palaestra.verifiers.office_xml import (
    MAX_ITEMS,
    NS,
    DocumentError,
    OdfStyles,
    Package,
    at,
    cut,
    either,
    find,
    findall,
    hex_color,
    length_mm,
    number,
    odf_pieces,
    odf_text,
    q,
    rich_text,
)

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


def add_shape(
    out: list[dict[str, Any]],
    kind: str,
    paras: list[str],
    rows: list[list[str]],
    runs: list[Any],
    box: tuple[float | None, ...],
) -> None:
    """One shape of the model, whichever format it was read from (so a check reads ``.pptx``
    and ``.odp`` alike); a deck of more shapes than a checker reads is refused, not cut."""
    x, y, w, h = box
    out.append(
        {
            "kind": kind,
            "text": cut("\n".join(paras)),
            "paragraphs": paras,
            "rows": rows,
            "runs": runs,
            "x": x,
            "y": y,
            "w": w,
            "h": h,
        }
    )
    if len(out) > MAX_ITEMS:
        raise DocumentError(f"more than {MAX_ITEMS} shapes")


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
        box = (emu(off, "x"), emu(off, "y"), emu(ext, "cx"), emu(ext, "cy"))
        add_shape(out, kind, paras, rows, runs, box)
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
        box = tuple(length_mm(at(el, f"svg:{k}")) for k in ("x", "y", "width", "height"))
        add_shape(out, kind, paras, rows, runs, box)
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
