"""Expression helpers the AndroidWorld replica templates use: date/time wording (pure) and
aggregates over an app's rows (answers of info tasks, rules). Each assertion pins a value a
template's wording or answer depends on."""

import datetime as dt
import sqlite3

import pytest

from palaestra.synth_apps import data
from palaestra.synth_apps.expr import (
    ExprError,
    add_minutes,
    ampm,
    evaluate,
    join,
    minutes,
    month_day,
    pluck,
    spoken_date,
    spoken_dates,
    strftime,
    week_start,
    weekday,
)
from palaestra.synth_apps.operations import db_functions
from palaestra.synth_apps.spec import load_spec

SUNDAY = dt.date(2023, 10, 15)  # AndroidWorld's device date


def test_weekday_week_start_and_month_day():
    assert weekday(SUNDAY) == "Sunday"
    assert weekday("2023-10-16") == "Monday"
    assert weekday(dt.datetime(2023, 10, 18, 9, 30)) == "Wednesday"
    assert week_start(SUNDAY) == dt.date(2023, 10, 9)
    assert week_start("2023-10-16") == dt.date(2023, 10, 16)
    assert month_day("2023-10-05") == "October 5"  # no zero padding
    assert month_day(dt.date(2023, 11, 18)) == "November 18"


def test_strftime_reads_dates_datetimes_times_and_iso_text():
    assert strftime(SUNDAY, "%B %d %Y") == "October 15 2023"
    assert strftime("2023-10-15 13:05", "%B %d %Y %H:%M") == "October 15 2023 13:05"
    assert strftime("2023-10-15", "%a %d") == "Sun 15"
    assert strftime(dt.time(7, 5), "%H:%M") == "07:05"


def test_minutes_add_minutes_and_ampm():
    assert minutes("09:30") == 570
    assert minutes("1:30pm") == 810
    assert minutes("8pm") == 1200
    assert minutes("12:15am") == 15
    assert minutes(dt.time(0, 1)) == 1
    assert add_minutes("09:30", 45) == "10:15"
    assert add_minutes("10:15", -45) == "09:30"
    assert add_minutes("23:00", 59) == "23:59"
    assert ampm("13:30") == "1:30pm"
    assert ampm("08:00") == "8:00am"
    assert ampm("00:05") == "12:05am"
    assert ampm("12:00") == "12:00pm"


def test_join_shows_each_value_as_on_screen():
    assert join(["Gym", "Dentist"]) == "Gym, Dentist"
    assert join([SUNDAY, 2.5, True], " / ") == "2023-10-15 / 2.50 / yes"
    assert join([]) == ""
    rows = [{"title": "Soup", "id": 3}, {"title": "Stew", "id": 1}]
    assert pluck(rows, "title") == ["Soup", "Stew"]
    assert evaluate("join(pluck(records, 'id'), ' and ')", {"records": rows}) == "3 and 1"


def test_spoken_dates_follow_androidworld_without_ambiguous_bare_weekdays():
    day = dt.timedelta(days=1)
    assert spoken_dates(SUNDAY, SUNDAY) == ["October 15", "October 15 2023", "today"]
    assert spoken_dates(SUNDAY + day, SUNDAY) == [
        "October 16",
        "October 16 2023",
        "tomorrow",
        "this Monday",
    ]
    assert spoken_dates(SUNDAY - day, SUNDAY) == ["October 14", "October 14 2023", "yesterday"]
    assert spoken_dates(SUNDAY + 6 * day, SUNDAY)[-1] == "this Saturday"
    # a week ahead "this Sunday" could mean today: only the calendar forms
    assert spoken_dates(SUNDAY + 7 * day, SUNDAY) == ["October 22", "October 22 2023"]
    assert spoken_dates(SUNDAY + 8 * day, SUNDAY)[-1] == "the Monday after next"
    assert spoken_dates(SUNDAY + 14 * day, SUNDAY)[-1] == "the Sunday after next"
    assert spoken_dates(SUNDAY + 15 * day, SUNDAY) == ["October 30", "October 30 2023"]
    assert spoken_dates(SUNDAY - 3 * day, SUNDAY) == ["October 12", "October 12 2023"]


def test_spoken_date_is_a_deterministic_choice_that_the_salt_varies():
    for ahead in range(-3, 16):
        d = SUNDAY + dt.timedelta(days=ahead)
        said = spoken_date(d, SUNDAY)
        assert said in spoken_dates(d, SUNDAY)
        assert said == spoken_date(d.isoformat(), SUNDAY.isoformat())  # same in any form
    tomorrow = SUNDAY + dt.timedelta(days=1)
    wordings = {spoken_date(tomorrow, SUNDAY, salt) for salt in range(40)}
    assert wordings == set(spoken_dates(tomorrow, SUNDAY))  # every option is reachable
    # in a template: the instruction renders with the default functions and `today` in scope
    scope = {"input": {"date": tomorrow}, "today": SUNDAY}
    assert evaluate("spoken_date(input.date, today, 3)", scope) == spoken_date(tomorrow, SUNDAY, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: weekday("next week"), r"weekday\(\): 'next week' is not a date"),
        (lambda: month_day(None), r"month_day\(\): None is not a date"),
        (lambda: week_start(42), r"week_start\(\): 42 is not a date"),
        (lambda: strftime("2023-10-15", "%d" * 40), "at most 64"),
        (lambda: strftime("yesterday", "%d"), r"strftime\(\): 'yesterday' is not a date"),
        (lambda: minutes("25:00"), r"minutes\(\): '25:00' is not a time"),
        (lambda: add_minutes("23:30", 45), "leaves the day"),
        (lambda: add_minutes("00:10", -11), "leaves the day"),
        (lambda: add_minutes("09:00", "45"), "must be a number"),
        (lambda: ampm("noon"), r"ampm\(\): 'noon' is not a time"),
        (lambda: join("abc"), "expected a list"),
        (lambda: pluck({"title": "a"}, "title"), "expected a list of rows"),
        (lambda: pluck([{"title": "a"}], "name"), "no field 'name'"),
        (lambda: spoken_date("soon", SUNDAY), r"spoken_date\(\): 'soon' is not a date"),
    ],
)
def test_bad_arguments_are_expression_errors_naming_the_function(call, message):
    with pytest.raises(ExprError, match=message):
        call()


# ----- aggregates over rows ---------------------------------------------------------------
SPEC = {
    "name": "tiny",
    "title": "Tiny",
    "today": "2023-10-15",
    "entities": {
        "activity": {
            "label": "Activity",
            "display": "title",
            "order": "date, starts",
            "fields": {
                "title": {"type": "str"},
                "date": {"type": "date"},
                "starts": {"type": "time"},
                "kind": {"type": "enum", "choices": ["run", "walk", "swim"]},
                "length": {"type": "int"},
                "cost": {"type": "float"},
            },
        }
    },
    "pages": [{"entity": "activity", "label": "Activities"}],
}
ROWS = [  # inserted out of list order: the helpers answer in the entity's order
    ("Evening run", "2023-10-16", "18:00", "run", 40, 1.25),
    ("Morning run", "2023-10-16", "07:00", "run", 30, 2.5),
    ("Lake swim", "2023-10-14", "10:00", "swim", 55, 0.1),
    ("Park walk", "2023-10-20", "12:00", "walk", 30, 0.2),
]


@pytest.fixture
def fns():
    spec = load_spec(SPEC)
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    for statement in data.schema(spec):
        conn.execute(statement)
    for title, date, starts, kind, length, cost in ROWS:
        data.insert(
            conn,
            "activity",
            {
                "title": title,
                "date": date,
                "starts": starts,
                "kind": kind,
                "length": length,
                "cost": cost,
            },
        )
    scope = {"today": spec.today, "input": {"kind": "run"}}
    made = db_functions(data.Scope(spec, conn), scope)
    yield lambda source, **extra: evaluate(source, {**scope, **extra}, made), scope
    conn.close()


def test_titles_values_and_counts_follow_the_list_order(fns):
    ev, _ = fns
    assert ev("titles('activity')") == ["Lake swim", "Morning run", "Evening run", "Park walk"]
    assert ev("titles('activity', 'row.kind == input.kind')") == ["Morning run", "Evening run"]
    assert ev("titles('activity', 'row.date == today')") == []
    assert ev("values('activity', 'kind')") == ["swim", "run", "walk"]
    assert ev("values('activity', 'date', 'row.kind != \"swim\"')") == [
        dt.date(2023, 10, 16),
        dt.date(2023, 10, 20),
    ]
    assert ev("count('activity', 'week_start(row.date) == week_start(today) + days(7)')") == 3
    assert ev("join(titles('activity', 'row.length == 30'))") == "Morning run, Park walk"


def test_sum_min_max(fns):
    ev, _ = fns
    assert ev("sum('activity', 'row.length', 'row.kind == input.kind')") == 70
    assert isinstance(ev("sum('activity', 'row.length')"), int)
    assert ev("sum('activity', 'row.cost')") == 4.05
    assert ev("sum('activity', 'row.length', 'False')") == 0
    assert ev("total('activity', 'row.cost', 'row.kind == \"run\"')") == 3.75  # unchanged
    assert ev("min_of('activity', 'row.length')") == 30
    assert ev("max_of('activity', 'row.length', 'row.kind == input.kind')") == 40
    assert ev("max_of('activity', 'row.date')") == dt.date(2023, 10, 20)
    assert ev("min_of('activity', 'minutes(row.starts)')") == 420


def test_first_and_last_pick_a_row_by_an_order_with_ties_in_list_order(fns):
    ev, _ = fns
    assert ev("first('activity').title") == "Evening run"  # default order: row id
    upcoming = "first('activity', 'row.date >= today', 'datetime(row.date, row.starts)').title"
    assert ev(upcoming) == "Morning run"
    assert ev("last('activity', 'True', 'row.date').title") == "Park walk"
    assert ev("first('activity', 'True', 'row.length').title") == "Morning run"  # tie: list order
    assert ev("last('activity', 'True', 'row.length').title") == "Lake swim"


def test_where_strings_see_scope_keys_added_after_the_functions_were_made(fns):
    ev, scope = fns
    scope["let"] = {"kind": "walk"}
    scope["plant"] = [{"title": "Lake swim"}]
    scope["record"] = {"date": dt.date(2023, 10, 16)}
    assert ev("titles('activity', 'row.kind == let.kind')") == ["Park walk"]
    assert ev("count('activity', 'row.title == plant[0].title')") == 1
    assert ev("titles('activity', 'row.date == record.date')") == ["Morning run", "Evening run"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("titles('actvity')", r"titles\(\): no entity 'actvity'; the app has \['activity'\]"),
        ("values('activity', 'colour')", r"values\(\): activity has no field 'colour'"),
        ("sum('activity', 'row.title')", r"sum\(\): 'row.title' is 'Lake swim', not a number"),
        ("min_of('activity', 'row.length', 'row.kind == \"ski\"')", r"min_of\(\): no activity row"),
        ("max_of('activity', 'row.length', 'False')", r"max_of\(\): no activity row"),
        ("first('activity', 'row.length > 99')", r"first\(\): no activity row"),
        ("last('activity', 'True', 'row.date if row.length == 30 else 1')", "do not compare"),
        ("count('activity', 'row.nope')", "no field 'nope'"),
    ],
)
def test_aggregate_mistakes_are_expression_errors(fns, source, message):
    ev, _ = fns
    with pytest.raises(ExprError, match=message):
        ev(source)
