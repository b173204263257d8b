"""The replicas of Simple Calendar Pro, Tasks, Joplin and OpenTracks: every AndroidWorld template
grounds for seeds 0-2 (and its ask variant), and what each task expects is recomputed here in
plain Python from the seeded rows and the rows the task plants, the way AndroidWorld's own check
reads its database (the events of next week, the events gone from one day, the tasks due next
week, the minutes of a category this week, the to-dos of a folder). A template whose YAML answer
expression or plant drifts from its wording fails here. No browser."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Any

import pytest

from palaestra.synth_apps import data
from palaestra.synth_apps.generate import Generated, TaskGenerator
from palaestra.synth_apps.spec import load_spec

APPS = ["simple_calendar", "tasks", "joplin", "open_tracks"]
SPECS = {app: load_spec(app) for app in APPS}
TEMPLATES = [(t.name, t.ask is not None) for spec in SPECS.values() for t in spec.tasks]
TODAY = dt.date(2023, 10, 15)  # AndroidWorld's device date, a Sunday
NEXT_WEEK = (dt.date(2023, 10, 16), dt.date(2023, 10, 22))
THIS_WEEK = (dt.date(2023, 10, 9), TODAY)


def made(name: str, seed: int = 0, ask: bool = False) -> Generated:
    return TaskGenerator.for_template(name, seed, ask=ask, specs=SPECS)


def rows(g: Generated, entity: str) -> list[dict[str, Any]]:
    """The app's rows at the task's start: the seeded ones, then the planted ones (with the
    ids they get at reset), as the database stores them."""
    app = g.task.setup["app"]
    with sqlite3.connect(data.template(SPECS[app], g.task.setup.get("data_seed", 0))) as conn:
        conn.row_factory = sqlite3.Row
        out = [dict(r) for r in conn.execute(f"SELECT * FROM {entity} ORDER BY id")]
    for p in g.task.setup.get("plant", []):
        if p.get("app", app) == app and p["entity"] == entity:
            row = {
                k: data.to_db(SPECS[app].entities[entity].fields[k], v)
                for k, v in p["values"].items()
            }
            out.append({**row, "id": len(out) + 1})
    return out


def answer(g: Generated) -> Any:
    return next(c["value"] for c in g.task.verifier["checks"] if c["kind"] == "answer")


def day(value: str) -> dt.date:
    return dt.date.fromisoformat(value)


def test_the_four_apps_cover_their_thirty_three_templates_thirteen_with_an_ask_variant():
    names = [n for n, _ in TEMPLATES]
    assert len(names) == 33 and len(set(names)) == 33
    assert sum(1 for n in names if n.startswith("SimpleCalendar")) == 17
    assert sum(ask for _, ask in TEMPLATES) == 13


@pytest.mark.parametrize(("name", "ask"), TEMPLATES)
def test_every_template_grounds_for_three_seeds_and_its_ask_variant(name, ask):
    tasks = [made(name, seed).task for seed in range(3)]
    assert [t.id for t in tasks] == [f"{name}/{seed}" for seed in range(3)]
    assert all(t.instruction and "{" not in t.instruction for t in tasks)
    if ask:
        g = made(name, 0, ask=True)
        hidden = list(g.task.setup["user"].values())
        assert hidden and all(str(v) not in g.task.instruction for v in hidden)
        assert any(step["op"] == "ask" for step in g.task.oracle.data)


@pytest.mark.parametrize("seed", range(3))
def test_events_in_next_week_are_every_event_monday_to_sunday(seed):
    g = made("SimpleCalendarEventsInNextWeek", seed)
    lo, hi = NEXT_WEEK
    want = {r["title"] for r in rows(g, "event") if lo <= day(r["date"]) <= hi}
    assert len(want) >= 2 and set(answer(g)) == want


@pytest.mark.parametrize("seed", range(3))
def test_next_event_is_the_first_one_after_nine_today(seed):
    g = made("SimpleCalendarNextEvent", seed)
    now = dt.datetime(2023, 10, 15, 9, 0)
    starts = {
        r["title"]: dt.datetime.fromisoformat(f"{r['date']} {r['starts']}")
        for r in rows(g, "event")
    }
    first = min(s for s in starts.values() if s > now)
    assert set(answer(g)) == {t for t, s in starts.items() if s == first}


@pytest.mark.parametrize(
    "name", ["SimpleCalendarDeleteEvents", "SimpleCalendarDeleteEventsOnRelativeDay"]
)
def test_deleting_a_days_events_expects_every_event_of_that_day_gone(name):
    g = made(name, 0)
    planted = [p["values"] for p in g.task.setup["plant"]]
    date = planted[0]["date"]
    assert {p["date"] for p in planted} == {date}
    of_day = {r["id"] for r in rows(g, "event") if r["date"] == date}
    gone = {
        c["params"][0]
        for c in g.task.verifier["checks"]
        if re.fullmatch(r"event \d+ is gone", c.get("describe", ""))
    }
    assert gone == of_day and len(gone) == len(planted)
    if name.endswith("RelativeDay"):
        assert f"this {day(date):%A}" in g.task.instruction


@pytest.mark.parametrize(
    "name",
    [
        "SimpleCalendarAddOneEvent",
        "SimpleCalendarAddOneEventTomorrow",
        "SimpleCalendarAddOneEventInTwoWeeks",
    ],
)
def test_a_new_event_lasts_the_minutes_the_instruction_states(name):
    for seed in range(3):
        g = made(name, seed)
        checks = g.task.verifier["checks"]
        check = next(c for c in checks if c.get("describe") == "new event rows like this")
        new = dict(zip(re.findall(r"(\w+) IS \?", check["query"]), check["params"], strict=True))
        start, end = (dt.datetime.strptime(new[k], "%H:%M") for k in ("starts", "ends"))
        minutes = int((end - start).total_seconds() // 60)
        assert f"{minutes} min" in g.task.instruction and f"{start.hour}h" in g.task.instruction
        offset = {"SimpleCalendarAddOneEventTomorrow": 1, "SimpleCalendarAddOneEventInTwoWeeks": 14}
        if name in offset:
            assert day(new["date"]) == TODAY + dt.timedelta(days=offset[name])
        else:
            assert new["date"] in g.task.instruction


@pytest.mark.parametrize("seed", range(3))
def test_tasks_due_next_week_count_the_open_tasks_due_monday_to_sunday(seed):
    g = made("TasksDueNextWeek", seed)
    lo, hi = NEXT_WEEK
    want = sum(1 for r in rows(g, "task") if lo <= day(r["due"]) <= hi and not r["completed"])
    assert float(answer(g)) == want


@pytest.mark.parametrize("seed", range(3))
def test_high_priority_tasks_are_the_open_ones_marked_high(seed):
    g = made("TasksHighPriorityTasks", seed)
    tasks = rows(g, "task")
    assert not any(r["completed"] and r["priority"] == "High" for r in tasks)  # no ambiguity
    assert set(answer(g)) == {r["title"] for r in tasks if r["priority"] == "High"}


@pytest.mark.parametrize("seed", range(3))
def test_total_minutes_of_a_category_this_week(seed):
    g = made("SportsTrackerTotalDurationForCategoryThisWeek", seed)
    category = g.task.setup["plant"][0]["values"]["category"]
    assert category in g.task.instruction
    lo, hi = THIS_WEEK
    want = sum(
        r["total_time"]
        for r in rows(g, "activity")
        if r["category"] == category and lo <= day(r["date"]) <= hi
    )
    assert float(answer(g)) == want


@pytest.mark.parametrize("seed", range(3))
def test_longest_distance_this_week_is_in_meters_within_ten(seed):
    g = made("SportsTrackerLongestDistanceActivity", seed)
    category = g.task.setup["plant"][0]["values"]["category"]
    lo, hi = THIS_WEEK
    km = max(
        float(r["distance"])
        for r in rows(g, "activity")
        if r["category"] == category and lo <= day(r["date"]) <= hi
    )
    check = next(c for c in g.task.verifier["checks"] if c["kind"] == "answer")
    assert float(check["value"]) == round(km * 1000) and check["tolerance"] == 10


@pytest.mark.parametrize("seed", range(3))
def test_todo_count_is_every_todo_in_the_folder(seed):
    g = made("NotesTodoItemCount", seed)
    folder = g.task.setup["plant"][0]["values"]["notebook"]
    assert f"'{folder}'" in g.task.instruction
    want = sum(1 for r in rows(g, "note") if r["notebook"] == folder and r["is_todo"])
    assert float(answer(g)) == want


@pytest.mark.parametrize("seed", range(3))
def test_recipe_quantity_is_written_in_the_recipe_before_its_ingredient(seed):
    g = made("NotesRecipeIngredientCount", seed)
    note = g.task.setup["plant"][0]["values"]
    assert note["notebook"] == "Recipes" and f"'{note['title']}'" in g.task.instruction
    asked = [
        x.removeprefix(f"- {answer(g)} ")
        for x in note["body"].split("\n")
        if x.startswith(f"- {answer(g)} ")
    ]
    assert any(i in g.task.instruction for i in asked)
