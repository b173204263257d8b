"""Read an office document (xlsx, ods, docx, odt, pptx, odp) into one canonical model.

The same source (this module and the readers it imports: :mod:`.office_xml`,
:mod:`.office_sheet`, :mod:`.office_text`, :mod:`.office_slides`) runs in two places, which is
why it imports nothing but the standard library (``zipfile`` + ``xml.etree``):

- inside the computer family's isolated runner, for the agent's document: the verifier sends
  these modules' text to Debian's ``/usr/bin/python3 -I -S -c`` in a fresh read-only sandbox as
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

import json
import os
import posixpath
import stat
import sys
from typing import Any

from palaestra.verifiers.office_sheet import (
    read_ods,
    read_xlsx,
)
from palaestra.verifiers.office_slides import (
    pptx_detail,
    read_odp,
    read_pptx,
)
from palaestra.verifiers.office_text import (
    read_docx,
    read_odt,
)
from palaestra.verifiers.office_xml import (
    FORMATS,
    MAX_FILE,
    DocumentError,
    Package,
    detect,
)

READERS = {
    "xlsx": read_xlsx,
    "ods": read_ods,
    "docx": read_docx,
    "odt": read_odt,
    "pptx": read_pptx,
    "odp": read_odp,
}


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
