"""The Calc templates: every template makes its case for every seed, the same bytes twice;
phrasings format and say nothing of the template; each check is one the office verifier
understands and fails on the untouched document; a failing generator names itself and the
seed; the code solution passes in Debian's python3 (with a headless LibreOffice recalculating);
one GUI solution played on a real desktop session passes and doing nothing fails."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from palaestra.envs.computer.office import calc, calc_books, calc_files
from palaestra.envs.computer.office.template import ArtifactError
from palaestra.verifiers import office as vo
from palaestra.verifiers.base import evaluate
from palaestra.verifiers.computer import ComputerProbe

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
    assert len(TEMPLATES) == len(calc.TEMPLATES) >= 20
    assert len(CASES) >= 60
    assert all(t.app == "calc" and t.name.startswith("calc-") for t in calc.TEMPLATES)
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


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_case_is_deterministic_and_well_formed(name, seed):
    t = TEMPLATES[name]
    a, b = t.make(seed), t.make(seed)
    assert a.files == b.files and a.text_files == b.text_files  # the same bytes again
    assert a.open in a.files and a.gui and a.code
    assert a.gui[-4:] == calc.g.save() or name == "calc-csv-export"
    for action in a.gui:  # GUI only: keys, text, clicks and waits
        assert action["name"] in ("key", "type_text", "wait", "click"), action
    assert all(a["name"] == "run_python" for a in a.code)
    assert len(t.phrasings) >= 3 and len(set(t.phrasings)) == len(t.phrasings)
    for phrasing in t.phrasings:
        text = phrasing.format(**a.params)
        assert "{" not in text and a.params["file"] in text
        lowered = text.lower()
        assert name not in lowered and name.removeprefix("calc-") not in lowered
        assert "template" not in lowered and "skill" not in lowered


def test_files_differ_across_seeds():
    for t in calc.TEMPLATES:
        blobs = {next(iter(t.make(s).files.values())) for s in t.seeds}
        assert len(blobs) == len(t.seeds), t.name


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
    assert _soffice_ready(), "Debian's python3 and LibreOffice are part of make setup"
    case = TEMPLATES[name].make(1)
    _write(case, tmp_path)
    for action in case.code:
        code = action["args"]["code"].replace("/home/user", str(tmp_path))
        env = {**os.environ, "HOME": str(tmp_path)}
        done = subprocess.run(
            ["/usr/bin/python3", "-"],
            input=code,
            text=True,
            env=env,
            capture_output=True,
            timeout=200,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    result = _judge(case.verifier, tmp_path)
    assert result.passed, result.detail


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
