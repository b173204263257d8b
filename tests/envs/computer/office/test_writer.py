"""The Writer templates: every template makes a case for each seed (the same bytes twice), its
phrasings format, ids are unique; the generated .docx is a fixed zip the reader models as the
generator meant; each check fails on the document as generated and passes once the code
solution has run on it (Debian's python3-docx, as in the sandbox); a generator failure names
the template and the seed; and on a real desktop a GUI solution passes while doing nothing
fails."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from palaestra.envs.computer.office import writer, writer_base, writer_docs
from palaestra.envs.computer.office.writer_docx import Doc, Page, Para, Run, Table, docx
from palaestra.verifiers.office import judge_model, trusted_model
from tests.envs.computer.office.templates import (
    assert_enough_templates,
    assert_failure_is_named,
    assert_stable_cases,
)

NAMES = [t.name for t in writer.TEMPLATES]
DOCX = (
    Path("/usr/bin/python3").exists()
    and subprocess.run(["/usr/bin/python3", "-c", "import docx"], capture_output=True).returncode
    == 0
)


def test_enough_templates_and_tasks_with_unique_ids():
    assert_enough_templates(writer.TEMPLATES, "writer")


@pytest.mark.parametrize("template", writer.TEMPLATES, ids=NAMES)
def test_each_seed_makes_the_same_case_twice_and_every_phrasing_formats(template):
    for case in assert_stable_cases(template):
        assert all(a["name"] in ("key", "type_text", "wait") for a in case.gui)  # GUI only


def test_a_document_is_a_fixed_zip_that_the_reader_models_as_generated(tmp_path):
    doc = Doc(
        (
            Para("Plan", style="Title"),
            Para("Scope", style="Heading1"),
            Para((Run("Net total "), Run("due", bold=True))),
            Para("milk", items="bullet"),
            Para("eggs", items="number", comment=("Ann", "Check this")),
            Table((("A", "B"), ("1", "2"))),
        ),
        Page(paper="Letter", landscape=True, margins_mm=(20.0, 15.0, 20.0, 15.0)),
    )
    blob = docx(doc)
    assert blob == docx(doc)
    with zipfile.ZipFile(BytesIO(blob)) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    path = tmp_path / "plan.docx"
    path.write_bytes(blob)
    model = trusted_model(path)
    paras = model["paragraphs"]
    paras = [p for p in paras if p["text"]]  # a table is followed by an empty paragraph
    assert [p["text"] for p in paras] == ["Plan", "Scope", "Net total due", "milk", "eggs"]
    assert (paras[0]["style"], paras[1]["heading"]) == ("Title", 1)
    assert paras[3]["list"]["ordered"] is False and paras[4]["list"]["ordered"] is True
    assert model["tables"] == [[["A", "B"], ["1", "2"]]]
    assert model["comments"][0]["text"] == "Check this"
    page = model["page"]
    assert page["orientation"] == "landscape"
    assert abs(page["width"] - 279.4) < 0.1 and abs(page["margins"]["left"] - 15.0) < 0.1


def test_every_paragraph_of_a_document_is_unique():
    for build in (writer_docs.letter, writer_docs.report, writer_docs.minutes):
        for seed in (0, 1, 2):
            texts = writer_docs.texts(build(seed))
            assert len(texts) == len(set(texts)), build.__name__


def _run_code(case, home: Path) -> None:
    """The case's code solution on the host's Debian python3 (python3-docx), in ``home``."""
    for action in case.code:
        source = action["args"]["code"].replace("/home/user", str(home))
        done = subprocess.run(
            ["/usr/bin/python3", "-c", source], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.skipif(not DOCX, reason="Debian's python3-docx is not installed")
@pytest.mark.parametrize("template", writer.TEMPLATES, ids=NAMES)
def test_the_check_fails_on_the_generated_document_and_passes_after_the_code_solution(
    template, tmp_path
):
    for seed in template.seeds:
        case = template.make(seed)
        home = tmp_path / str(seed)
        home.mkdir()
        (home / case.open).write_bytes(case.files[case.open])
        spec = case.verifier
        target = home / spec["path"].removeprefix("~/")

        def verdict(target: Path = target, spec: dict = spec) -> bool:
            return judge_model("text_document", trusted_model(target), spec).passed

        assert not verdict(), f"{template.name}/{seed} passes as generated"
        if case.code is None:
            continue
        _run_code(case, home)
        assert verdict(), f"{template.name}/{seed} fails after its code solution"


def test_a_generator_failure_names_the_template_and_the_seed(monkeypatch):
    assert_failure_is_named(
        monkeypatch, writer_docs.LETTER, "build", writer.TEMPLATES, "writer-bold-line", 2
    )


def test_a_template_only_searches_for_words_that_first_occur_where_it_means():
    blocks = [Para("Revenue reached 5"), Para("Revenue", style="Heading1")]
    assert not writer_base.searchable(blocks, 1, "Revenue")
    assert writer_base.searchable(blocks, 0, "revenue reached")


@pytest.mark.skipif(not shutil.which("soffice"), reason="LibreOffice not installed")
@pytest.mark.timeout(600)
def test_on_the_desktop_the_gui_solution_passes_and_doing_nothing_fails(desktop):
    from palaestra.envs.computer.office import suite
    from palaestra.family import family
    from palaestra.verifiers.validation import play

    task = next(t for t in suite.writer_tasks() if t.id == "writer-replace-attendee/0")
    fam = family("computer")
    oracle = play(desktop, task, fam.policy("oracle"), strict=False).result
    assert oracle.error is None and oracle.success, [c.detail for c in oracle.checks]
    nothing = play(desktop, task, fam.policy("noop"), strict=False).result
    assert nothing.error is None and not nothing.success

    def details(checks):
        for c in checks:
            yield c.detail
            yield from details(c.children)

    assert any("still has" in d for d in details(nothing.checks)), list(details(nothing.checks))
