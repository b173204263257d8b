"""OSWorld-format office tasks whose files are generated here, played on a real LibreOffice
session: one task per app in OSWorld's own JSON (download + open, a gold ``cloud_file`` and the
metric OSWorld's real tasks of that app use), its files put in a temporary download cache under
the URLs the task names. A reference solution through the GUI scores 1, doing nothing scores 0,
and each score agrees with OSWorld's own metric function (``desktop-env`` in ``.venv-osworld``)
on the same two files.

The documents are made with the libraries OSWorld's metrics read them with (openpyxl,
python-docx, python-pptx, in ``.venv-osworld``) and then saved by LibreOffice headless, as the
agent's document will be: OSWorld's gold files were saved by an office app too, and
``compare_pptx_files`` tells python-pptx's output from LibreOffice's by their shapes' geometry.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from palaestra.envs.computer import osworld
from palaestra.envs.computer.office import keys
from palaestra.envs.computer.osworld_cache import Cache
from palaestra.verifiers.validation import play
from tests.verifiers.office_docs import soffice

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[3]
OSWORLD_PY = REPO / ".venv-osworld" / "bin" / "python"
RUNNER = REPO / "tests" / "verifiers" / "osworld_metrics.py"
BASE = "https://files.example.org/osworld-office-test"  # never fetched: the cache serves it
HOME = "/home/user"

#: the start document and the answer of each app's task, written with OSWorld's libraries
GENERATE = r"""
import sys
from pathlib import Path

import docx
import openpyxl
import pptx

out, variant = Path(sys.argv[1]), sys.argv[2]
answer = variant == "answer"
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Sheet1"
ws.append(["Item", "Qty", "Price", "Total"])
for item, qty, price in (("Pens", 3, 1.5), ("Paper", 2, 4.25), ("Ink", 5, 7.0)):
    ws.append([item, qty, price, qty * price if answer else None])
wb.save(out / "orders.xlsx")
d = docx.Document()
d.add_heading("Minutes of the board", 1)
d.add_paragraph("The board met on Monday at ten.")
d.add_paragraph("The budget for the new year was discussed.")
if answer:
    d.add_paragraph("Approved by the board.")
d.save(out / "minutes.docx")
deck = pptx.Presentation()
for title, body in (("Quarterly review", "Sales grew"), ("Next steps", "Hire two people")):
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Action items" if answer and title == "Next steps" else title
    slide.placeholders[1].text = body
deck.save(out / "review.pptx")
"""

#: per app: the document, OSWorld's metric and options, the instruction, a GUI solution (the
#: office oracles' keyboard recipes)
APPS = {
    "calc": (
        "orders.xlsx",
        "compare_table",
        {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
        "Fill the Total column with each row's quantity times its price.",
        [*keys.type_cells("D2", [["=B2*C2"], ["=B3*C3"], ["=B4*C4"]]), *keys.save("xlsx")],
    ),
    "writer": (
        "minutes.docx",
        "compare_docx_files",
        {},
        'Add a last paragraph to the minutes saying "Approved by the board."',
        [
            *[keys.key("ctrl+End"), keys.key("Return")],
            *[keys.type_text("Approved by the board."), *keys.save("docx")],
        ],
    ),
    "impress": (
        "review.pptx",
        "compare_pptx_files",
        {},
        'Rename the second slide\'s title to "Action items".',
        [
            *[keys.key("Next"), keys.wait(1.0)],  # to slide 2
            # its title: selected, edited, all its text selected (waits: a loaded machine)
            *[keys.key("Tab"), keys.wait(0.5), keys.key("Return"), keys.wait(0.5)],
            *[keys.key("ctrl+a"), keys.wait(0.5)],
            *[keys.type_text("Action items"), keys.wait(0.5), keys.key("Escape")],
            *[keys.key("Escape"), keys.wait(0.5)],
            *keys.save("pptx"),
        ],
    ),
}


def task_json(app):
    """The app's task in OSWorld's format, as its real tasks are written."""
    name, func, options, instruction, _ = APPS[app]
    path = f"{HOME}/Desktop/{name}"
    window = f"{name} - LibreOffice {app.capitalize()}"
    return {
        "id": f"generated-{app}",
        "snapshot": f"libreoffice_{app}",
        "instruction": instruction,
        "source": "generated for palaestra's tests",
        "config": [
            {
                "type": "download",
                "parameters": {"files": [{"url": f"{BASE}/{name}", "path": path}]},
            },
            {"type": "open", "parameters": {"path": path}},
        ],
        "related_apps": [f"libreoffice_{app}"],
        "evaluator": {
            "postconfig": [
                {"type": "activate_window", "parameters": {"window_name": window, "strict": True}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
                {
                    "type": "execute",
                    "parameters": {
                        "command": [
                            "python",
                            "-c",
                            "import pyautogui; pyautogui.hotkey('ctrl', 's');",
                        ]
                    },
                },
            ],
            "func": func,
            "result": {"type": "vm_file", "path": path, "dest": name},
            "expected": {
                "type": "cloud_file",
                "path": f"{BASE}/gold/{name}",
                "dest": f"gold-{name}",
            },
            "options": options,
        },
    }


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """The generated documents in a download cache, under the URLs the tasks name."""
    if not OSWORLD_PY.exists():
        pytest.fail(f"{OSWORLD_PY} is missing: `make setup` builds it (scripts/setup-osworld.sh)")
    tmp = tmp_path_factory.mktemp("osworld-office")
    store = Cache(tmp / "cache")
    for variant in ("start", "answer"):
        (tmp / variant).mkdir()
        subprocess.run([str(OSWORLD_PY), "-c", GENERATE, str(tmp / variant), variant], check=True)
        names = [name for name, *_ in APPS.values()]
        for ext in {Path(n).suffix[1:] for n in names}:
            soffice(
                tmp / "saved" / variant, ext, *(tmp / variant / n for n in names if n.endswith(ext))
            )
        for name in names:
            url = f"{BASE}/{name}" if variant == "start" else f"{BASE}/gold/{name}"
            store.put(url, (tmp / "saved" / variant / name).read_bytes())
    return store


def osworld_scores(jobs: list[dict], tmp: Path) -> list[float]:
    """OSWorld's own metric functions on each job's two files (``osworld_metrics.py``)."""
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    done = subprocess.run(
        [str(OSWORLD_PY), str(RUNNER), "score", str(tmp / "jobs.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [r["score"] for r in json.loads(done.stdout)]


@pytest.mark.parametrize("app", list(APPS))
def test_an_osworld_office_task_plays_and_scores_as_osworld_would(env, cache, tmp_path, app):
    name, func, options, _, solution = APPS[app]
    conv = osworld.convert(task_json(app), cache=cache)
    assert conv.task is not None, conv.reasons
    task = conv.task
    assert task.setup["apps"] == [[app, f"{HOME}/Desktop/{name}"]]
    gold = tmp_path / f"gold-{name}"
    gold.write_bytes(cache.read(f"{BASE}/gold/{name}"))
    ours, jobs = [], []
    for who, actions in (("noop", []), ("solution", solution)):
        run = play(env, task, actions)
        saved = tmp_path / who / name
        saved.parent.mkdir()
        shutil.copyfile(env.sandbox.home / "Desktop" / name, saved)
        ours.append(run.result)
        jobs.append(
            {"metric": func, "result": str(saved), "expected": str(gold), "options": options}
        )
    theirs = osworld_scores(jobs, tmp_path)
    assert [r.score for r in ours] == theirs == [0.0, 1.0], (ours, theirs)


@pytest.mark.parametrize("app", list(APPS))
def test_an_edit_left_unsaved_scores_by_the_postconfig_save_as_on_osworld(
    env, cache, tmp_path, app
):
    """OSWorld's evaluator saves the document (its postconfig: focus the window, Ctrl+S) before
    scoring: an agent that edits and never saves passes there, and here through the task's
    ``before_scoring`` steps; without that postconfig the same agent fails (the file as it left
    it), and OSWorld's metric agrees on each saved file."""
    name, func, options, _, solution = APPS[app]
    unsaved = solution[: -len(keys.save(name.rsplit(".", 1)[1]))]
    data = task_json(app)
    saving = osworld.convert(data, cache=cache).task
    data["evaluator"].pop("postconfig")
    plain = osworld.convert(data, cache=cache).task
    assert "before_scoring" in saving.setup and "before_scoring" not in plain.setup
    gold = tmp_path / f"gold-{name}"
    gold.write_bytes(cache.read(f"{BASE}/gold/{name}"))
    ours, jobs, runs = [], [], []
    for who, task in (("postconfig", saving), ("none", plain)):
        run = play(env, task, unsaved)
        saved = tmp_path / who / name
        saved.parent.mkdir()
        shutil.copyfile(env.sandbox.home / "Desktop" / name, saved)
        ours.append(run.result)
        runs.append(run)
        jobs.append(
            {"metric": func, "result": str(saved), "expected": str(gold), "options": options}
        )
    theirs = osworld_scores(jobs, tmp_path)
    assert [r.score for r in ours] == theirs == [1.0, 0.0], (ours, theirs)
    assert not any(c.kind == "before_scoring" for c in ours[0].checks), ours[0].checks
    assert runs[0].actions == runs[1].actions  # the save is the task's, not the agent's
