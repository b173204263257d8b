"""LibreOffice on the desktop, for real: a task's document (``setup.binary``) opens in Calc,
Writer or Impress at reset; the accessibility tree names Calc's cells and menus (in process and
through the gateway); keys typed and saved with Ctrl+S reach the file; a crashed soffice fails
only its own session's reset, with its exit status, and the next reset recovers; the warmed
profile keeps our settings (macros off, no tips)."""

from __future__ import annotations

import base64
import io
import json
import re
import time
import xml.etree.ElementTree as ET
import zipfile

import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.computer import a11y, libreoffice
from palaestra.envs.computer.env import DEFAULT_PARTS, PARTS, ComputerEnv
from palaestra.envs.computer.office import keys
from palaestra.errors import EnvCrashed, InvalidRequest
from palaestra.tasks import Task

pytestmark = pytest.mark.timeout(300)
ST = f"{{{a11y.NS['st']}}}"

SHEET = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{}
</sheetData></worksheet>"""


def xlsx(rows: list[list[object]]) -> bytes:
    """A minimal Excel workbook (one sheet, inline strings and numbers), made by hand."""

    def cell(ref: str, v: object) -> str:
        if isinstance(v, int | float):
            return f'<c r="{ref}"><v>{v}</v></c>'
        return f'<c r="{ref}" t="inlineStr"><is><t>{v}</t></is></c>'

    data = "".join(
        f'<row r="{i}">'
        + "".join(cell(f"{chr(65 + j)}{i}", v) for j, v in enumerate(row))
        + "</row>"
        for i, row in enumerate(rows, 1)
    )
    ns = "http://schemas.openxmlformats.org"
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="'
        f'{ns}/package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
        '"application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName='
        '"/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{ns}/package/2006/'
        f'relationships"><Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/'
        'officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{ns}/spreadsheetml/2006/'
        f'main" xmlns:r="{ns}/officeDocument/2006/relationships"><sheets><sheet name="Budget" '
        'sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships xmlns="{ns}/'
        f'package/2006/relationships"><Relationship Id="rId1" Type="{ns}/officeDocument/2006/'
        'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": SHEET.format(data),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return buf.getvalue()


def odf(kind: str, body: str) -> bytes:
    """A minimal ODF document (``text`` or ``presentation``) with ``body`` as its content."""
    mime = f"application/vnd.oasis.opendocument.{kind}"
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office='
        '"urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:'
        'opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:'
        'drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
        f'office:version="1.3"><office:body><office:{kind}>{body}</office:{kind}>'
        "</office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:'
        'names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry '
        f'manifest:full-path="/" manifest:media-type="{mime}"/><manifest:file-entry '
        'manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", mime)  # first and stored, as ODF asks
        z.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
        z.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


BUDGET = xlsx([["Item", "Cost"], ["Pens", 3], ["Paper", 7], ["Total"]])
MINUTES = odf("text", "<text:h>Minutes</text:h><text:p>First line.</text:p>")
DECK = odf(
    "presentation",
    '<draw:page draw:name="p1"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" '
    'svg:height="3cm"><draw:text-box><text:p>Quarterly review</text:p></draw:text-box>'
    "</draw:frame></draw:page>",
)


def office_task(app: str, name: str, data: bytes, **setup: object) -> Task:
    return Task(
        id=f"test/office-{app}",
        family="computer",
        env="palaestra/computer-v0",
        instruction="Work on the document.",
        setup={
            "binary": {name: base64.b64encode(data).decode()},
            "apps": [[app, f"/home/user/{name}"]],
            **setup,
        },
    )


@pytest.fixture
def tree_env(env):
    env.set_parts(PARTS)
    yield env
    env.set_parts(DEFAULT_PARTS)


def titles(obs) -> list[str]:
    return [w["title"] for w in json.loads(obs["windows"])]


def cells_of(env, obs, want: str, tries: int = 10) -> tuple[ET.Element, dict[str, str]]:
    """The tree and its cells once cell ``want`` shows its text (a read past its deadline on
    a loaded machine is partial: the cells and their texts are its deepest answers)."""
    for _ in range(tries):
        root = ET.fromstring(obs["a11y_tree"])
        cells = {c.get("name", ""): (c.text or "") for c in root.iter("table-cell")}
        if cells.get(want):
            return root, cells
        obs, *_ = env.step("wait(0.2)")
    raise AssertionError(obs["a11y_tree"][:2000])


def test_a_spreadsheet_opens_with_its_cells_and_menus_in_the_tree(tree_env):
    obs, _ = tree_env.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
    assert titles(obs) == ["budget.xlsx - LibreOffice Calc"]
    shot = obs["screenshot"]
    assert len({tuple(p) for p in shot[::7, ::7].reshape(-1, 3)}) > 100  # painted, not blank
    root, cells = cells_of(tree_env, obs, "A2")
    assert cells["A2"] == "Pens" and cells["B3"] == "7" and cells["A4"] == "Total"
    # only what is on screen of a 16384 x 1048576 sheet: a page of cells, not a row of 1024
    assert 50 < len(cells) <= a11y.MAX_WIDTH and "A20" in cells and "AMJ1" not in cells
    menus = {m.get("name") for m in root.iter("menu") if m.get(ST + "showing") == "true"}
    assert {"File", "Edit", "Sheet", "Data"} <= menus
    assert any(i.get("name") == "Sort..." for i in root.iter("menu-item"))


def test_a_value_typed_and_saved_with_ctrl_s_reaches_the_file(env):
    obs, _ = env.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
    for action in [*keys.type_cells("B4", [["=SUM(B2:B3)"]]), *keys.save("xlsx")]:
        obs, *_ = env.step(action)
        assert not obs["last_action_error"], (action, obs["last_action_error"])
    assert titles(obs) == ["budget.xlsx - LibreOffice Calc"]  # the format question answered
    with zipfile.ZipFile(env.sandbox.home / "budget.xlsx") as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
    assert re.search(r'<c r="B4"[^>]*><f[^>]*>SUM\(B2:B3\)</f><v>10</v>', sheet), sheet


def test_writer_and_impress_open_their_documents(env):
    obs, _ = env.reset(options={"task": office_task("writer", "minutes.odt", MINUTES)})
    assert titles(obs) == ["minutes.odt - LibreOffice Writer"]
    obs, _ = env.reset(options={"task": office_task("impress", "deck.odp", DECK)})
    assert titles(obs) == ["deck.odp - LibreOffice Impress"]


def test_a_crashed_soffice_fails_only_its_session_and_the_next_reset_recovers(env):
    env.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
    other = ComputerEnv()
    try:
        # soffice.bin dies of a segfault while it starts (a background killer from setup)
        killer = "(for i in $(seq 500); do pkill -SEGV -x soffice.bin && break; sleep 0.02; done) &"
        crash = office_task("calc", "budget.xlsx", BUDGET, commands=[f"{killer} >/dev/null 2>&1"])
        with pytest.raises(EnvCrashed, match=r"the app 'calc' exited with \d+ \(SIGSEGV\)"):
            other.reset(options={"task": crash})
        # the other session's LibreOffice is untouched and answers
        obs, *_ = env.step(keys.go_to_cell("A3")[0])
        assert not obs["last_action_error"]
        assert any(p["exe"].endswith("/soffice.bin") for p in env.sandbox.processes())
        obs, _ = other.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
        assert titles(obs) == ["budget.xlsx - LibreOffice Calc"]
    finally:
        other.close()


def test_a_document_that_is_not_base64_is_a_clear_setup_error(env):
    task = office_task("calc", "budget.xlsx", BUDGET)
    task.setup["binary"] = {"budget.xlsx": "not base64!"}
    with pytest.raises(InvalidRequest, match=r"setup binary 'budget\.xlsx' is not base64") as exc:
        env.reset(options={"task": task})
    assert exc.value.fields == {"field": "task.setup"}


def test_the_profile_is_warmed_once_and_keeps_our_settings(env):
    env.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
    warm = libreoffice.warmed()
    assert warm is not None
    user = env.sandbox.template / libreoffice.PROFILE / "4/user"
    # LibreOffice's own first-start work is in it (its extension registry), not only our file
    assert (user / "extensions").is_dir() and (warm / "4/user/extensions").is_dir()
    xcu = (user / "registrymodifications.xcu").read_text()
    for name, value in [("DisableMacrosExecution", "true"), ("MacroSecurityLevel", "3")]:
        assert re.search(rf'"{name}"[^>]*><value>{value}</value>', xcu), name
    assert re.search(r'"ShowTipOfTheDay"[^>]*><value>false</value>', xcu)
    env.reset(options={"task": office_task("calc", "budget.xlsx", BUDGET)})
    assert libreoffice.warmed() is warm  # once per worker


def test_an_agent_sees_calcs_tree_through_the_gateway(gateway):
    """An agent starts Calc from the shell on a plain desktop task and reads its tree."""
    remote = RemoteEnv(
        task="computer-basic/log-start-end",
        base_url=gateway,
        transport="ws",
        options={"observe": ["windows", "last_output", "a11y_tree"]},
    )
    try:
        remote.reset(seed=0)
        make = (
            "import openpyxl; wb = openpyxl.Workbook(); ws = wb.active; "
            "ws.append(['Item', 'Cost']); ws.append(['Pens', 3]); wb.save('/home/user/b.xlsx')"
        )
        obs, *_ = remote.step({"name": "run_python", "args": {"code": make}})
        assert json.loads(obs["last_output"])["exit_code"] == 0, obs["last_output"]
        remote.step("run_shell('soffice --calc ~/b.xlsx >/dev/null 2>&1 &')")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            obs, *_ = remote.step("wait(0.5)")
            root = ET.fromstring(obs["a11y_tree"])
            cells = {c.get("name"): c.text for c in root.iter("table-cell")}
            # The window manager learns the document's title a moment after the tree shows
            # the sheet (under load, up to a second later), so wait for both.
            if cells.get("A2") == "Pens" and "b.xlsx - LibreOffice Calc" in titles(obs):
                break
        assert cells.get("A2") == "Pens" and cells.get("B2") == "3", obs["a11y_tree"][:3000]
        assert "Data" in {m.get("name") for m in root.iter("menu")}
        assert "b.xlsx - LibreOffice Calc" in titles(obs)
    finally:
        remote.close()
