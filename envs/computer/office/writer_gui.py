"""How the Writer templates' reference solutions and checks are written.

GUI recipes are action lists (keyboard only, Writer's own shortcuts), played by ``replay``:

- ``find(text)``: from the document's start, the Find toolbar (Ctrl+F), Enter, Escape: the
  first occurrence is selected in the document (the templates pick texts whose first
  occurrence is the one meant);
- ``style(name)``: Ctrl+F11 focuses the paragraph style box; the name typed and Enter applies it;
- ``replace_all(a, b)``: Ctrl+H, the search text, four tabs to the replacement, Alt+L
  ("Replace All"), Escape;
- ``page(...)``: Format > Page Style (Shift+Alt+P), Home and Right reach the Page tab whatever
  tab the dialog remembers; Alt+A/Alt+P pick landscape/portrait, Alt+F and Down/Up walk the
  paper list (its order is fixed), Alt+T and tabs reach the four margins; Enter is OK;
- ``save()``: Ctrl+S and Enter on "Use Word 2007-365!" (keep the format).

Code recipes are Python run in the sandbox with Debian's python3-docx: ``code(path, body)``
wraps a body that sees ``d`` (the document), ``para(text)`` and the python-docx names.
"""

from __future__ import annotations

from typing import Any

from palaestra.envs.computer.office.gui_common import Action, key, type_text, wait

HOME = "/home/user"
#: LibreOffice's paper list, in the order of the Page tab's Format box
PAPER_ORDER = ("A6", "A5", "A4", "A3", "B6 (ISO)", "B5 (ISO)", "B4 (ISO)", "Letter", "Legal")


def find(text: str) -> list[Action]:
    top = key("ctrl+Home ctrl+Home ctrl+Home")  # in a table: the cell, the table, the document
    search = [key("ctrl+f"), wait(1.5), key("ctrl+a"), type_text(text), key("Return")]
    return [top, *search, wait(1.0), key("Escape"), wait(0.5)]


def select_paragraphs(first: str, count: int) -> list[Action]:
    """Select ``count`` whole paragraphs from the one starting with ``first``."""
    return [*find(first), key("Home"), key(" ".join(["ctrl+shift+Down"] * count)), wait(0.5)]


def style(name: str) -> list[Action]:
    return [key("ctrl+F11"), wait(1.0), key("ctrl+a"), type_text(name), key("Return"), wait(1.0)]


def replace_all(old: str, new: str) -> list[Action]:
    return [
        key("ctrl+h"), wait(3.0), key("ctrl+a"), type_text(old), key("Tab Tab Tab Tab"),
        key("ctrl+a"), type_text(new), key("alt+l"), wait(2.0), key("Escape"), wait(1.0),
    ]  # fmt: skip


def page(
    paper: tuple[str, str] | None = None,
    landscape: bool | None = None,
    margins_cm: tuple[float, float, float, float] | None = None,
) -> list[Action]:
    """The Page tab of the page style: ``paper`` (from, to) names of :data:`PAPER_ORDER`,
    the orientation, and margins (left, right, top, bottom) in cm."""
    out = [key("shift+alt+p"), wait(3.5), key("Home"), key("Right"), wait(1.2)]
    if paper:
        steps = PAPER_ORDER.index(paper[1]) - PAPER_ORDER.index(paper[0])
        move = "Down" if steps > 0 else "Up"
        out += [key("alt+f"), wait(0.5), key("alt+Down"), wait(1.2)]
        out += [key(" ".join([move] * abs(steps))), key("Return"), wait(0.8)]
    if landscape is not None:
        out += [key("alt+a" if landscape else "alt+p"), wait(0.8)]
    if margins_cm:
        out += [key("alt+t"), wait(0.5)]
        for cm in margins_cm:
            out += [key("Tab"), key("ctrl+a"), type_text(f"{cm:g} cm")]
        out += [key("Tab"), wait(0.5)]
    return [*out, key("Return"), wait(2.0)]


def save() -> list[Action]:
    """Ctrl+S keeping the document's Word format."""
    return [key("ctrl+s"), wait(3.5), key("Return"), wait(3.0)]


# ----- code recipes (python3-docx in the sandbox) -------------------------------------------
_HEAD = """import docx
from docx.enum.section import WD_ORIENT
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Mm
P = {path!r}
d = docx.Document(P)


def para(text):
    return next(p for p in d.paragraphs if p.text == text)


"""


def code(path: str, body: str) -> list[Action]:
    """A ``run_python`` action that opens ``~/path`` with python-docx, runs ``body``, saves."""
    src = _HEAD.format(path=f"{HOME}/{path}") + body.strip() + "\nd.save(P)\nprint('saved', P)\n"
    return [{"name": "run_python", "args": {"code": src, "timeout": 60}}]


# ----- checks (kind text_document of palaestra.verifiers.office) ----------------------------
def spec(path: str, expect: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "text_document", "path": f"~/{path}", "formats": ["docx", "odt"],
            "expect": expect}  # fmt: skip


def para(text: str, **props: Any) -> dict[str, Any]:
    """The body paragraph whose text is ``text`` has ``props`` (style, heading, align, bold,
    italic, list: ``"bullet"``/``"numbered"``/None)."""
    return {"paragraph": text, **props}


def absent(text: str) -> dict[str, Any]:
    """``text`` appears nowhere in the document (paragraphs and tables)."""
    return {"absent": text}


def count(text: str, n: int) -> dict[str, Any]:
    """``text`` occurs ``n`` times in the document (paragraphs and tables)."""
    return {"occurrences": text, "count": n}


def order(*texts: str) -> dict[str, Any]:
    """Paragraphs with these texts appear in this order."""
    return {"order": list(texts)}


def first(text: str, **props: Any) -> dict[str, Any]:
    """The first non-empty paragraph is ``text`` and has ``props``."""
    return {"paragraph": 0, "text": text, **props}


def table(index: int, rows: list[list[str]]) -> dict[str, Any]:
    return {"table": index, "cells": rows}


def comment(contains: str) -> dict[str, Any]:
    return {"comment": contains, "match": "contains"}


def page_is(**props: Any) -> dict[str, Any]:
    """The page: ``width``/``height`` (mm), ``orientation``, ``margins`` {side: mm}, ``tol``."""
    return {"page": props}
