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


def values(path: str) -> set[str]:
    """Every value a document holds (text nodes and value attributes; a CSV's fields)."""
    if not zipfile.is_zipfile(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return {v.strip() for v in re.split(r"[,;\t\n]", f.read())}
    out: set[str] = set()
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if PARTS.search(name):
                xml = z.read(name).decode("utf-8", "replace")
                out |= set(re.findall(r">([^<>]+)<", xml))
                out |= set(re.findall(ATTRS + r'="([^"]*)"', xml))
    return {v.strip() for v in out}


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
    """Every value of ``path`` that ``original`` did not hold put :func:`off`, in place; how
    many. The archive keeps its entries' order and compression (ODF's ``mimetype`` first and
    stored), so the document still opens."""
    known = values(original)
    changed = 0

    def swap(value: str) -> str:
        nonlocal changed
        if value.strip() and value.strip() not in known and off(value) != value:
            changed += 1
            return off(value)
        return value

    if not zipfile.is_zipfile(path):
        with open(path, encoding="utf-8") as f:
            data = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(re.sub(r"[^,;\t\n]+", lambda m: swap(m.group()), data))
        return changed
    tmp = path + ".tmp"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as dst:
        for info in src.infolist():
            data_bytes = src.read(info.filename)
            if PARTS.search(info.filename):
                xml = data_bytes.decode("utf-8")
                xml = re.sub(r">([^<>]+)<", lambda m: ">" + swap(m.group(1)) + "<", xml)
                xml = re.sub(
                    "(" + ATTRS + r'=")([^"]*)"', lambda m: m.group(1) + swap(m.group(2)) + '"', xml
                )
                data_bytes = xml.encode("utf-8")
            dst.writestr(info, data_bytes)
    os.replace(tmp, path)
    return changed


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
