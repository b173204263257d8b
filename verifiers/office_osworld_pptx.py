"""OSWorld's ``compare_pptx_files`` over our deck model: its ``examine_*`` options (OSWorld's
defaults), shape by shape, table by table, paragraph by paragraph, with OSWorld's quirks (bold
and italic differ unless both are unset or false; underline's three-valued test). A module of its
own because the deck comparison is as long as the other three metrics together; registered as a
check kind by :mod:`.office_osworld`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from palaestra.verifiers.office import Model

PPTX_DEFAULTS = {
    "examine_number_of_slides": True, "examine_shape": True, "examine_text": True,
    "examine_indent": True, "examine_font_name": True, "examine_font_size": True,
    "examine_font_bold": True, "examine_font_italic": True, "examine_color_rgb": True,
    "examine_font_underline": True, "examine_strike_through": True, "examine_alignment": True,
    "examine_title_bottom_position": False, "examine_table_bottom_position": False,
    "examine_right_position": False, "examine_top_position": False,
    "examine_shape_for_shift_size": False, "examine_image_size": False,
    "examine_modify_height": False, "examine_bullets": True, "examine_background_color": True,
    "examine_note": True,
}  # fmt: skip


def _off(a: bool | None, b: bool | None) -> bool:
    """OSWorld's bold/italic test: differ, unless both are unset or false."""
    return a != b and not (not a and not b)


def _underline_off(a: Any, b: Any) -> bool:
    return a != b and (
        (a is not None and b is not None) or (a is None and b is True) or (a is True and b is None)
    )


def compare_pptx_files(
    result: Model, expected: Model | None, options: Mapping[str, Any]
) -> tuple[float, str]:
    if expected is None or "pptx" not in result or "pptx" not in expected:
        return 0.0, "compare_pptx_files compares two .pptx files"
    o = {**PPTX_DEFAULTS, **options}
    tol = float(o.get("approximately_tolerance", 0.005))

    def close(a: Any, b: Any) -> bool:
        if a == b:
            return True
        if a is None or b is None or a == 0 or b == 0:
            return False
        return abs(a - b) / max(abs(a), abs(b)) <= tol

    def same_box(s1: Model, s2: Model) -> bool:
        return all(close(x, y) for x, y in zip(s1["box"], s2["box"], strict=True))

    slides1, slides2 = result["pptx"], expected["pptx"]
    if len(slides1) != len(slides2) and o["examine_number_of_slides"]:
        return 0.0, f"{len(slides1)} slides, {len(slides2)} expected"
    for n, (sl1, sl2) in enumerate(zip(slides1, slides2, strict=False), start=1):
        where = f"slide {n}"
        if sl1["bg"] != sl2["bg"] and o["examine_background_color"]:
            return 0.0, f"{where}: background differs"
        if sl1["notes"].strip() != sl2["notes"].strip() and o["examine_note"]:
            return 0.0, f"{where}: notes differ"
        if len(sl1["shapes"]) != len(sl2["shapes"]):
            return 0.0, f"{where}: {len(sl1['shapes'])} shapes, {len(sl2['shapes'])} expected"
        for sh1, sh2 in zip(sl1["shapes"], sl2["shapes"], strict=True):
            problem = _shape_problem(n, sh1, sh2, sl1, sl2, o, close, same_box)
            if problem:
                return 0.0, f"{where}: {problem}"
        t1, t2 = sl1["text_shapes"], sl2["text_shapes"]
        if o["examine_alignment"] and len(t1) == len(t2):
            for a, b in zip(t1, t2, strict=True):
                if a["text"].strip() != b["text"].strip() and o["examine_text"]:
                    return 0.0, f"{where}: text differs"
                if len(a["paragraphs"]) != len(b["paragraphs"]):
                    return 0.0, f"{where}: paragraph counts differ"
                for p1, p2 in zip(a["paragraphs"], b["paragraphs"], strict=True):
                    if (p1["align"] or "l") != (p2["align"] or "l"):
                        return 0.0, f"{where}: alignment differs"
        elif len(t1) != len(t2):
            return 0.0, f"{where}: text shape counts differ"
    return 1.0, "the presentations match"


def _shape_problem(
    n: int,
    s1: Model,
    s2: Model,
    sl1: Model,
    sl2: Model,
    o: Mapping[str, Any],
    close: Callable[[Any, Any], bool],
    same_box: Callable[[Model, Model], bool],
) -> str | None:
    """Why OSWorld's loop over one pair of shapes returns 0 (None: it goes on)."""
    (l1, t1, w1, h1), (l2, t2, w2, h2) = s1["box"], s2["box"]
    both_text = s1["has_text"] and s2["has_text"]
    try:
        if o["examine_title_bottom_position"]:
            if both_text and s1["text"] == s2["text"]:
                if s1["text"] == "Product Comparison" and (t1 <= t2 or t1 < 3600000):
                    return "title position"
            elif not same_box(s1, s2):
                return "shape position"
        if o["examine_table_bottom_position"]:
            if n == 3 and s1["type"] == 19 and s2["type"] == 19:
                if t1 <= t2 or t1 < 3600000:
                    return "table position"
            elif not same_box(s1, s2):
                return "shape position"
        pictures = s1["type"] == 13 and s2["type"] == 13
        textless = not s1["has_text"] and not s2["has_text"]
        if o["examine_right_position"] and n == 2 and textless and (l1 <= l2 or l1 < 4320000):
            return "right position"
        if o["examine_top_position"] and n == 2 and pictures and (t1 >= t2 or t1 > 1980000):
            return "top position"
    except TypeError:  # a shape without a position: python-pptx's comparison raises
        return "a shape without a position"
    if o["examine_shape_for_shift_size"] and not same_box(s1, s2):
        keep = "Elaborate on what you want to discuss."
        if not (both_text and s1["text"] == s2["text"] == keep):
            return "shape shifted"
    if o["examine_shape"] and not same_box(s1, s2):
        return "shape position or size"
    if o["examine_image_size"]:
        if s1["type"] == 13 and s2["type"] == 13:
            if not close(w1, w2) or not close(h1, h2):
                return "image size"
        elif not same_box(s1, s2):
            return "shape position or size"
    if o["examine_modify_height"]:
        if (not s1["has_text"] and not s2["has_text"]) or (s1["type"] == 5 and s2["type"] == 5):
            if not close(h1, h2):
                return "height"
        elif not same_box(s1, s2):
            return "shape position or size"
    if s1["type"] == 19 and s2["type"] == 19:
        problem = _table_problem(s1, s2, o)
        if problem:
            return problem
    if both_text:
        return _text_problem(s1, s2, sl1, sl2, o)
    return None


def _table_problem(s1: Model, s2: Model, o: Mapping[str, Any]) -> str | None:
    r1, r2 = s1["table"], s2["table"]
    if len(r1) != len(r2) or s1["columns"] != s2["columns"]:
        return "table dimensions"
    for row1, row2 in zip(r1, r2, strict=True):
        for c1, c2 in zip(row1, row2, strict=False):
            if len(c1) != len(c2):
                return "table cell paragraphs"
            for p1, p2 in zip(c1, c2, strict=True):
                if len(p1["runs"]) != len(p2["runs"]):
                    return "table cell runs"
                for a, b in zip(p1["runs"], p2["runs"], strict=True):
                    if a["rgb"] and b["rgb"] and a["rgb"] != b["rgb"] and o["examine_color_rgb"]:
                        return "table font colour"
                    if _off(a["b"], b["b"]):
                        return "table bold"
                    if _off(a["i"], b["i"]):
                        return "table italic"
                    if _underline_off(a["u"], b["u"]):
                        return "table underline"
    return None


def _text_problem(s1: Model, s2: Model, sl1: Model, sl2: Model, o: Mapping[str, Any]) -> str | None:
    if s1["text"].strip() != s2["text"].strip() and o["examine_text"]:
        return f"text {s1['text'][:40]!r} differs"
    if len(s1["paragraphs"]) != len(s2["paragraphs"]):
        return "paragraph counts"
    for p1, p2 in zip(s1["paragraphs"], s2["paragraphs"], strict=True):
        if o["examine_alignment"] and (p1["align"] or "l") != (p2["align"] or "l"):
            return "alignment"
        if p1["text"] != p2["text"] and o["examine_text"]:
            return f"paragraph {p1['text'][:40]!r} differs"
        if p1["level"] != p2["level"] and o["examine_indent"]:
            return "indent level"
        if len(p1["runs"]) != len(p2["runs"]):
            return "run counts"
        for a, b in zip(p1["runs"], p2["runs"], strict=True):
            if a["font"] != b["font"] and o["examine_font_name"]:
                return "font name"
            if a["size"] != b["size"] and o["examine_font_size"]:
                return "font size"
            if _off(a["b"], b["b"]) and o["examine_font_bold"]:
                return "bold"
            if _off(a["i"], b["i"]) and o["examine_font_italic"]:
                return "italic"
            if a["rgb"] and b["rgb"] and a["rgb"] != b["rgb"] and o["examine_color_rgb"]:
                return "font colour"
            if _underline_off(a["u"], b["u"]) and o["examine_font_underline"]:
                return "underline"
            if a["strike"] != b["strike"] and o["examine_strike_through"]:
                return "strike-through"
            bullets = sl1["bullets"], sl2["bullets"]
            if o["examine_bullets"] and None not in bullets and bullets[0] != bullets[1]:
                return "bullets"
    return None
