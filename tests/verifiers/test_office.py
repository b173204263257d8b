"""The office check kinds (``spreadsheet``, ``text_document``, ``presentation``) on real
documents, read the way a session's are: by Debian's python3 in the computer family's isolated
runner (a fresh read-only sandbox as a session uid), through the probe's ``run``.

Documents: made by openpyxl, python-docx and odfpy (Debian's, ``office_docs.py``) and saved by
LibreOffice headless in both formats of their app. Each assertion kind must pass on the right
document, in either format, and fail on a wrong expectation; a bad document (corrupted, hollow,
a zip bomb, a link to /etc/shadow, a FIFO, 1 GB, another format under the name) scores 0 with
the reason, never an exception.
"""

import io
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from palaestra.verifiers import office, office_xml
from palaestra.verifiers.base import DeclarativeVerifier
from palaestra.verifiers.computer import ComputerProbe
from tests.verifiers.office_docs import build

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-settings xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:config="urn:oasis:names:tc:opendocument:xmlns:config:1.0"><office:settings>
<config:config-item-set config:name="ooo:view-settings"><config:config-item-map-indexed
 config:name="Views"><config:config-item-map-entry><config:config-item-map-named
 config:name="Tables"><config:config-item-map-entry config:name="Budget">
<config:config-item config:name="HorizontalSplitMode" config:type="short">0</config:config-item>
<config:config-item config:name="VerticalSplitMode" config:type="short">2</config:config-item>
<config:config-item config:name="HorizontalSplitPosition" config:type="int">0</config:config-item>
<config:config-item config:name="VerticalSplitPosition" config:type="int">1</config:config-item>
<config:config-item config:name="ZoomValue" config:type="int">150</config:config-item>
</config:config-item-map-entry></config:config-item-map-named></config:config-item-map-entry>
</config:config-item-map-indexed></config:config-item-set></office:settings>
</office:document-settings>"""


def _replace(data: bytes, name: str, content: bytes) -> bytes:
    """The package with one member replaced (LibreOffice headless saves no view settings)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, content if info.filename == name else src.read(info))
    return out.getvalue()


def _bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        with z.open("content.xml", "w") as member:
            chunk = b"<a>" + b" " * (2**20 - 3)
            for _ in range(office_xml.MAX_PART // 2**20 + 8):
                member.write(chunk)
    return out.getvalue()


def _laughs() -> bytes:
    lol = (
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><x>&b;</x>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", lol)
    return out.getvalue()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A session-like home with every document (and the bad ones), and a probe whose ``run``
    is the computer family's isolated runner as a sandbox uid."""
    from palaestra.envs.computer.sandbox import run_isolated
    from palaestra.envs.runtimes.sandbox import Slot, chown_tree

    made = tmp_path_factory.mktemp("office-docs")
    lo = build(made)
    slot = Slot()
    home = slot.root / "home"
    home.mkdir()
    for f in lo.iterdir():
        shutil.copy(f, home / f.name)
    shutil.copy(made / "book_base.xlsx", home / "raw.xlsx")  # openpyxl's: views kept
    shutil.copy(made / "commented.odt", home / "commented.odt")
    ods = (lo / "book_base.ods").read_bytes()
    (home / "frozen.ods").write_bytes(_replace(ods, "settings.xml", SETTINGS.encode()))
    (home / "only.ods").write_bytes(ods)
    bad = home / "bad"
    bad.mkdir()
    (bad / "corrupted.xlsx").write_bytes(os.urandom(5000))
    data = (lo / "book_base.xlsx").read_bytes()
    (bad / "truncated.xlsx").write_bytes(data[: len(data) // 2])
    zipfile.ZipFile(bad / "hollow.xlsx", "w").close()
    with zipfile.ZipFile(bad / "nomain.xlsx", "w") as z:
        z.writestr("[Content_Types].xml", '<Types xmlns="x"/>')
    (bad / "bomb.ods").write_bytes(_bomb())
    (bad / "laughs.ods").write_bytes(_laughs())
    (bad / "shadow.xlsx").symlink_to("/etc/shadow")
    os.mkfifo(bad / "fifo.xlsx")
    with open(bad / "huge.xlsx", "wb") as f:
        f.truncate(2**30)
    (bad / "csv.xlsx").write_text("Item,Cost\nRent,1200\n")
    shutil.copy(lo / "book_base.ods", bad / "odsinside.xlsx")
    chown_tree(home, slot.uid)
    os.chmod(slot.root, 0o755)

    def run(command: str, timeout: float) -> tuple[int, str, str]:
        done = run_isolated(home, slot.uid, command, timeout)
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode()

    yield ComputerProbe(home, run)
    slot.close()


def verify(probe, kind: str, path: str, expect: list, **extra):
    spec = {"kind": kind, "path": path, "expect": expect, **extra}
    return DeclarativeVerifier(spec).verify(probe)


# ----- spreadsheets -------------------------------------------------------------------------
#: (assertion that holds on book_base, the same assertion made wrong)
SHEET_CASES = [
    ({"cell": "B5", "value": 1730.5}, {"cell": "B5", "value": 1731}),
    ({"cell": "B3", "value": 450.49, "tol": 0.02}, {"cell": "B3", "value": 450.4}),
    ({"cell": "A2", "value": " rent ", "ignore_case": True}, {"cell": "A2", "value": "rent"}),
    ({"cell": "B5", "formula": "=sum(B2:B4)"}, {"cell": "B5", "formula": "=SUM(B2:B3)"}),
    ({"cell": "B5", "formula_contains": "SUM("}, {"cell": "B5", "formula_contains": "AVERAGE("}),
    ({"cell": "B4", "formula": False}, {"cell": "B4", "formula": True}),
    ({"cell": "A5", "bold": True}, {"cell": "A4", "bold": True}),
    ({"cell": "B2", "fill": "#ffff00"}, {"cell": "B2", "fill": "#00FF00"}),
    ({"cell": "C2", "number_format": "percent", "decimals": 2}, {"cell": "C2", "decimals": 0}),
    ({"cell": "D9", "empty": True}, {"cell": "A1", "empty": True}),
    (
        {"range": "A2:B4", "values": [["Rent", 1200], ["Food", 450.5], ["Bus", 80]]},
        {"range": "A2:B4", "values": [["Rent", 1200], ["Bus", 80], ["Food", 450.5]]},
    ),
    (
        {"range": "A2:B4", "rows_any_order": [["Bus", 80], ["Rent", 1200], ["Food", 450.5]]},
        {"range": "A2:B4", "rows_any_order": [["Bus", 80], ["Rent", 1200], ["Food", 45]]},
    ),
    (
        {"range": "A2:B4", "sorted": {"by": "B", "descending": True}},
        {"range": "A2:B4", "sorted": {"by": "B"}},
    ),
    ({"sheets": ["Budget", "Notes"]}, {"sheets": ["Notes", "Budget"]}),
    ({"has_sheet": "notes"}, {"has_sheet": "Summary"}),
    ({"filter": "A1:C4"}, {"filter": None}),
    ({"merged": "E1:F1"}, {"merged": "E1:G1"}),
    (
        {"conditional_format": {"range": "B2:B4", "operator": ">", "values": [1000]}},
        {"conditional_format": {"range": "B2:B4", "operator": ">", "values": [2000]}},
    ),
    (
        {"chart": {"type": "bar", "values": "B2:B4", "categories": "A2:A4", "title": "Costs"}},
        {"chart": {"type": "line"}},
    ),
    ({"charts": 1}, {"charts": 2}),
]


@pytest.mark.parametrize("fmt", ["xlsx", "ods"])
@pytest.mark.parametrize(("right", "wrong"), SHEET_CASES, ids=[str(c[0])[:40] for c in SHEET_CASES])
def test_a_spreadsheet_assertion_holds_on_the_right_document_only(home, fmt, right, wrong):
    path = f"~/book_base.{fmt}"
    ok = verify(home, "spreadsheet", path, [right])
    assert ok.success and ok.score == 1.0, ok.checks
    bad = verify(home, "spreadsheet", path, [wrong])
    assert not bad.success and bad.score == 0.0 and bad.error is None
    assert bad.checks[0].detail  # says what it found


@pytest.mark.parametrize(("path", "frozen"), [("~/raw.xlsx", "A2"), ("~/frozen.ods", "A2")])
def test_frozen_panes_and_zoom_in_both_formats(home, path, frozen):
    assert verify(home, "spreadsheet", path, [{"freeze": frozen}]).success
    assert not verify(home, "spreadsheet", path, [{"freeze": "B2"}]).success
    assert not verify(home, "spreadsheet", path, [{"freeze": None}]).success
    zoom = 150 if path.endswith(".ods") else 100
    assert verify(home, "spreadsheet", path, [{"zoom": zoom}]).success


def test_an_answer_in_another_allowed_format_passes_and_a_forbidden_one_fails(home):
    expect = [{"cell": "B5", "value": 1730.5}]
    both = verify(home, "spreadsheet", "~/only.xlsx", expect, formats=["xlsx", "ods"])
    assert both.success, both.checks  # only.ods answers for only.xlsx
    strict = verify(home, "spreadsheet", "~/only.xlsx", expect, formats=["xlsx"])
    assert not strict.success and "no document" in strict.checks[0].detail


def test_a_formula_saved_without_its_value_fails_saying_so(home):
    result = verify(home, "spreadsheet", "~/raw.xlsx", [{"cell": "B5", "value": 1730.5}])
    assert not result.success
    assert "no computed value" in result.checks[0].detail


# ----- text documents -----------------------------------------------------------------------
TEXT_CASES = [
    ({"paragraph": "Quarterly Report", "heading": 1, "style": "heading 1"},
     {"paragraph": "Quarterly Report", "heading": 2}),
    ({"paragraph": "sales grew", "match": "contains", "ignore_case": True, "align": "center"},
     {"paragraph": "Costs stayed flat.", "align": "center"}),
    ({"paragraph": "Costs stayed flat.", "style": "Default Paragraph Style"},
     {"paragraph": "Costs stayed flat.", "style": "Title"}),
    ({"paragraph": "Hire two engineers", "list": "bullet", "level": 0},
     {"paragraph": "Hire two engineers", "list": "numbered"}),
    ({"paragraph": "Open the Lyon office", "list": "numbered"},
     {"paragraph": "Costs stayed flat.", "list": "bullet"}),
    ({"paragraph": "The net total is final.", "bold_text": "net total", "bold": False},
     {"paragraph": "The net total is final.", "bold_text": "is final"}),
    ({"bold_text": "net total"}, {"italic_text": "net total"}),
    ({"paragraph": 1, "text": "Sales grew in every region."}, {"paragraph": 1, "text": "Costs"}),
    ({"paragraph": "Old heading", "absent": True},
     {"paragraph": "Quarterly Report", "absent": True}),
    ({"contains": ["North", "Lyon"]}, {"contains": "Paris"}),
    ({"absent": "Paris"}, {"absent": "Lyon"}),
    ({"occurrences": "region", "count": 1}, {"occurrences": "region", "count": 2}),
    ({"headings": [[1, "Quarterly Report"]]}, {"headings": [[1, "Quarterly Report"], [2, "X"]]}),
    ({"order": ["Sales grew in every region.", "Costs stayed flat."], "adjacent": True},
     {"order": ["Costs stayed flat.", "Sales grew in every region."]}),
    ({"list": ["Hire two engineers"], "ordered": False}, {"list": ["Hire two engineers", "X"]}),
    ({"table": 0, "cells": [["Region", "Sales"], ["north", "12"]], "ignore_case": True},
     {"table": 0, "cell": [1, 1], "text": "13"}),
    ({"table": 0, "rows": 2, "cols": 2}, {"table": 1, "rows": 2}),
    ({"tables": 1}, {"tables": 0}),
    ({"comments": 0}, {"comment": "anything"}),
    ({"page": {"orientation": "landscape", "width": 279.4, "height": 215.9,
               "margins": {"top": 25.4}}},
     {"page": {"orientation": "portrait"}}),
]  # fmt: skip


@pytest.mark.parametrize("fmt", ["docx", "odt"])
@pytest.mark.parametrize(("right", "wrong"), TEXT_CASES, ids=[str(c[0])[:40] for c in TEXT_CASES])
def test_a_text_document_assertion_holds_on_the_right_document_only(home, fmt, right, wrong):
    path = f"~/doc_base.{fmt}"
    ok = verify(home, "text_document", path, [right])
    assert ok.success, ok.checks
    assert not verify(home, "text_document", path, [wrong]).success


@pytest.mark.parametrize("path", ["~/commented.docx", "~/commented.odt"])
def test_a_comment_with_its_author_and_anchor(home, path):
    right = {"comment": "check the totals", "author": "Dana", "anchor": "4,200 EUR"}
    assert verify(home, "text_document", path, [right, {"comments": 1}]).success
    for wrong in ({**right, "anchor": "this quarter"}, {**right, "author": "Kim"}):
        assert not verify(home, "text_document", path, [wrong]).success
    assert verify(home, "text_document", path, [{"absent": "check the totals"}]).success


# ----- presentations ------------------------------------------------------------------------
DECK_CASES = [
    ({"slides": 3}, {"slides": 2}),
    ({"titles": ["Quarterly plan", "Costs", "Next steps"]},
     {"titles": ["Costs", "Quarterly plan", "Next steps"]}),
    ({"slide": 0, "title": "quarterly plan", "ignore_case": True, "notes": "Speak slowly"},
     {"slide": 0, "notes": "Speak quickly"}),
    ({"slide": 0, "subtitle": "Launch\nGrow", "layout_kind": "title_slide"},
     {"slide": 0, "layout_kind": "title_content"}),
    ({"slide": "Costs", "body": ["Rent 1200", "Food 450"], "layout": "title,body"},
     {"slide": "Costs", "body": ["Food 450", "Rent 1200"]}),
    ({"slide": 1, "table": [["Item", "Cost"], ["Rent", "1200"]], "contains": "Draft"},
     {"slide": 1, "table": [["Item", "Cost"]]}),
    ({"slide": 1, "background": "#FFCC00", "hidden": False, "images": 0},
     {"slide": 1, "background": "#FFFFFF"}),
    ({"slide": 2, "layout_kind": "title_only", "body_contains": ""},
     {"slide": 2, "images_at_least": 1}),
    ({"slide": "Old title", "absent": True}, {"slide": "Costs", "absent": True}),
    ({"contains": "Rent 1200"}, {"absent": "Rent 1200"}),
]  # fmt: skip


@pytest.mark.parametrize("fmt", ["pptx", "odp"])
@pytest.mark.parametrize(("right", "wrong"), DECK_CASES, ids=[str(c[0])[:40] for c in DECK_CASES])
def test_a_presentation_assertion_holds_on_the_right_document_only(home, fmt, right, wrong):
    path = f"~/deck.{fmt}"
    ok = verify(home, "presentation", path, [right])
    assert ok.success, ok.checks
    assert not verify(home, "presentation", path, [wrong]).success


# ----- bad input ----------------------------------------------------------------------------
BAD = [
    ("corrupted.xlsx", "not a zip package"),
    ("truncated.xlsx", "not a zip package"),
    ("hollow.xlsx", "not an office document"),
    ("nomain.xlsx", "without a known main part"),
    ("bomb.ods", "unpacks to more than"),
    ("laughs.ods", "declares a DTD"),
    ("shadow.xlsx", "symbolic link"),
    ("fifo.xlsx", "not a regular file"),
    ("huge.xlsx", "more than"),
    ("csv.xlsx", "not a zip package"),
    ("odsinside.xlsx", "named .xlsx but holds ods content"),
]


@pytest.mark.parametrize(("name", "reason"), BAD)
def test_a_bad_document_scores_zero_with_the_reason(home, name, reason):
    result = verify(home, "spreadsheet", f"~/bad/{name}", [{"cell": "A1", "value": "Item"}])
    assert result.error is None  # the verifier worked: the document is the agent's doing
    assert not result.success and result.score == 0.0
    assert reason in result.checks[0].detail, result.checks[0].detail


def test_the_privileged_process_reads_only_the_runners_summary(tmp_path):
    """Whatever the runner prints that is not the reader's JSON (a cut summary, a crash, a
    hang) fails the check; no file is opened here, not even one that exists."""
    (tmp_path / "book.xlsx").write_bytes(b"PK not read here")
    outputs = [
        (0, '{"ok": true, "model": {"type": "spread', ""),
        (1, "", "Traceback ... MemoryError"),
        (0, '{"ok": false, "error": "the package has no content.xml"}', ""),
    ]
    for code, out, err in outputs:
        probe = ComputerProbe(tmp_path, lambda c, t, r=(code, out, err): r)
        result = verify(probe, "spreadsheet", "~/book.xlsx", [{"charts": 0}])
        assert result.error is None and not result.success

    def hang(command, timeout):
        raise TimeoutError("took too long")

    result = verify(ComputerProbe(tmp_path, hang), "spreadsheet", "~/book.xlsx", [])
    assert not result.success and "did not finish" in result.checks[0].detail


def test_a_spec_that_makes_no_sense_is_an_error_not_a_zero(home):
    assert verify(home, "spreadsheet", "~/book_base.xlsx", [{"colour": "red"}]).error
    result = verify(home, "spreadsheet", "~/book_base.xlsx", [], formats=["docx"])
    assert result.error and "cannot allow" in result.error


def test_the_trusted_reader_gives_the_sandboxs_model(home):
    """A gold file read in-process (trusted_model) gives the model the sandbox gives."""
    for name in ("book_base.xlsx", "doc_base.odt", "deck.pptx"):
        kind = office_xml.KIND[name.rsplit(".", 1)[1]]
        fmts = office.APP_FORMATS[kind]
        inside = office.read_model(home, f"~/{name}", fmts)
        assert office.trusted_model(home.home / name, fmts) == inside


def test_the_docs_example_runs(home):
    """docs/verifiers.md's office example, as written, on the test budget (an .ods answer to
    its .xlsx path, which the example allows)."""
    import json
    import re

    text = (Path(__file__).parents[2] / "docs" / "verifiers.md").read_text()
    section = text.split("## Office documents", 1)[1]
    spec = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    shutil.copy(home.home / "book_base.ods", home.home / "budget.ods")
    try:
        result = DeclarativeVerifier(spec).verify(home)
    finally:
        (home.home / "budget.ods").unlink()
    assert result.success, result.checks
