"""The office adversaries: what they do to documents (run here by Debian's python3, as in the
sandbox), which documents they touch, and, on a real desktop, that an office task's validation
plays them and each fails."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from palaestra.envs.computer.office import strategies, tampering
from palaestra.tasks import Task

SYSTEM_PYTHON = "/usr/bin/python3"


def _has_libs() -> bool:
    probe = "import openpyxl, docx, odf"
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True).returncode == 0
    except OSError:
        return False


needs_libs = pytest.mark.skipif(
    not _has_libs(), reason="Debian's python3-openpyxl/-docx/-odf are not installed"
)


def sandboxed(name: str, *args: object) -> object:
    """``tampering.<name>(*args)`` as a ``run_python`` action runs it: the module's source and
    one call, in the system's Python (where the document libraries are)."""
    code = tampering.call(name, *args)
    done = subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])["result"]


def system(code: str) -> str:
    done = subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_libs
def test_wrong_content_puts_off_what_the_solution_added_and_nothing_else(tmp_path: Path):
    original, solved = tmp_path / "orig.xlsx", tmp_path / "budget.xlsx"
    system(
        "import openpyxl\n"
        "wb = openpyxl.Workbook(); ws = wb.active\n"
        "for row in [('Item', 'Cost'), ('Flour', 120), ('Yeast', 35)]: ws.append(row)\n"
        f"wb.save({str(original)!r})\n"
        "ws['A4'] = 'Total'; ws['B4'] = '=SUM(B2:B3)'\n"
        f"wb.save({str(solved)!r})\n"
    )
    assert sandboxed("put_off", str(solved), str(original)) == 2
    cells = system(
        f"import openpyxl\nws = openpyxl.load_workbook({str(solved)!r}).active\n"
        "print([[c.value for c in r] for r in ws.iter_rows()])"
    )
    # the added total's range a row short, its label misspelt; the inputs as they were
    assert cells.strip() == str(
        [["Item", "Cost"], ["Flour", 120], ["Yeast", 35], ["Totla", "=SUM(B2:B2)"]]
    )
    # nothing new (a solution that only sorted or styled): nothing to put off
    assert sandboxed("put_off", str(original), str(original)) == 0


@needs_libs
def test_a_style_the_document_has_elsewhere_is_put_off_where_it_changed(tmp_path: Path):
    original, solved = tmp_path / "orig.docx", tmp_path / "report.docx"
    system(
        "import docx\nd = docx.Document()\n"
        "d.add_paragraph('Sales & costs', style='Heading 1')\n"
        "d.add_paragraph('Next steps')\n"
        f"d.save({str(original)!r})\n"
        "d.paragraphs[1].style = d.styles['Heading 1']\n"
        f"d.save({str(solved)!r})\n"
    )
    assert sandboxed("put_off", str(solved), str(original)) == 1
    styles = system(
        f"import docx\nd = docx.Document({str(solved)!r})\n"
        "print([(p.style.name, p.text) for p in d.paragraphs])"
    )
    # the heading made a level lower, the rest (an escaped ampersand too) as it was
    assert styles.strip() == str([("Heading 1", "Sales & costs"), ("Heading 2", "Next steps")])


@needs_libs
def test_an_odf_document_put_off_still_opens(tmp_path: Path):
    original, solved = tmp_path / "orig.odt", tmp_path / "letter.odt"
    system(
        "from odf.opendocument import OpenDocumentText\nfrom odf.text import P, H\n"
        "doc = OpenDocumentText(); doc.text.addElement(P(text='Dear Ms Rivera,'))\n"
        f"doc.save({str(original)!r})\n"
        "doc.text.addElement(H(outlinelevel=1, text='Next steps'))\n"
        f"doc.save({str(solved)!r})\n"
    )
    assert sandboxed("put_off", str(solved), str(original)) >= 2
    with zipfile.ZipFile(solved) as z:
        first = z.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    text = system(
        f"from odf.opendocument import load\nfrom odf import teletype, text\n"
        f"doc = load({str(solved)!r})\n"
        "print([(h.getAttribute('outlinelevel'), teletype.extractText(h)) "
        "for h in doc.getElementsByType(text.H)])"
    )
    assert text.strip() == "[('2', 'Next stesp')]"


@needs_libs
@pytest.mark.parametrize("ext", ["xlsx", "docx", "ods", "odt", "odp", "csv"])
def test_hollow_leaves_an_empty_document_of_the_format(tmp_path: Path, ext: str):
    path = tmp_path / "sub" / f"report.{ext}"
    path.parent.mkdir()
    path.write_text("the real content")
    sandboxed("empty", str(path))
    if ext == "csv":
        assert path.read_text() == ""
        return
    assert zipfile.is_zipfile(path)
    assert "the real content" not in tampering.text(str(path))
    loads = {
        "xlsx": "import openpyxl; openpyxl.load_workbook(P)",
        "docx": "import docx; assert not docx.Document(P).paragraphs",
    }.get(ext, "from odf.opendocument import load; load(P)")
    system(f"P = {str(path)!r}\n{loads}")


@needs_libs
def test_a_format_dodge_moves_the_document_and_leaves_its_text(tmp_path: Path):
    path = tmp_path / "budget.xlsx"
    system(
        "import openpyxl\nwb = openpyxl.Workbook(); wb.active.append(['Total', 155])\n"
        f"wb.save({str(path)!r})"
    )
    other = tmp_path / "budget.xls"
    assert sandboxed("dodge", [[str(path), str(other)]]) == [str(path)]
    assert zipfile.is_zipfile(other) and not zipfile.is_zipfile(path)
    assert path.read_text() == "Total,155\n"
    # where the text was asked for (an export to CSV), the workbook itself takes its name
    csv, txt = tmp_path / "totals.csv", tmp_path / "totals.txt"
    csv.write_text("Total,155\n")
    assert sandboxed("dodge", [[str(csv), str(txt)]], str(other)) == [str(csv)]
    assert txt.read_text() == "Total,155\n" and csv.read_bytes() == other.read_bytes()


def office_task(instruction: str, opened: str = "/home/user/budget.xlsx") -> Task:
    return Task(
        id="t/0",
        family="computer",
        env="palaestra/computer-v0",
        instruction=instruction,
        setup={"apps": [["calc", opened]], "binary": {}},
        verifier={"kind": "all", "checks": []},
        metadata={"code_oracle": ["run_python('solve()')"]},
        oracle={"policy": "replay", "data": ["key('ctrl+s')"]},
    )


def test_the_adversaries_work_on_the_documents_the_agent_knows_of():
    named = office_task("Total the costs in ~/budget.xlsx and export them as ~/out/costs.csv.")
    assert strategies.documents(named) == ["/home/user/budget.xlsx", "/home/user/out/costs.csv"]
    bare = office_task("Put the total in B4 and save.")
    assert strategies.documents(bare) == ["/home/user/budget.xlsx"]  # the one open on screen
    assert strategies.named("Open report.docx, then deck.odp") == [
        "/home/user/report.docx",
        "/home/user/deck.odp",
    ]
    dodge = strategies.ADVERSARIES["format_dodge"]()
    dodge.reset(named)
    assert dodge.actions[0] == "run_python('solve()')"  # the code solution first
    assert "budget.xls" in dodge.actions[1] and "costs.txt" in dodge.actions[1]
    untouched = strategies.ADVERSARIES["untouched"]()
    untouched.reset(bare)
    assert untouched.actions == [
        "key('ctrl+s')",
        "wait(1.5)",
        "key('Return')",
        "wait(1.5)",
        "done()",
    ]


def test_wrong_content_with_nothing_to_put_off_says_so():
    policy = strategies.ADVERSARIES["wrong_content"]()
    policy.reset(office_task("Sort the rows of ~/budget.xlsx by cost."))
    assert policy.act({}, {}).startswith("run_shell('cp /home/user/budget.xlsx /tmp/original.xlsx")
    assert policy.act({}, {}) == "run_python('solve()')"
    assert "put_off" in policy.act({}, {})
    output = {"stdout": '{"result": 0}\n', "stderr": ""}
    with pytest.raises(strategies.NothingToTry, match="no value of its own"):
        policy.act({"last_output": json.dumps(output)}, {})


def test_the_search_strategies_know_only_the_view_and_the_screen():
    from palaestra.verifiers.search import Strategy

    space = strategies.space()
    assert {"hollow_documents", "copy_open", "text_named", "claim_done"} <= set(space.primitives)
    # code only: the search plays without the app (the plan's bare episodes)
    from palaestra.verifiers.search import Memory

    memory = Memory({"instruction": "Save ~/budget.xlsx as ~/totals.ods."})
    for name in space.explorers:
        played = list(space.primitives[name].phase(memory, 0))
        assert played and all(a.startswith(("run_python(", "run_shell(")) for a in played), name
    task = office_task("Save the totals as ~/totals.ods.").model_copy(
        update={"metadata": {"code_oracle": ["SECRET"]}}
    )
    policy = space.policy(Strategy((("copy_open", 0), ("claim_done", 0))))
    policy.reset(task)
    windows = json.dumps([{"title": "budget.xlsx - LibreOffice Calc"}])
    first = policy.act({"windows": windows}, {})
    assert first == "run_shell('cp /home/user/budget.xlsx /home/user/totals.ods', timeout=20)"
    assert policy.act({"windows": windows}, {}) == "done()"
    assert "SECRET" not in json.dumps(policy.memory.view)


@pytest.mark.timeout(600)
def test_on_the_desktop_each_office_adversary_fails_for_what_it_did(desktop):
    """A real Impress task (retitle a slide): the code solution passes without the app; the
    adversaries fail, each with the detail its tampering causes."""
    from palaestra.envs.computer import validation
    from palaestra.envs.computer.office import suite
    from palaestra.family import family
    from palaestra.verifiers.validation import play

    task = next(t for t in suite.impress_tasks() if t.id == "impress-retitle-slide/0")
    fam = family("computer")

    def failed(name: str) -> list[str]:
        with validation.PLAN.env(desktop, task, name) as env:
            run = play(env, task, fam.policy(name), strict=False)
        assert run.result.error is None, (name, run.result.error)
        return [] if run.result.success else [c.detail for c in run.result.checks if not c.passed]

    assert failed("code_oracle") == []
    new = "Growth So Far"  # what the instruction asks the slide to be titled
    assert f'"{new}"' in task.instruction
    assert "titles are []" in failed("hollow_document")
    assert any("not a zip" in d for d in failed("format_dodge"))
    off = new[:-2] + new[-1] + new[-2]
    assert any(off in d for d in failed("wrong_content"))  # the new title, misspelt
    assert any("'Traction'" in d for d in failed("untouched"))  # the old title, saved again
