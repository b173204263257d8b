"""OSWorld's office domains in the loader: what converts from the shared examples (with a cache
that holds every file), the config steps and evaluators those domains use, and the reasons for
the rest. The tasks played on a real LibreOffice session are in ``test_osworld_office_play.py``."""

import base64
import copy
import json

import pytest

from palaestra.envs.computer import osworld
from palaestra.envs.computer import osworld_office as office
from palaestra.envs.computer.actions import COMPUTER_ACTIONS
from palaestra.envs.computer.before_scoring import BeforeScoring
from palaestra.envs.computer.osworld_cache import Cache, task_urls


class Holding(Cache):
    """A cache that holds every URL (its bytes name the URL): what a filled cache looks like."""

    def read(self, url):
        return b"bytes of " + url.encode()


def shared(domain):
    folder = osworld.default_dir(domain)
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


@pytest.mark.parametrize(
    ("domain", "converted"),
    [("libreoffice_calc", 29), ("libreoffice_writer", 5), ("libreoffice_impress", 35)],
)
def test_what_converts_from_the_shared_office_examples(domain, converted):
    convs = [osworld.convert(t, cache=Holding("/nonexistent")) for t in shared(domain).values()]
    assert sum(c.task is not None for c in convs) == converted
    for c in convs:
        assert c.task is not None or c.reasons, c.task_id  # each one that does not says why
        assert not c.needs  # the cache held every file
    kinds = {
        check["kind"]
        for c in convs
        if c.task is not None and "checks" in c.task.verifier
        for check in c.task.verifier["checks"]
    }
    assert kinds <= {"compare_table", "compare_docx_files", "compare_pptx_files", "agent_status"}


def test_a_calc_task_becomes_its_document_its_app_and_the_gold_comparison():
    data = shared("libreoffice_calc")["035f41ba-6653-43ab-aa63-c86d449d62e5"]
    task = osworld.convert(data, cache=Holding("/x")).task
    doc = "/home/user/IncomeStatement2.xlsx"
    url = data["config"][0]["parameters"]["files"][0]["url"]
    assert task.setup.pop("before_scoring")  # its postconfig's save (tested below)
    assert task.setup == {
        "binary": {doc: base64.b64encode(b"bytes of " + url.encode()).decode()},
        "apps": [["calc", doc]],
    }
    (check,) = task.verifier["checks"]
    assert check["kind"] == "compare_table" and check["path"] == doc
    gold = base64.b64decode(check["expected"]["base64"])
    assert gold == b"bytes of " + data["evaluator"]["expected"]["path"].encode()
    assert check["options"] == data["evaluator"]["options"]  # OSWorld's rules, verbatim
    assert task.public.domain == "libreoffice_calc" and "oracle" not in task.agent_view()
    assert "expected" not in json.dumps(task.agent_view())  # the gold stays private


def test_office_steps_launch_relative_paths_and_pyautogui():
    impress = shared("libreoffice_impress")
    setup = {}
    command = {"command": ["libreoffice", "--impress"]}  # as in task 2cd43775
    assert office.launch({"parameters": command}, office.Files(Holding("/x")), setup) == []
    assert setup == {"apps": [["impress"]]}
    # a relative download path is the home's, as on OSWorld's VM
    data = copy.deepcopy(impress["04578141-1d42-4146-b9cf-6fab4ce5fd74"])
    data["config"][0]["parameters"]["files"][0]["path"] = "Desktop/45_2.pptx"
    task = osworld.convert(data, cache=Holding("/x")).task
    assert list(task.setup["binary"]) == ["/home/user/Desktop/45_2.pptx"]
    # a pyautogui setup step after the document opens becomes GUI actions, scaled to our screen
    clicked = osworld.convert(impress["a669ef01-ded5-4099-9ea9-25e99b569840"], cache=Holding("/x"))
    assert clicked.task.setup["apps"] == [["impress", "/home/user/Desktop/Writing-Outlines.pptx"]]
    assert clicked.task.setup["gui"][0] == {"name": "click", "args": {"x": 512, "y": 384}}


def test_what_does_not_convert_is_named():
    calc = shared("libreoffice_calc")
    why = {
        tid: "; ".join(osworld.convert(t, cache=Holding("/x")).reasons) for tid, t in calc.items()
    }
    # the CSV export the evaluator makes before scoring, and its two-file comparison
    assert "does more than save" in why["a01fbce3-2793-461f-ab86-43680ccbae25"]
    assert "multi" in why["a01fbce3-2793-461f-ab86-43680ccbae25"]
    assert "'check_pdf_pages' is not implemented" in "; ".join(why.values())
    data = copy.deepcopy(calc["01b269ae-2111-4a07-81fd-3fcd711993b0"])
    data["evaluator"]["result"]["path"] = "/etc/passwd"
    assert "outside the home" in osworld.convert(data, cache=Holding("/x")).reasons[0]
    data = copy.deepcopy(calc["01b269ae-2111-4a07-81fd-3fcd711993b0"])
    data["config"][1]["parameters"]["path"] = "/home/user/notes.txt"
    assert "not an office document" in osworld.convert(data, cache=Holding("/x")).reasons[0]
    data["config"] = [{"type": "launch", "parameters": {"command": ["google-chrome"]}}]
    assert "not an office app" in osworld.convert(data, cache=Holding("/x")).reasons[0]


def test_several_metrics_are_all_or_any_by_conj_and_need_every_file():
    data = copy.deepcopy(shared("libreoffice_calc")["01b269ae-2111-4a07-81fd-3fcd711993b0"])
    ev = data["evaluator"]
    ev["func"] = ["compare_table", "compare_table"]
    ev["result"] = [ev["result"], ev["result"]]
    ev["expected"] = [ev["expected"], {**ev["expected"], "path": "https://example.org/other"}]
    ev["options"] = [ev["options"], {}]
    ev["conj"] = "or"
    task = osworld.convert(data, cache=Holding("/x")).task
    assert task.verifier["kind"] == "any" and len(task.verifier["checks"]) == 2
    assert task.verifier["checks"][1]["options"] == {}

    class Lacking(Holding):
        def read(self, url):
            return None if "other" in url else super().read(url)

    conv = osworld.convert(data, cache=Lacking("/x"))
    assert conv.task is None and conv.needs == ["https://example.org/other"]
    assert conv.needs == [u for u in task_urls(data) if "other" in u]


@pytest.mark.parametrize(
    ("domain", "saving"),
    [("libreoffice_calc", 28), ("libreoffice_writer", 4), ("libreoffice_impress", 34)],
)
def test_the_postconfig_save_becomes_the_tasks_steps_before_scoring(domain, saving):
    convs = [osworld.convert(t, cache=Holding("/x")) for t in shared(domain).values()]
    tasks = [c.task for c in convs if c.task is not None]
    steps = [t.setup["before_scoring"] for t in tasks if "before_scoring" in t.setup]
    assert len(steps) == saving  # every converted task whose evaluator saves first
    for before in steps:
        BeforeScoring(before, COMPUTER_ACTIONS)  # what the env accepts at reset
        window = before[0]["activate_window"]  # the document's window first, as OSWorld does
        assert window["strict"] and " - LibreOffice " in window["title"]
        save = before.index({"name": "key", "args": {"combo": "ctrl+s"}})
        # LibreOffice's format question answered when it asks, then back to the document
        answer = before[save + 1 : save + 1 + len(office.KEEP_FORMAT)]
        assert answer == office.KEEP_FORMAT and before[save + 1 + len(answer)] == before[0]
        assert all(s.get("args", {}).get("seconds", 0) <= office.MAX_WAIT for s in before)


def test_a_postconfig_that_re_saves_the_gold_reads_the_gold_from_the_cache():
    data = shared("libreoffice_calc")["4e6fcf72-daf3-439f-a232-c434ce416af6"]
    download = next(s for s in data["evaluator"]["postconfig"] if s["type"] == "download")
    url = download["parameters"]["files"][0]["url"]
    assert url in task_urls(data)  # `palaestra osworld cache` fetches it
    task = osworld.convert(data, cache=Holding("/x")).task
    (check,) = task.verifier["checks"]
    assert base64.b64decode(check["expected"]["base64"]) == b"bytes of " + url.encode()
    before = task.setup["before_scoring"]
    titles = [s["activate_window"]["title"] for s in before if "activate_window" in s]
    assert "Employee_Age_By_Birthday_gold.xlsx - LibreOffice Calc" not in titles  # not replayed
    assert "Employee_Age_By_Birthday.xlsx - LibreOffice Calc" in titles
    assert data["evaluator"]["expected"]["type"] == "vm_file"  # the example is left as it was
    # a postconfig that opens some other file is not a re-save of the gold
    other = copy.deepcopy(data)
    opened = next(s for s in other["evaluator"]["postconfig"] if s["type"] == "open")
    opened["parameters"]["path"] = "/home/user/elsewhere.xlsx"
    reasons = "; ".join(osworld.convert(other, cache=Holding("/x")).reasons)
    assert "does more than save" in reasons and "'vm_file' is not supported" in reasons


def test_a_postconfig_that_is_not_plain_pyautogui_is_a_reason():
    data = copy.deepcopy(shared("libreoffice_calc")["01b269ae-2111-4a07-81fd-3fcd711993b0"])
    script = next(s for s in data["evaluator"]["postconfig"] if s["type"] == "execute")
    script["parameters"]["command"][2] = "import os; os.system('rm -rf ~')"
    conv = osworld.convert(data, cache=Holding("/x"))
    assert conv.task is None and "postconfig script is not plain pyautogui" in conv.reasons[0]
    data["evaluator"].pop("postconfig")  # no postconfig: scored as the agent left the file
    assert "before_scoring" not in osworld.convert(data, cache=Holding("/x")).task.setup
