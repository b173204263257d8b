"""What the office adversaries run inside the sandbox, with the session's own Python (Debian's
python3, its openpyxl, python-docx and odfpy): the source of this module is sent as a
``run_python`` action followed by one call (:func:`call`), never imported by the gateway for
its documents.

Documents are read as what they are, zip archives of XML (OOXML and ODF alike), so one set of
functions serves spreadsheets, text documents and slides of both formats: the text nodes and the
value attributes (a cell's ``office:value``, a formula, a heading's outline level, a Word
style's ``w:val``) are where a document keeps its content.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import zipfile
from xml.sax.saxutils import escape, unescape

#: the parts of a document that hold its content
PARTS = re.compile(
    r"^(content\.xml|xl/sharedStrings\.xml|xl/worksheets/[^/]+\.xml|word/document\.xml"
    r"|ppt/slides/[^/]+\.xml)$"
)
#: the attributes that hold a value
ATTRS = (
    r"(?:office:value|office:date-value|office:time-value|table:formula"
    r"|text:outline-level|w:val)"
)
_ROW_END = r"</(?:table:table-row|row|w:p|a:p|text:p|text:h)>"


def empty(path: str) -> None:
    """An empty document of ``path``'s format at ``path`` (what was there is gone)."""
    ext = path.rsplit(".", 1)[-1].lower()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.remove(path)
    if ext == "xlsx":
        import openpyxl

        openpyxl.Workbook().save(path)
    elif ext == "docx":
        import docx

        docx.Document().save(path)
    elif ext in ("ods", "odt", "odp", "pptx"):
        from odf import opendocument as od

        make = {"ods": od.OpenDocumentSpreadsheet, "odt": od.OpenDocumentText}
        document = make.get(ext, od.OpenDocumentPresentation)()
        if ext != "pptx":
            document.save(path)
            return
        tmp = tempfile.mkdtemp()  # no pptx writer in Debian's Python: LibreOffice converts
        source = os.path.join(tmp, "empty.odp")
        document.save(source)
        profile = f"-env:UserInstallation=file://{tmp}/profile"
        argv = ["soffice", profile, "--headless", "--convert-to", "pptx", "--outdir", tmp, source]
        subprocess.run(argv, capture_output=True, timeout=60, check=False)
        os.replace(os.path.join(tmp, "empty.pptx"), path)
    else:
        open(path, "w").close()


def text(path: str) -> str:
    """A document's text, a row (paragraph, table row) a line, cells joined by commas; a
    file that is no archive (a CSV) as it is."""
    if not zipfile.is_zipfile(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    lines = []
    with zipfile.ZipFile(path) as z:
        for name in sorted(n for n in z.namelist() if PARTS.search(n)):
            xml = z.read(name).decode("utf-8", "replace")
            for row in re.split(_ROW_END, xml):
                cells = [c.strip() for c in re.findall(r">([^<>]+)<", row) if c.strip()]
                if cells:
                    lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


#: a value in a part's XML: a text node, or a value attribute (group 1 + 2: name and value)
_VALUE = re.compile(r">([^<>]+)<|(" + ATTRS + r'=")([^"]*)"')
_FIELD = re.compile(r"[^,;\t\n]+")
_ENTITIES = {"&quot;": '"', "&apos;": "'"}
_ENTITIES_BACK = {'"': "&quot;"}


def _values_of(data: str, csv: bool) -> list[str]:
    if csv:
        return [m.group().strip() for m in _FIELD.finditer(data)]
    return [
        (m.group(1) if m.group(1) is not None else m.group(3)).strip()
        for m in _VALUE.finditer(data)
    ]


def _parts(path: str) -> list[tuple[str, str]]:
    """(part name, text) of the content parts in archive order; a non-archive is one part,
    ``""``."""
    if not zipfile.is_zipfile(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return [("", f.read())]
    with zipfile.ZipFile(path) as z:
        return [(n, z.read(n).decode("utf-8", "replace")) for n in z.namelist() if PARTS.search(n)]


def sequence(path: str) -> list[str]:
    """Every value a document holds (text nodes and value attributes; a CSV's fields), in
    document order."""
    return [v for name, data in _parts(path) for v in _values_of(data, not name)]


def values(path: str) -> set[str]:
    return set(sequence(path))


def off(value: str) -> str:
    """A plausible wrong value: a number's last figure moved by one (``B9`` -> ``B8``, 1200 ->
    1199, heading level 1 -> 2), else a word's last two letters swapped; '' is left alone."""
    numbers = list(re.finditer(r"\d+", value))
    if numbers:
        m = numbers[-1]
        n = int(m.group())
        n = n - 1 if n > 1 else n + 1
        return value[: m.start()] + str(n).zfill(len(m.group())) + value[m.end() :]
    words = list(re.finditer(r"[A-Za-z]{3,}", value))
    if words:
        w = words[-1]
        s = w.group()
        return value[: w.start()] + s[:-2] + s[-1] + s[-2] + value[w.end() :]
    return value


def put_off(path: str, original: str) -> int:
    """The values ``path`` holds that ``original`` did not put :func:`off`, in place; how many.
    New values first (a total, a formula, a word typed); where there are none (a style or a
    level changed to one the document has elsewhere), the values where the two documents'
    sequences differ. The archive keeps its entries' order and compression (ODF's
    ``mimetype`` first and stored), so the document still opens."""
    import difflib

    before, after = sequence(original), sequence(path)
    known = set(before)
    chosen = {i for i, v in enumerate(after) if v and v not in known and off(v) != v}
    if not chosen:
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for op, _, _, j1, j2 in matcher.get_opcodes():
            if op in ("insert", "replace"):
                chosen |= {j for j in range(j1, j2) if after[j] and off(after[j]) != after[j]}
    at = 0

    def swap(value: str, xml: bool = True) -> str:
        nonlocal at
        at += 1
        if at - 1 not in chosen:
            return value
        if not xml:
            return off(value)
        return escape(off(unescape(value, _ENTITIES)), _ENTITIES_BACK)  # never half an entity

    def text_node(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return ">" + swap(m.group(1)) + "<"
        return m.group(2) + swap(m.group(3)) + '"'

    if not zipfile.is_zipfile(path):
        with open(path, encoding="utf-8") as f:
            data = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(_FIELD.sub(lambda m: swap(m.group(), xml=False), data))
        return len(chosen)
    tmp = path + ".tmp"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as dst:
        for info in src.infolist():
            data_bytes = src.read(info.filename)
            if PARTS.search(info.filename):
                xml = _VALUE.sub(text_node, data_bytes.decode("utf-8", "replace"))
                data_bytes = xml.encode("utf-8")
            dst.writestr(info, data_bytes)
    os.replace(tmp, path)
    return len(chosen)


def dodge(pairs: list[list[str]], source: str = "") -> list[str]:
    """Each document moved to its other name and, at its own, its text (a CSV renamed
    ``.xlsx``) or, where the text is what was asked for (a ``.csv``), the ``source`` document
    (a workbook renamed ``.csv``); the paths moved."""
    import shutil

    moved = []
    for path, other in pairs:
        if os.path.exists(path):
            body = text(path)
            os.replace(path, other)
            if path.lower().endswith(".csv") and source and os.path.exists(source):
                shutil.copyfile(source, path)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(body)
            moved.append(path)
    return moved


def write_text(source: str, target: str) -> int:
    """``source``'s text written as plain text at ``target``; its length."""
    body = text(source)
    with open(target, "w", encoding="utf-8") as f:
        f.write(body)
    return len(body)


def call(name: str, *args: object) -> str:
    """The code a ``run_python`` action runs: this module, then ``name(*args)`` printed as
    JSON on the last line (arguments travel as JSON, never as code)."""
    from pathlib import Path

    source = Path(__file__).read_text()
    payload = json.dumps([name, list(args)])
    return (
        f"{source}\n_name, _args = json.loads({payload!r})\n"
        "print(json.dumps({'result': globals()[_name](*_args)}))\n"
    )
