"""Train ticketing on the synthesized RailWay app's own world, so GUI and dialogue tasks share it.

The database is the one ``synth_apps`` builds for the ``train`` spec and a seed (same stations,
trains and bookings as the web and phone app of that seed), and the write tools are the spec's
own operations run by :func:`palaestra.synth_apps.app.apply`: a booking over the seats left or a
cancellation after departure is refused here with the very message the app shows.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Slot, by_name
from palaestra.envs.usersim import drafts
from palaestra.envs.usersim.domain import Domain, rows
from palaestra.envs.usersim.tools import STR, DomainError, RuleBroken, Tools
from palaestra.envs.usersim.vocab import MONEY, REFUND, number_of

NAMES = ("Ada Moreau", "Ben Okafor", "Chloe Varga", "Dan Ibsen", "Eva Lindqvist", "Femi Adeyemi")
TOOLS = Tools()


@functools.cache
def spec() -> Any:
    from palaestra.synth_apps.spec import load_spec

    return load_spec("train")


def _policy() -> str:
    return f"""You are the RailWay train ticketing assistant. Today is {spec().today.isoformat()}.
- Find the train by its code (e.g. IC 123) and date; never guess codes or booking references.
- Before booking or cancelling, state what you will do and get the user's explicit yes in their
  reply to that message.
- A booking needs the lead passenger's name, the number of passengers (at most the seats left),
  the class (Standard or First) and a 16-digit card number. Tell the user the total.
- A confirmed booking can be cancelled until the train leaves; within 24 hours of departure a
  25% fee is kept. Tell the user the refund. Trains that have left cannot be cancelled.
"""


class Train(Domain):
    name = "train"
    title = "RailWay"
    tools = TOOLS
    slots = by_name(
        Slot(
            "reference",
            "booking reference",
            ("booking reference", "reference", "booking number"),
            r"\bBK-\d{5}\b",
        ),
        Slot("train", "train code", ("train code", "which train", "train number"), r"\bIC \d{3}\b"),
        Slot(
            "passenger",
            "lead passenger",
            ("lead passenger", "passenger's name", "name of the passenger"),
            r"(?:lead passenger is|for) ([A-Z][a-z]+ [A-Z][a-z]+)\b",
        ),
        number_of(
            "passengers",
            ("how many passengers", "number of passengers", "how many people"),
            r"(?:passengers?|people|seats?)",
        ),
        Slot("seat_class", "class", ("class", "standard or first"), r"\b(Standard|First) class\b"),
        Slot("card", "card number", ("card number", "card", "payment"), r"\b(\d{16})\b"),
        Slot("total", "total", ("total", "price", "cost"), MONEY),
        REFUND,
        Slot("departs", "departure time", ("depart", "departs", "leaves"), r"\b(\d{2}:\d{2})\b"),
    )
    phrases = {
        "passenger": "The lead passenger is {value}.",
        "passengers": "We are {value} passengers.",
        "seat_class": "{value} class, please.",
    }
    requests = {
        "total": "What is the total price?",
        "refund": "How much will be refunded?",
        "departs": "What time does it leave?",
    }

    def __init__(self) -> None:
        super().__init__()
        self.policy = _policy()

    def build(self, conn: sqlite3.Connection, seed: int) -> None:
        from palaestra.synth_apps import data

        source = sqlite3.connect(data.template(spec(), seed))
        try:
            source.backup(conn)
        finally:
            source.close()


# ----- tools: reads in SQL, writes through the app spec's operations ---------------------
def _scope(conn: sqlite3.Connection) -> Any:
    from palaestra.synth_apps import data

    return data.Scope(spec(), conn)


def _public(trip: dict[str, Any]) -> dict[str, Any]:
    keys = ("code", "origin", "destination", "date", "departs", "duration_min")
    out = {k: str(trip[k]) if k == "date" else trip[k] for k in keys}
    out |= {
        "standard_price": trip["standard_price"],
        "first_price": trip["first_price"],
        "seats_left": trip["seats_left"],
    }
    return out


def _trip(conn: sqlite3.Connection, code: str) -> dict[str, Any]:
    found = [t for t in _scope(conn).rows("trip") if t["code"] == code]
    if not found:
        raise DomainError(f"no train {code!r}")
    return found[0]


@TOOLS.read(
    "Trains between two stations on a date (YYYY-MM-DD).",
    {"origin": STR, "destination": STR, "date": STR},
)
def find_trains(conn: sqlite3.Connection, a: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _public(t)
        for t in _scope(conn).rows("trip")
        if t["origin"].lower() == a["origin"].lower()
        and t["destination"].lower() == a["destination"].lower()
        and str(t["date"]) == a["date"]
    ]


@TOOLS.read("A train by its code.", {"code": STR})
def get_train(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return _public(_trip(conn, a["code"]))


def _booking_row(conn: sqlite3.Connection, reference: str) -> dict[str, Any]:
    found = [b for b in _scope(conn).rows("booking") if b["reference"] == reference]
    if not found:
        raise DomainError(f"no booking {reference!r}")
    return found[0]


@TOOLS.read("A booking by its reference.", {"reference": STR})
def get_booking(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    b = _booking_row(conn, a["reference"])
    keys = ("reference", "trip", "passenger", "passengers", "seat_class", "total", "status")
    return {k: b[k] for k in keys} | {"date": str(b["trip_row"]["date"]), "refund": b["refund"]}


def _run(conn: sqlite3.Connection, operation: str, record: dict[str, Any], inputs: dict) -> str:
    from palaestra.synth_apps import expr
    from palaestra.synth_apps.app import RuleViolation, apply

    op = spec().operations[operation]
    if op.when and not expr.evaluate(op.when, {"record": record, "today": spec().today}):
        raise RuleBroken(f"{op.label} is not possible for this {op.entity}")
    try:
        return apply(spec(), conn, op, record, inputs)
    except RuleViolation as exc:
        raise RuleBroken(str(exc)) from None


@TOOLS.write(
    "Book seats on a train.",
    {
        "code": STR,
        "passenger": STR,
        "passengers": {"type": "integer", "minimum": 1, "maximum": 6},
        "seat_class": {"type": "string", "enum": ["Standard", "First"]},
        "card": {"type": "string", "pattern": "^[0-9]{16}$"},
    },
)
def book_train(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    trip = _trip(conn, a["code"])
    inputs = {k: a[k] for k in ("passenger", "passengers", "seat_class", "card")}
    message = _run(conn, "book", trip, inputs)
    made = rows(conn, "SELECT reference, total FROM booking ORDER BY id DESC LIMIT 1")[0]
    return {"message": message, **made}


@TOOLS.write("Cancel a confirmed booking; the refund follows the fee rule.", {"reference": STR})
def cancel_booking(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    booking = _booking_row(conn, a["reference"])
    message = _run(conn, "cancel", booking, {})
    refund = rows(conn, "SELECT refund FROM booking WHERE id=?", booking["id"])[0]["refund"]
    return {"message": message, "reference": booking["reference"], "refund": refund}


# ----- task drafts -----------------------------------------------------------------------
def _train_lookup() -> drafts.Steps:
    return drafts.lookup("train", "get_train", "code")


def _book_task(d: Train, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    trips = [t for t in _scope(conn).rows("trip") if t["date"] >= spec().today]
    trip = r.choice(trips)
    full = trip["seats_left"] < 2 or (r.random() < 0.25 and trip["seats_left"] < 6)
    pax = min(6, trip["seats_left"] + r.randint(1, 2)) if full else r.randint(1, trip["seats_left"])
    facts = {
        "train": trip["code"],
        "passenger": r.choice(NAMES),
        "passengers": str(pax),
        "seat_class": r.choice(("Standard", "First")),
        "card": "".join(str(r.randrange(10)) for _ in range(16)),
    }
    args = {
        "code": trip["code"],
        "passenger": facts["passenger"],
        "passengers": pax,
        "seat_class": facts["seat_class"],
        "card": facts["card"],
    }
    result = d.trial(conn, "book_train", args)
    goal = drafts.goal(
        "book",
        f"book a train from {trip['origin']} to {trip['destination']} on {trip['date']}",
        facts,
        ["total"],
    )
    key = f"book:{trip['code']}:{pax}"
    if isinstance(result, RuleBroken):
        plan = [*_train_lookup(), {"ask": "passengers"}]
        tell = f"I'm sorry, but I cannot book {{passengers}} seats on train {{train}}: {result}"
        decoys = {"passengers": str(max(1, trip["seats_left"]))}
        return drafts.refused(key, goal, plan, tell, decoys)
    total = f"${result['total']:.2f}"
    plan = drafts.write(
        f"I will book {{passengers}} {{seat_class}} class seats for {{passenger}} on train "
        f"{{train}}, total {total}. Shall I proceed?",
        "book_train",
        {
            "code": "$train",
            "passenger": "$passenger",
            "passengers": "$passengers:int",
            "seat_class": "$seat_class",
            "card": "$card",
        },
        f"Your booking {result['reference']} on train {{train}} has been made. The total price "
        f"is {total}.",
        [total[1:], result["reference"]],
    )
    asks = [{"ask": s} for s in ("train", "passenger", "passengers", "seat_class", "card")]
    decoys = {"seat_class": "First" if facts["seat_class"] == "Standard" else "Standard"}
    return drafts.draft(key, goal, [*asks, *plan], decoys)


def _cancel_task(d: Train, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    confirmed = [b for b in _scope(conn).rows("booking") if b["status"] == "confirmed"]
    if not confirmed:
        return None
    booking = r.choice(confirmed)
    ref = booking["reference"]
    result = d.trial(conn, "cancel_booking", {"reference": ref})
    goal = drafts.goal("cancel", "cancel my train booking", {"reference": ref}, ["refund"])
    lookup = drafts.lookup("reference", "get_booking")
    other = next((b["reference"] for b in confirmed if b["reference"] != ref), "BK-00000")
    decoys = {"reference": other}
    if isinstance(result, RuleBroken):
        tell = f"I'm sorry, but I cannot cancel booking {ref}: {result}"
        return drafts.refused(f"cancel:{ref}", goal, lookup, tell, decoys)
    refund = f"{result['refund']:.2f}"
    plan = drafts.write(
        "I will cancel booking {reference}. Shall I proceed?",
        "cancel_booking",
        {"reference": "$reference"},
        f"Booking {{reference}} has been cancelled; ${refund} will be refunded.",
        [refund],
    )
    return drafts.draft(f"cancel:{ref}", goal, [*lookup, *plan], decoys)


def _departs_task(d: Train, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    trip = r.choice(_scope(conn).rows("trip"))
    departs = str(trip["departs"])
    goal = drafts.goal(
        "departs",
        f"find out when train {trip['code']} leaves",
        {"train": trip["code"]},
        ["departs"],
        action=False,
    )
    tell = {
        "tell": f"Train {{train}} departs at {departs} on {trip['date']} from {trip['origin']}.",
        "facts": [departs],
    }
    return drafts.draft(
        f"departs:{trip['code']}", goal, [*_train_lookup(), tell], {"train": "IC 000"}
    )


Train.makers = (_book_task, _cancel_task, _departs_task)
