"""The Calc templates: every template makes its case for every seed, the same bytes twice;
phrasings format and say nothing of the template; each check is one the office verifier
understands and fails on the untouched document; a failing generator names itself and the
seed; the code solution passes in Debian's python3 (with a headless LibreOffice recalculating);
a form-only task's file with its values put off fails, so does a CSV export that ruins the
workbook; one GUI solution played on a real desktop session passes and doing nothing fails."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from palaestra.envs.computer.office import calc, calc_books, calc_files, tampering
from palaestra.envs.computer.office.template import ArtifactError
from palaestra.verifiers import office as vo
from palaestra.verifiers.base import evaluate
from palaestra.verifiers.computer import ComputerProbe
from palaestra.verifiers.office_xml import DocumentError
from tests.envs.computer.office.templates import assert_enough_templates, assert_stable_cases

TEMPLATES = {t.name: t for t in calc.TEMPLATES}
CASES = [(t.name, seed) for t in calc.TEMPLATES for seed in t.seeds]


def _write(case, home: Path) -> None:
    for rel, data in case.files.items():
        (home / rel).write_bytes(data)
    for rel, text in case.text_files.items():
        (home / rel).write_text(text)


def _judge(spec, home: Path):
    """The check as the verifier judges it, the document read in-process (trusted files)."""
    if spec["kind"] == "spreadsheet":
        model = vo.trusted_model(home / spec["path"].removeprefix("~/"), spec["formats"])
        return vo.judge_model("spreadsheet", model, spec)
    return evaluate(spec, ComputerProbe(home, run=None))


def test_enough_templates_skills_and_unique_names():
    assert_enough_templates(calc.TEMPLATES, "calc", at_least=20)
    skills = {s for t in calc.TEMPLATES for s in t.skills}
    for needed in (
        "formulas",
        "sorting",
        "filtering",
        "number formats",
        "conditional formats",
        "freezing",
        "charts",
        "pivot-style summaries",
        "cross-sheet references",
    ):
        assert needed in skills, needed


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_cases_are_deterministic_and_well_formed(name):
    t = TEMPLATES[name]
    cases = assert_stable_cases(t)  # the same bytes again, a document per seed
    for seed, a in zip(t.seeds, cases, strict=True):
        assert a.text_files == t.make(seed).text_files
        assert a.code and all(step["name"] == "run_python" for step in a.code)
        assert a.gui[-4:] == calc.g.save() or name == "calc-csv-export"
        for action in a.gui:  # GUI only: keys, text and waits
            assert action["name"] in ("key", "type_text", "wait"), action
        for phrasing in t.phrasings:
            lowered = phrasing.format(**a.params).lower()
            assert a.params["file"] in lowered and name.removeprefix("calc-") not in lowered
            assert "template" not in lowered and "skill" not in lowered


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_check_is_understood_and_the_untouched_document_fails(name, seed, tmp_path):
    case = TEMPLATES[name].make(seed)
    _write(case, tmp_path)
    result = _judge(case.verifier, tmp_path)
    assert not result.passed, result.detail
    if case.verifier["kind"] == "spreadsheet":  # and the document the case wrote reads back
        model = vo.trusted_model(tmp_path / case.open)
        assert model["sheets"][0]["cells"]["A1"]["v"]


def test_a_failing_generator_names_the_template_and_the_seed(monkeypatch):
    def broken(seed: int, amounts: bool = False):
        raise KeyError("no such product")

    monkeypatch.setattr(calc_books, "invoice", broken)
    with pytest.raises(ArtifactError, match=r"'calc-invoice-subtotal' failed for seed 2: KeyError"):
        TEMPLATES["calc-invoice-subtotal"].make(2)


def test_the_workbook_writer_is_deterministic_and_readable(tmp_path):
    import datetime as dt

    sheets = [
        calc_files.Sheet(
            "Data",
            [
                ["Item", calc_files.Cell(2.5, fmt="#,##0.00")],
                ["When", dt.date(2026, 3, 1)],
                ["Sum", calc_files.Cell(2.5, formula="SUM(B1:B1)")],
            ],
        )
    ]
    for writer, ext in ((calc_files.xlsx, "xlsx"), (calc_files.ods, "ods")):
        data = writer(sheets)
        assert data == writer(sheets)
        (tmp_path / f"w.{ext}").write_bytes(data)
        cells = vo.trusted_model(tmp_path / f"w.{ext}")["sheets"][0]["cells"]
        assert cells["B1"]["v"] == 2.5 and cells["B3"]["v"] == 2.5
        assert re.sub(r"[$\s]", "", cells["B3"]["f"]).upper().endswith("SUM(B1:B1)") or (
            "B1" in cells["B3"]["f"]
        )
    assert calc_files._of("SUM(B2:B9)*Rates!$B$2") == "SUM([.B2:.B9])*[$Rates.$B$2]"


def _soffice_ready() -> bool:
    return Path("/usr/bin/python3").exists() and Path("/usr/bin/soffice").exists()


@pytest.mark.parametrize("name", ["calc-invoice-tax", "calc-grades-sort", "calc-revenue-chart"])
def test_code_solution_passes_in_debian_python(name, tmp_path):
    """The code solution as the sandbox runs it (Debian's python3, openpyxl, a headless
    LibreOffice for the formulas it writes), pointed at a temporary home."""
    case = TEMPLATES[name].make(1)
    _write(case, tmp_path)
    _play_code(case, tmp_path)
    result = _judge(case.verifier, tmp_path)
    assert result.passed, result.detail


def _play_code(case, home: Path) -> None:
    assert _soffice_ready(), "Debian's python3 and LibreOffice are part of make setup"
    for action in case.code:
        code = action["args"]["code"].replace("/home/user", str(home))
        env = {**os.environ, "HOME": str(home)}
        done = subprocess.run(
            ["/usr/bin/python3", "-"],
            input=code,
            text=True,
            env=env,
            capture_output=True,
            timeout=200,
        )
        assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize(
    "name",
    [
        "calc-freeze-header",
        "calc-transactions-autofilter",
        "calc-bold-header",
        "calc-money-format",
        "calc-share-percent",
        "calc-spending-pie",
        "calc-inventory-sort",
    ],
)
def test_wrong_content_after_a_form_only_solution_fails(name, tmp_path):
    """A task about the table's form (a freeze, a format, a chart, an order) pins the table's
    values: the code solution's file with the wrong-content adversary's changes fails, or the
    solution wrote no value the original did not hold (its floats shortest, never
    8.140000000000001), so there is nothing to put off. Seed 1 is one whose prices openpyxl
    would write with %.16g noise."""
    case = TEMPLATES[name].make(1)
    _write(case, tmp_path)
    original = tmp_path / "original.xlsx"
    original.write_bytes(case.files[case.open])
    _play_code(case, tmp_path)
    assert _judge(case.verifier, tmp_path).passed
    if tampering.put_off(str(tmp_path / case.open), str(original)):
        result = _judge(case.verifier, tmp_path)
        assert not result.passed, result.detail
    else:
        assert name in ("calc-bold-header",), "only a style change leaves nothing to put off"


def test_a_csv_export_that_ruins_the_workbook_fails(tmp_path):
    """The format dodge (the workbook's text left at its path, the CSV beside it): the
    workbook no longer holds its table, so the export's check fails."""
    case = TEMPLATES["calc-csv-export"].make(1)
    _write(case, tmp_path)
    _play_code(case, tmp_path)
    book, *csv_checks = case.verifier["checks"]
    assert book["kind"] == "spreadsheet" and _judge(book, tmp_path).passed
    csv_name = case.params["csv"].removeprefix("~/")
    assert all(_judge(c, tmp_path).passed for c in csv_checks)
    workbook = tmp_path / case.open
    tampering.dodge(
        [[str(workbook), str(workbook.with_suffix(".xls"))]],
        str(tmp_path / csv_name),
    )
    with pytest.raises(DocumentError, match="not a zip package"):
        _judge(book, tmp_path)  # the sandbox's reader says the same: the check fails


# ----- a real session ------------------------------------------------------------------------


def test_gui_solution_passes_on_a_real_desktop_and_doing_nothing_fails(desktop):
    """The suite's task (setup with the workbook, Calc open on it), its GUI solution stepped
    action by action: the saved file passes; a fresh reset (the untouched file) fails."""
    from palaestra.envs.computer.office import suite

    task = suite.make_task(TEMPLATES["calc-invoice-subtotal"], 0)
    desktop.reset(seed=0, options={"task": task})
    assert not desktop.verify().success
    for action in task.oracle.data:
        obs, *_ = desktop.step(action)
        assert not obs.get("last_action_error"), (action, obs.get("last_action_error"))
    result = desktop.verify()
    assert result.success, result
