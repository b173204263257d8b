"""Our OSWorld office kinds against OSWorld's own metric functions, on the same documents.

OSWorld's side runs in ``.venv-osworld`` (``make setup``: scripts/setup-osworld.sh installs
desktop-env and the libraries its office metrics import); a missing venv FAILS these tests,
naming the fix: the cross-check is never skipped silently. The documents are made by
openpyxl / python-docx / odfpy and saved by LibreOffice (``office_docs.build``), then varied:
equal, a value changed, a style changed, a sheet missing or renamed, another chart type, other
frozen panes; a text changed, a paragraph added, case changed, paragraphs reordered; slides
reordered, a title changed, a run made bold, notes changed, a shape moved. Every case must get
OSWorld's score from us, and the cases must hold both verdicts (a cross-check of all zeros
would prove nothing).
"""

import json
import subprocess
from pathlib import Path

import pytest

from palaestra.verifiers import office_osworld, office_read
from tests.verifiers.office_docs import build

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-osworld" / "bin" / "python"
RUNNER = Path(__file__).with_name("osworld_metrics.py")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

DATA = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}
TABLE_RULES = {
    "data": [DATA],
    "names": [{"type": "sheet_name"}],
    "fill": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor"]}],
    "bold": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_bold"]}],
    "chart": [{"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type"]}],
    "freeze": [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}],
    "second": [{"type": "sheet_data", "sheet_idx0": "RI1", "sheet_idx1": "EI1"}],
    "named": [{"type": "sheet_data", "sheet_idx0": "RNNotes", "sheet_idx1": "ENNotes"}],
    "cell": [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "B5",
            "props": {"value": {"method": "approx:0.01", "ref": 1730.5}},
        }
    ],
    "fuzzy": [
        {
            "type": "sheet_fuzzy",
            "sheet_idx0": 0,
            "sheet_idx1": "EI0",
            "rules": [{"range": ["A1:C5"], "type": "fuzzy_match", "threshold": 90}],
        }
    ],
    "zoom": [{"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 260}],
}
BOOKS = ("base", "value", "style", "sheet_missing", "sheet_renamed", "chart", "freeze")
DOC_OPTIONS = {
    "default": {},
    "strict": {"ignore_blanks": False},
    "case": {"ignore_blanks": False, "ignore_case": True},
    "order": {"ignore_order": True, "ignore_blanks": False},
    "fuzzy": {"fuzzy_match": True},
    "content": {"content_only": True},
}
DOCS = ("base", "text", "added", "case", "order")
DECK_OPTIONS = {
    "default": {},
    "no_shape": {"examine_shape": False},
    "no_notes": {"examine_note": False},
    "no_slides": {"examine_number_of_slides": False},
}
DECKS = ("same", "reordered", "retitled", "bold", "notes", "moved")


def _cases(lo: Path) -> list[dict]:
    cases = []
    for rules_name, rules in TABLE_RULES.items():
        for variant in BOOKS:
            cases.append(
                {
                    "metric": "compare_table",
                    "result": str(lo / f"book_{variant}.xlsx"),
                    "expected": str(lo / "book_base.xlsx"),
                    "options": {"rules": rules},
                    "name": f"table/{rules_name}/{variant}",
                }
            )
    for opt_name, options in DOC_OPTIONS.items():
        for variant in DOCS:
            cases.append(
                {
                    "metric": "compare_docx_files",
                    "result": str(lo / f"doc_{variant}.docx"),
                    "expected": str(lo / "doc_base.docx"),
                    "options": options,
                    "name": f"docx/{opt_name}/{variant}",
                }
            )
    for opt_name, options in DECK_OPTIONS.items():
        for variant in DECKS:
            cases.append(
                {
                    "metric": "compare_pptx_files",
                    "result": str(lo / f"deck_{variant}.pptx"),
                    "expected": str(lo / "deck.pptx"),
                    "options": options,
                    "name": f"pptx/{opt_name}/{variant}",
                }
            )
    return cases


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> list[tuple[dict, dict]]:
    if not PYTHON.exists():
        pytest.fail(f"the OSWorld venv is missing ({PYTHON}): run `make setup` "
                    "(scripts/setup-osworld.sh)")  # fmt: skip
    lo = build(tmp_path_factory.mktemp("office-osworld"))
    subprocess.run(
        [str(PYTHON), str(RUNNER), "pptx", str(lo / "deck.pptx"), str(lo)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    cases = _cases(lo)
    jobs = lo / "jobs.json"
    jobs.write_text(json.dumps(cases))
    done = subprocess.run(
        [str(PYTHON), str(RUNNER), "score", str(jobs)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return list(zip(cases, json.loads(done.stdout), strict=True))


METRICS = {
    "compare_table": office_osworld.compare_table,
    "compare_docx_files": office_osworld.compare_docx_files,
    "compare_pptx_files": office_osworld.compare_pptx_files,
}


def _ours(case: dict) -> float:
    result = office_read.read_document(case["result"], detail=True)
    expected = office_read.read_document(case["expected"], detail=True)
    score, _detail = METRICS[case["metric"]](result, expected, case["options"])
    return score


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_our_metric_scores_as_osworlds(scored, metric):
    rows = [(case, theirs) for case, theirs in scored if case["metric"] == metric]
    disagree = [
        f"{case['name']}: OSWorld {theirs['score']:.4f}"
        f"{' (' + theirs['error'] + ')' if 'error' in theirs else ''}, ours {_ours(case):.4f}"
        for case, theirs in rows
        if abs(_ours(case) - theirs["score"]) > 1e-6
    ]
    assert not disagree, "\n".join(disagree)
    verdicts = {theirs["score"] >= 1.0 for _, theirs in rows}
    assert verdicts == {True, False}, f"{metric}: the cases give one verdict only"


def test_check_include_exclude_as_osworlds(tmp_path):
    """Ours over a command's output in a session's probe, theirs over the same string."""
    from palaestra.verifiers.base import DeclarativeVerifier
    from palaestra.verifiers.computer import ComputerProbe

    out = "ring 1\nmode: dark\n"
    cases = [{"include": ["dark"], "exclude": []}, {"include": ["dark"], "exclude": ["ring"]},
             {"include": ["light"]}, {"include": [], "exclude": ["xyz"]}]  # fmt: skip
    jobs = tmp_path / "jobs.json"
    jobs.write_text(
        json.dumps(
            [
                {"metric": "check_include_exclude", "result": out, "options": {"rules": r}}
                for r in cases
            ]
        )
    )
    if not PYTHON.exists():
        pytest.fail(f"the OSWorld venv is missing ({PYTHON}): run `make setup`")
    done = subprocess.run(
        [str(PYTHON), str(RUNNER), "score", str(jobs)], capture_output=True, text=True, check=True
    )
    theirs = [r["score"] for r in json.loads(done.stdout)]
    probe = ComputerProbe(tmp_path, lambda command, timeout: (0, out, ""))
    ours = [
        DeclarativeVerifier({"kind": "check_include_exclude", "command": "settings", "rules": r})
        .verify(probe)
        .score
        for r in cases
    ]
    assert ours == theirs == [1.0, 0.0, 0.0, 1.0]
