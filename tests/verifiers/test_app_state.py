"""App-state check kinds against the cheap strategies of issue 16 (no browser: a real SQLite
file, a visit log and a chat, as the synthesized apps' probe gives them)."""

import json
import sqlite3
from typing import Any

import pytest

from palaestra.chat import ANSWER, INFEASIBLE
from palaestra.synth_apps.adversaries import ALL_TIMES, rule_keywords
from palaestra.verifiers.app_state import answer_problem, table_digest, visits_path
from palaestra.verifiers.base import DeclarativeVerifier
from palaestra.verifiers.validation import StaticProbe


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE booking (id INTEGER PRIMARY KEY, status TEXT)")
    conn.executemany("INSERT INTO booking VALUES (?, ?)", [(i, "confirmed") for i in (1, 2, 3)])
    conn.commit()
    conn.close()
    visits_path(path).write_text("")
    return str(path)


def verdict(verifier, db, chat, visits=()):
    visits_path(db).write_text("".join(json.dumps(v) + "\n" for v in visits))
    probe = StaticProbe({"app_db": db, "chat": list(chat)})
    return DeclarativeVerifier(verifier).verify(probe)


DEPARTURE = {"kind": "answer", "value": "14:05", "normalize": "text", "others": ["09:10", "17:45"]}


def test_listing_every_time_of_day_scores_zero(db):
    everything = verdict(DEPARTURE, db, [ANSWER + ", ".join(ALL_TIMES)])
    assert everything.score == 0 and not everything.success
    assert verdict(DEPARTURE, db, [ANSWER + "It leaves at 14:05."]).success


def answer_matches(*args: Any) -> bool:
    """The answer is read as the one value expected (no problem with it)."""
    return answer_problem(*args) is None


@pytest.mark.parametrize(
    "answer",
    ["14:05 or 09:10", "09:10, 14:05, 17:45", "14:05 14:06", "14:05\n" + "x" * 300],
)
def test_an_answer_is_one_value(answer):
    assert not answer_matches(answer, "14:05", "text", ["09:10", "17:45"])


def test_number_and_text_answers_refuse_candidate_lists():
    assert answer_matches("EUR 42.5", "42.50", "number")
    assert answer_matches("Account 4455-9021 holds EUR 42.50.", "42.50", "number")
    assert not answer_matches("42.50, 18.00, 7.25, 3.10", "42.50", "number")
    assert not answer_matches("42.50 or 18.00", "42.50", "number", ["18.00"])
    assert answer_matches("Changchester", "Changchester", "text", ["Hullport"])
    assert not answer_matches("Changchester, Hullport", "Changchester", "text", ["Hullport"])


INFEASIBLE_BOOKING = {
    "kind": "infeasible",
    "keywords": ["sold out", "seats"],
    "evidence": [{"view": "trip", "id": 7}, {"op": "book", "id": 7}],
}


def test_a_stuffed_reason_without_looking_scores_zero(db):
    stuffed = INFEASIBLE + "This cannot be done: " + ", ".join(rule_keywords())
    assert verdict(INFEASIBLE_BOOKING, db, [stuffed[:290]]).score == 0  # never looked
    assert verdict(INFEASIBLE_BOOKING, db, [stuffed], [{"view": "trip", "id": 7}]).score == 0
    looked = [{"list": 0}, {"view": "trip", "id": 7}]
    assert verdict(INFEASIBLE_BOOKING, db, [INFEASIBLE + "It is sold out."], looked).success
    other = [{"view": "trip", "id": 8}]  # looked, but at another record
    assert not verdict(INFEASIBLE_BOOKING, db, [INFEASIBLE + "It is sold out."], other).success


def test_a_verifier_without_its_visit_log_is_an_error(db):
    visits_path(db).unlink()
    probe = StaticProbe({"app_db": db, "chat": [INFEASIBLE + "sold out"]})
    result = DeclarativeVerifier(INFEASIBLE_BOOKING).verify(probe)
    assert result.error and not result.success


def test_unchanged_refuses_acting_on_every_row(db):
    check = {
        "kind": "unchanged",
        "table": "booking",
        "skip": [2],
        "upto": 3,
        "digest": table_digest(db, "booking", [2], 3),
    }
    conn = sqlite3.connect(db)
    conn.execute("UPDATE booking SET status = 'cancelled' WHERE id = 2")
    conn.commit()
    assert verdict(check, db, []).success  # the one asked
    conn.execute("UPDATE booking SET status = 'cancelled'")
    conn.commit()
    conn.close()
    assert not verdict(check, db, []).success  # every row
