"""The Impress templates: every template makes a case for each seed (the same bytes twice), its
phrasings format, ids are unique; the generated deck is an ODP LibreOffice's reader model reads
as the generator meant; each check fails on the deck as generated and passes once the code
solution has run on it; a generator failure names the template and the seed; and on a real
desktop a GUI solution passes while doing nothing fails."""

from __future__ import annotations

import ast
import shutil
import subprocess
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from palaestra.envs.computer.office import impress, impress_decks
from palaestra.envs.computer.office.impress_odp import STAMP, odp
from palaestra.envs.computer.office.template import ArtifactError
from palaestra.verifiers.office import judge_model, trusted_model

NAMES = [t.name for t in impress.TEMPLATES]


def test_enough_templates_and_tasks_with_unique_ids():
    assert len(NAMES) == len(set(NAMES)) >= 15
    assert sum(len(t.seeds) for t in impress.TEMPLATES) >= 45
    assert all(t.app == "impress" and t.name.startswith("impress-") for t in impress.TEMPLATES)


@pytest.mark.parametrize("template", impress.TEMPLATES, ids=NAMES)
def test_each_seed_makes_the_same_case_twice_and_every_phrasing_formats(template):
    assert len(set(template.phrasings)) >= 3
    decks = set()
    for seed in template.seeds:
        case, again = template.make(seed), template.make(seed)
        assert case.files == again.files and case.verifier == again.verifier
        assert case.gui == again.gui and case.code == again.code
        assert case.open in case.files and case.gui and case.code
        decks.add(case.files[case.open])
        for phrasing in template.phrasings:
            text = phrasing.format(**case.params)
            assert "{" not in text and template.name not in text
    assert len(decks) == len(template.seeds)  # each seed its own deck


@pytest.mark.parametrize("template", impress.TEMPLATES, ids=NAMES)
def test_a_gui_solution_gives_the_edit_view_the_keyboard_before_tab_selects_an_object(template):
    # under load Impress can open with the keyboard in the slide pane: Tab then selects nothing
    # and the typing is lost, so the first Tab comes after the focus click on the canvas
    for seed in template.seeds:
        gui = template.make(seed).gui
        edits = [i for i in range(len(gui)) if gui[i : i + 3] == impress_decks.edit_object(1)[:3]]
        if edits:
            assert impress_decks.focus()[0] in gui[: edits[0]], (template.name, seed)


def test_a_deck_is_a_fixed_zip_that_the_reader_models_as_generated(tmp_path):
    name, deck = impress_decks.deck(0)
    blob = odp(deck)
    with zipfile.ZipFile(BytesIO(blob)) as z:
        infos = z.infolist()
        assert infos[0].filename == "mimetype" and infos[0].compress_type == zipfile.ZIP_STORED
        assert {i.date_time for i in infos} == {STAMP}
    path = tmp_path / name
    path.write_bytes(blob)
    model = trusted_model(path)
    assert [s["title"] for s in model["slides"]] == [s.title for s in deck.slides]
    assert model["slides"][1]["body"] == list(deck.slides[1].body)
    assert model["slides"][0]["subtitle"] == "\n".join(deck.slides[0].body)
    assert [s["notes"] for s in model["slides"]] == [s.notes for s in deck.slides]


def _run_code(case, home: Path) -> None:
    """The case's code solution on the host's Debian python3 (odfpy) or shell, in ``home``."""
    for action in case.code:
        call = ast.parse(action, mode="eval").body
        source = ast.literal_eval(call.args[0]).replace("/home/user", str(home))
        argv = ["/usr/bin/python3", "-c", source] if call.func.id == "run_python" else [
            "bash", "-c", source]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.skipif(not Path("/usr/bin/soffice").exists(), reason="LibreOffice not installed")
@pytest.mark.parametrize("template", impress.TEMPLATES, ids=NAMES)
def test_the_check_fails_on_the_generated_deck_and_passes_after_the_code_solution(
    template, tmp_path
):
    case = template.make(0)
    for rel, blob in case.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(blob)
    spec = case.verifier
    target = tmp_path / spec["path"].removeprefix("/home/user/")

    def verdict() -> bool:
        if not target.exists():
            return False
        return judge_model("presentation", trusted_model(target), spec).passed

    assert not verdict()
    _run_code(case, tmp_path)
    assert verdict()


def test_a_generator_failure_names_the_template_and_the_seed(monkeypatch):
    def broken(seed):
        raise KeyError("no company")

    monkeypatch.setattr(impress, "deck", broken)
    with pytest.raises(ArtifactError, match=r"'impress-delete-slide' failed for seed 2"):
        next(t for t in impress.TEMPLATES if t.name == "impress-delete-slide").make(2)


@pytest.mark.skipif(not shutil.which("soffice"), reason="LibreOffice not installed")
@pytest.mark.timeout(600)
def test_on_the_desktop_the_gui_solution_passes_and_doing_nothing_fails(desktop):
    from palaestra.envs.computer.office import suite
    from palaestra.family import family
    from palaestra.verifiers.validation import play

    task = next(t for t in suite.impress_tasks() if t.id == "impress-add-bullet/0")
    fam = family("computer")
    oracle = play(desktop, task, list(task.oracle.data)).result  # keyboard only
    assert not any(a.startswith(("run_", "write_file")) for a in task.oracle.data)
    assert oracle.error is None and oracle.success, [c.detail for c in oracle.checks]
    nothing = play(desktop, task, fam.policy("noop"), strict=False).result
    assert nothing.error is None and not nothing.success
    assert any("body is" in c.detail for c in nothing.checks if not c.passed)
