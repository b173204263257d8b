"""The replica runtime on real Chromium: the phone installs the replica set for a replica task
(and the five domains otherwise), rows a task plants are there at every reset (a bad plant is a
clear 422 naming ``task.setup.plant`` and leaves other sessions alone), row operations reached
by a long press (a context menu) or a swipe (a revealed button) on the phone while the desktop
layout keeps the detail page's button, and the plan ops ``hold``, ``swipe``, ``ask`` and
``open_app`` in the phone's and the browser's plan policies.

Two small replica specs written here stand for the replica set (the real ones change while
their writers work): the phone is told they are the replicas, and installs them."""

import json
import re
import sqlite3
import urllib.request

import pytest
import yaml

from palaestra.envs.mobile import embedded
from palaestra.envs.mobile.env import MobileEnv
from palaestra.envs.mobile.policies import MobilePlanPolicy
from palaestra.errors import InvalidRequest
from palaestra.synth_apps import data
from palaestra.synth_apps.app import APP_COOKIE, host
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.variants import make_variant
from palaestra.tasks import Task

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

NOTES = {
    "name": "rr_notes",
    "title": "Pocket Notes",
    "entities": {
        "note": {
            "label": "Note",
            "display": "title",
            "fields": {
                "title": {"type": "str", "unique": True, "values": ["Groceries", "Ideas", "Trip"]},
                "body": {"type": "text", "required": False},
                "archived": {"type": "bool", "default": False},
                "words": {"type": "int", "default": 0},
                # a filter named "type": the form's .type is that field (no crash, no mix-up)
                "type": {"type": "enum", "choices": ["text", "todo"]},
            },
            "seed": {"count": 3},
        }
    },
    "pages": [{"entity": "note", "label": "Notes", "filters": ["type"]}],
    "operations": {
        "delete_note": {
            "label": "Delete note",
            "entity": "note",
            "trigger": "long_press",
            "effects": [{"delete": "record"}],
        },
        "archive_note": {
            "label": "Archive",
            "entity": "note",
            "trigger": "swipe",
            "when": "not record.archived",
            "effects": [{"update": "record", "values": {"archived": "True"}}],
        },
        "edit_note": {
            "label": "Edit note",
            "entity": "note",
            "steps": [{"title": "Text", "inputs": {"body": {"type": "text"}}}],
            "effects": [{"update": "record", "values": {"body": "input.body"}}],
        },
    },
}
SMS = {
    "name": "rr_sms",
    "title": "Pocket SMS",
    "replica_of": {"app": "Pocket SMS", "package": "com.example.pocketsms"},
    "entities": {
        "message": {
            "label": "Message",
            "display": "body",
            "fields": {
                "body": {"type": "str"},
                "sender": {"type": "str", "faker": "name"},
                "sent": {"type": "datetime"},
            },
            "seed": {"count": 2},
        }
    },
    "pages": [{"entity": "message", "label": "Messages"}],
}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    """The two specs as files, which the phone takes for the replica set."""
    folder = tmp_path_factory.mktemp("replicas")
    paths = []
    for spec in (NOTES, SMS):
        path = folder / f"{spec['name']}.yaml"
        path.write_text(yaml.safe_dump(spec))
        paths.append(str(path))
    patch = pytest.MonkeyPatch()
    patch.setattr(embedded, "replica_names", lambda: list(paths))
    yield paths
    patch.undo()


@pytest.fixture(scope="module")
def phone(replicas):
    env = MobileEnv()
    yield env
    env.close()


def task(app, **setup):
    return Task(
        id="replica-runtime",
        family="mobile",
        env="palaestra/mobile-v0",
        instruction="Tidy the notes.",
        setup={"app": app, **setup},
        max_steps=40,
    )


NOTES_PAGE = [{"op": "click", "name": "Notes"}]


def elements(obs):
    return json.loads(obs["ui_elements"])


def rows(db, sql):
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def play(env, obs, plan, app="Pocket Notes", limit=30):
    """Run a fixed plan on the phone from ``obs`` (after opening ``app``); the last observation."""
    policy = MobilePlanPolicy(plan, app)
    policy.reset(None)
    for _ in range(limit):
        action = policy.act(obs, {})
        if action.get("action_type") == "status":
            return obs
        obs, *_ = env.step(action)
        assert not obs["last_action_error"], obs["last_action_error"]
    raise AssertionError("the plan did not finish")


def test_a_replica_task_installs_the_replica_set_and_a_domain_task_the_domains(phone, replicas):
    obs, _ = phone.reset(options={"task": task(replicas[0])})
    assert phone.phone.apps() == ["Pocket Notes", "Pocket SMS"]  # spec titles, a fixed order
    shown = {e["text"] for e in elements(obs)}
    assert {"Pocket Notes", "Pocket SMS"} <= shown and "RailWay" not in shown
    state = phone.state_probe().read()
    assert set(state["app_dbs"]) == {"rr_notes", "rr_sms"} and state["foreground_app"] == "launcher"
    obs, *_ = phone.step({"action_type": "open_app", "app_name": "Pocket SMS"})
    assert phone.state_probe().read()["foreground_app"] == "rr_sms"  # the spec's name
    assert {e["package_name"] for e in elements(obs)} >= {"com.example.pocketsms"}
    obs, _ = phone.reset(options={"task": task("calendar")})
    assert phone.phone.apps() == ["DayPlanner", "Lakeside Bank", "MailHub", "Cartwheel", "RailWay"]
    assert "Pocket Notes" not in {e["text"] for e in elements(obs)}


def test_planted_rows_are_there_at_every_reset_in_both_apps(phone, replicas):
    plant = [
        {"entity": "note", "values": {"title": "Receipt 42", "body": "Paid 12.50"}},
        {
            "app": "rr_sms",
            "entity": "message",
            "values": {"body": "See you", "sent": "2026-10-15 08:54"},
        },
    ]
    for _ in range(2):  # a second reset restores, then plants again: one row each, not two
        obs, _ = phone.reset(options={"task": task(replicas[0], plant=plant)})
        dbs = phone.state_probe().read()["app_dbs"]
        assert rows(dbs["rr_notes"], "SELECT body FROM note WHERE title = 'Receipt 42'") == [
            ("Paid 12.50",)
        ]
        assert rows(dbs["rr_sms"], "SELECT sent FROM message WHERE body = 'See you'") == [
            ("2026-10-15 08:54",)
        ]
        assert rows(dbs["rr_notes"], "SELECT count(*) FROM note") == [(4,)]
    obs = play(phone, obs, [*NOTES_PAGE, {"op": "open", "name": "Receipt 42", "next": "Next"}])
    assert "Note Receipt 42" in {e["text"] for e in elements(obs)}  # the agent reaches it


@pytest.mark.parametrize(
    ("plant", "place"),
    [
        ([{"app": "markor", "entity": "note", "values": {}}], "task.setup.plant[0].app"),
        ([{"entity": "notes", "values": {}}], "task.setup.plant[0].entity"),
        ([{"entity": "note", "values": {"titel": "x"}}], "task.setup.plant[0].values.titel"),
        ([{"entity": "note", "values": {"title": ["x"]}}], "task.setup.plant[0].values.title"),
        ([{"entity": "note", "values": {"title": "x"}}] * 301, "task.setup.plant: 301 rows"),
        ("note", "task.setup.plant: must be a list"),
    ],
)
def test_a_bad_plant_is_a_clear_error(replicas, plant, place):
    apps = {spec_for(path).name: spec_for(path) for path in replicas}
    with pytest.raises(InvalidRequest, match=re.escape(place)):
        data.check_plant(plant, apps, "rr_notes")


def test_a_bad_plant_fails_its_reset_and_leaves_another_session_untouched(phone, replicas):
    good = [{"entity": "note", "values": {"title": "Kept"}}]
    obs, _ = phone.reset(options={"task": task(replicas[0], plant=good)})
    other = MobileEnv()
    try:
        bad_field = [{"entity": "note", "values": {"colour": "red"}}]
        with pytest.raises(InvalidRequest, match=r"task\.setup\.plant\[0\]\.values\.colour"):
            other.reset(options={"task": task(replicas[0], plant=bad_field)})
        # a value that does not fit its field is refused when it is stored, naming the row
        bad = [
            {"entity": "note", "values": {"title": "Oops"}},
            {"entity": "note", "values": {"title": "Oops 2", "words": "many"}},
        ]
        with pytest.raises(InvalidRequest, match=r"task\.setup\.plant\[1\]\.values"):
            other.reset(options={"task": task(replicas[0], plant=bad)})
    finally:
        other.close()
    db = phone.state_probe().read()["app_dbs"]["rr_notes"]
    assert rows(db, "SELECT count(*) FROM note WHERE title = 'Kept'") == [(1,)]
    assert rows(db, "SELECT count(*) FROM note WHERE title = 'Oops'") == [(0,)]
    obs = play(phone, obs, [*NOTES_PAGE, {"op": "open", "name": "Kept", "next": "Next"}])
    assert "Note Kept" in {e["text"] for e in elements(obs)}  # and it still works


def test_a_long_press_opens_the_rows_context_menu(phone, replicas):
    obs, _ = phone.reset(options={"task": task(replicas[0])})
    db = phone.state_probe().read()["app_db"]
    (title,) = rows(db, "SELECT title FROM note ORDER BY id LIMIT 1")[0]
    obs = play(phone, obs, NOTES_PAGE)
    row = next(e for e in elements(obs) if e["text"] == title)
    assert row["is_long_clickable"] and row["is_clickable"]
    assert "Delete note" not in {e["text"] for e in elements(obs)}  # the menu is closed
    obs, *_ = phone.step({"action_type": "long_press", "index": row["index"]})
    assert "Delete note" in {e["text"] for e in elements(obs)}
    assert not [e for e in elements(obs) if e["text"] == title and e["is_clickable"]]  # covered
    assert obs["foreground_app"] == "Pocket Notes"
    assert "/list/0" in phone.phone._page.url  # still the list: the press opened no page
    obs, *_ = phone.step({"action_type": "navigate_back"})  # back closes the menu first
    assert "Delete note" not in {e["text"] for e in elements(obs)}
    assert any(e["text"] == title for e in elements(obs))
    play(
        phone,
        obs,
        [
            {"op": "hold", "name": title, "next": "Next page"},
            {"op": "click", "role": "button", "name": "Delete note"},
            {"op": "click", "role": "button", "name": "Confirm"},
        ],
        app=None,
    )
    assert rows(db, f"SELECT count(*) FROM note WHERE title = '{title}'") == [(0,)]


def test_a_tap_opens_the_row_whose_page_lacks_the_gesture_operations(phone, replicas):
    obs, _ = phone.reset(options={"task": task(replicas[0])})
    obs = play(phone, obs, [*NOTES_PAGE, {"op": "click", "name": "Trip"}])
    shown = {e["text"] for e in elements(obs)}
    assert "Edit note" in shown  # a button operation stays on the detail page
    assert not {"Delete note", "Archive"} & shown


def test_a_swipe_left_reveals_the_rows_action(phone, replicas):
    obs, _ = phone.reset(options={"task": task(replicas[0])})
    db = phone.state_probe().read()["app_db"]
    obs = play(phone, obs, NOTES_PAGE)
    assert "Archive" not in {e["text"] for e in elements(obs)}  # hidden until swiped
    play(
        phone,
        obs,
        [
            {"op": "swipe", "name": "Ideas", "next": "Next page"},
            {"op": "click", "role": "button", "name": "Archive"},
            {"op": "click", "role": "button", "name": "Confirm"},
        ],
        app=None,
    )
    assert rows(db, "SELECT title FROM note WHERE archived = 1") == [("Ideas",)]
    assert rows(db, "SELECT count(*) FROM note") == [(3,)]  # the tap did not delete anything


def test_ask_and_open_app_mid_plan(phone, replicas):
    obs, _ = phone.reset(options={"task": task(replicas[0], user={"Note title": "Groceries"})})
    obs = play(
        phone,
        obs,
        [
            {"op": "ask", "question": "What is the title of the note to tidy?"},
            {"op": "open_app", "name": "Pocket SMS"},
            {"op": "click", "name": "Messages"},
        ],
    )
    assert obs["foreground_app"] == "Pocket SMS"
    chat = obs["chat"].splitlines()
    assert any("What is the title of the note to tidy?" in line for line in chat)
    assert any("Groceries" in line for line in chat[1:])  # the scenario's user answered


def fetch(url, key):
    request = urllib.request.Request(url, headers={"Cookie": f"{APP_COOKIE}={key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def test_the_desktop_layout_keeps_every_operation_on_the_detail_page(replicas):
    spec = spec_for(replicas[0])
    for layout, on_detail, on_list in (
        ("desktop", {"Delete note", "Archive", "Edit note"}, set()),
        ("mobile", {"Edit note"}, {"Delete note", "Archive"}),
    ):
        session = host().open(spec, make_variant(spec, 0, layout), 0)
        try:
            base = host().url(session)
            detail = fetch(f"{base}view/note/1", session.key)
            listing = fetch(f"{base}list/0", session.key)
        finally:
            host().close(session.token)
        for label in ("Delete note", "Archive", "Edit note"):
            assert (f">{label}</a>" in detail) == (label in on_detail), (layout, label)
            assert (f">{label}</a>" in listing) == (label in on_list), (layout, label)


def test_the_browser_plants_rows_and_plays_hold_in_both_layouts(replicas):
    from palaestra.envs.web.env import WebEnv
    from palaestra.envs.web.policies.plan import PlanPolicy
    from palaestra.policies import run_episode

    plant = [{"entity": "note", "values": {"title": "Receipt 7", "body": "Paid"}}]
    web = Task(
        id="replica-runtime-web",
        family="web",
        env="palaestra/web-v0",
        instruction="Delete the note Receipt 7.",
        setup={"driver": "synth", "app": replicas[0], "plant": plant},
        max_steps=20,
    )
    plan = [
        {"op": "click", "role": "link", "name": "Notes"},
        {"op": "hold", "name": "Receipt 7", "next": "Next page"},
        {"op": "click", "role": "button", "name": "Delete note"},
        {"op": "click", "role": "button", "name": "Confirm"},
        {"op": "done"},
    ]
    env = WebEnv(observe=("axtree", "url", "title", "goal", "chat"))
    try:
        # the desktop layout: the row's page has the button; the mobile layout in a browser: a
        # right click opens the row's context menu (the detail page has no Delete there)
        for layout in ("desktop", "mobile"):
            task = web.model_copy(update={"setup": {**web.setup, "layout": layout}})
            run_episode(env, PlanPolicy(plan), task, strict=True)
            db = env._drivers["synth"].session.db
            assert rows(db, "SELECT count(*) FROM note WHERE title = 'Receipt 7'") == [(0,)]
            assert rows(db, "SELECT count(*) FROM note") == [(3,)]  # planted, then deleted
        bad = web.model_copy(update={"setup": {**web.setup, "plant": [{"entity": "nope"}]}})
        with pytest.raises(InvalidRequest, match=re.escape("task.setup.plant[0].entity")):
            env.reset(options={"task": bad})
    finally:
        env.close()
