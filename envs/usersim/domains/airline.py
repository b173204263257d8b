"""Airline: book, change, cancel, baggage and compensation, under tau-bench-style rules."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import date, timedelta
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Slot
from palaestra.envs.usersim.domain import (
    STR,
    Domain,
    RuleBroken,
    Tool,
    money,
    one,
    params,
    rng,
    rows,
)

TODAY = date(2026, 12, 1)
CITIES = ("Boston", "Denver", "Seattle", "Miami", "Chicago", "Austin", "Phoenix", "Atlanta")
CABINS = ("basic economy", "economy", "business")
FREE_BAGS = {"regular": 0, "silver": 1, "gold": 2}  # per passenger, plus 1 in business
BAG_FEE = 50.0
COMPENSATION = {"cancelled": 100.0, "delayed": 50.0}  # per passenger
FIRST = ("mia", "noah", "ava", "liam", "emma", "omar", "yara", "ivan", "lena", "raj", "sofia")
LAST = ("li", "khan", "smith", "garcia", "rossi", "kim", "novak", "silva", "ito", "berg")
_MONEY = r"\$(\d[\d,]*(?:\.\d{1,2})?)"

POLICY = f"""You are an airline customer-service agent. Today is {TODAY.isoformat()}.
- Identify the reservation (or, to book, the user id) before acting; never guess ids.
- Before any action that changes a reservation (book, change, cancel, bags, certificate), state
  what you will do and get the user's explicit yes in their reply to that message.
- Cancellation with a full refund is allowed only if the booking was made today (within 24 h),
  or the cabin is business, or the reservation has travel insurance; never after departure.
- Basic economy reservations cannot be changed to another flight. A change keeps the route and
  cabin; the fare difference is charged (or refunded) and must be told to the user.
- Free checked bags per passenger: regular 0, silver 1, gold 2, plus 1 in business. Each extra
  bag costs ${BAG_FEE:.0f}. Bags can be added, never removed. Tell the user the fee.
- Compensation certificates only for a flight that was cancelled (${COMPENSATION["cancelled"]:.0f}
  per passenger) or delayed (${COMPENSATION["delayed"]:.0f} per passenger), and only to gold
  members or business passengers; one per reservation. Tell the user the amount.
- Book only flights with enough seats left; tell the user the total price.
"""


class Airline(Domain):
    name = "airline"
    title = "SkyHigh Airlines"
    policy = POLICY
    slots = {
        "user_id": Slot(
            "user_id", "user id", ("user id", "account", "username"), r"\b[a-z]+_[a-z]+_\d{4}\b"
        ),
        "reservation_id": Slot(
            "reservation_id",
            "reservation number",
            ("reservation", "booking", "confirmation number", "reservation number"),
            r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b",
        ),
        "flight_number": Slot(
            "flight_number",
            "flight number",
            ("flight number", "which flight", "what flight", "new flight"),
            r"\bHAT\d{4}\b",
        ),
        "cabin": Slot("cabin", "cabin", ("cabin", "class", "fare"), values=CABINS),
        "passengers": Slot(
            "passengers",
            "number of passengers",
            ("passengers", "how many people", "travellers", "travelers"),
            r"\b(\d+) (?:passengers?|people|travell?ers?|persons?)\b",
            phrase="We are {value} passengers.",
        ),
        "bags": Slot(
            "bags",
            "number of bags",
            ("bags", "baggage", "luggage"),
            r"\b(\d+) (?:checked )?bags?\b",
            phrase="I'd like {value} checked bags in total.",
        ),
        "refund": Slot("refund", "refund", ("refund", "refunded"), _MONEY),
        "fee": Slot("fee", "fee", ("fee", "cost", "charge", "charged", "pay"), _MONEY),
        "total": Slot("total", "total", ("total", "price", "cost", "charged"), _MONEY),
        "fare_difference": Slot(
            "fare_difference",
            "fare difference",
            ("difference", "charged", "refunded", "charge"),
            _MONEY,
        ),
        "certificate": Slot(
            "certificate", "certificate", ("certificate", "voucher", "compensation"), _MONEY
        ),
    }
    requests = {
        "refund": "How much will I get back?",
        "fee": "How much will that cost me?",
        "total": "What is the total price?",
        "fare_difference": "What is the fare difference?",
        "certificate": "How much is the certificate worth?",
    }

    def __init__(self) -> None:
        super().__init__()
        t = [
            Tool(
                "get_user_details",
                "A user's profile (name, membership) and their reservation ids.",
                params(["user_id"], user_id=STR),
                _user,
            ),
            Tool(
                "get_reservation_details",
                "A reservation: flight, cabin, passengers, bags, insurance, booking date, total.",
                params(["reservation_id"], reservation_id=STR),
                _reservation,
            ),
            Tool(
                "search_flights",
                "Flights between two cities on a date (YYYY-MM-DD) with prices and seats left.",
                params(["origin", "destination", "date"], origin=STR, destination=STR, date=STR),
                _search,
            ),
            Tool(
                "get_flight_status",
                "Whether a flight is scheduled, delayed or cancelled.",
                params(["flight_number"], flight_number=STR),
                _status,
            ),
            Tool(
                "book_reservation",
                "Book a flight for a user in a cabin for a number of passengers.",
                params(
                    ["user_id", "flight_number", "cabin", "passengers"],
                    user_id=STR,
                    flight_number=STR,
                    cabin={"type": "string", "enum": list(CABINS)},
                    passengers={"type": "integer", "minimum": 1, "maximum": 9},
                ),
                _book,
                writes=True,
            ),
            Tool(
                "cancel_reservation",
                "Cancel a reservation and refund it, if the policy allows.",
                params(["reservation_id"], reservation_id=STR),
                _cancel,
                writes=True,
            ),
            Tool(
                "update_reservation_flight",
                "Move a reservation to another flight on the same route, same cabin.",
                params(["reservation_id", "flight_number"], reservation_id=STR, flight_number=STR),
                _change,
                writes=True,
            ),
            Tool(
                "update_reservation_baggages",
                "Set the total number of checked bags of a reservation (add only).",
                params(
                    ["reservation_id", "total_bags"],
                    reservation_id=STR,
                    total_bags={"type": "integer", "minimum": 0, "maximum": 20},
                ),
                _bags,
                writes=True,
            ),
            Tool(
                "send_certificate",
                "Issue the compensation certificate the policy allows for a disrupted flight.",
                params(["reservation_id"], reservation_id=STR),
                _certificate,
                writes=True,
            ),
        ]
        self.tools = {tool.name: tool for tool in t}

    # ----- the world ----------------------------------------------------------------------
    def build(self, conn: sqlite3.Connection, seed: int) -> None:
        r = rng(seed, "airline")
        conn.executescript(
            """
            CREATE TABLE users (user_id TEXT PRIMARY KEY, name TEXT, membership TEXT);
            CREATE TABLE flights (flight_number TEXT PRIMARY KEY, origin TEXT,
                destination TEXT, date TEXT, departs TEXT, economy REAL, business REAL,
                seats_left INTEGER, status TEXT);
            CREATE TABLE reservations (reservation_id TEXT PRIMARY KEY, user_id TEXT,
                flight_number TEXT, cabin TEXT, passengers INTEGER, bags INTEGER,
                insurance INTEGER, booked_on TEXT, status TEXT, total REAL, refund REAL);
            CREATE TABLE certificates (reservation_id TEXT PRIMARY KEY, user_id TEXT,
                amount REAL);
            """
        )
        users = []
        for i in range(30):
            uid = f"{r.choice(FIRST)}_{r.choice(LAST)}_{1000 + r.randrange(9000)}"
            member = r.choice(("regular", "regular", "silver", "gold"))
            users.append(uid)
            conn.execute(
                "INSERT OR IGNORE INTO users VALUES (?,?,?)",
                (uid, uid.split("_")[0].title() + " " + uid.split("_")[1].title(), member),
            )
            del i
        flights = []
        for n in range(90):
            origin, dest = r.sample(CITIES, 2)
            day = TODAY + timedelta(days=r.randrange(-3, 9))
            eco = float(r.randrange(90, 400))
            number = f"HAT{1000 + n * 7 + r.randrange(7)}"
            status = r.choice(("scheduled",) * 6 + ("delayed", "cancelled"))
            conn.execute(
                "INSERT INTO flights VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    number,
                    origin,
                    dest,
                    day.isoformat(),
                    f"{r.randrange(6, 22):02d}:{r.choice(('00', '15', '30', '45'))}",
                    eco,
                    round(eco * 2.5),
                    r.randrange(0, 9),
                    status,
                ),
            )
            flights.append((number, origin, dest, day))
        for i in range(80):
            number, *_ = r.choice(flights)
            cabin = r.choice(CABINS)
            pax = r.randrange(1, 4)
            price = _price(conn, number, cabin)
            rid = "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(5))
            rid = rid + str(i % 10)
            booked = TODAY - timedelta(days=r.choice((0, 0, 1, 3, 10, 30)))
            conn.execute(
                "INSERT OR IGNORE INTO reservations VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    rid,
                    r.choice(users),
                    number,
                    cabin,
                    pax,
                    r.randrange(0, 2) * pax,
                    int(r.random() < 0.3),
                    booked.isoformat(),
                    "active",
                    money(price * pax),
                    0.0,
                ),
            )


# ----- tool functions (each reads/writes the session's database) -------------------------
def _user(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    user = one(conn, "SELECT * FROM users WHERE user_id=?", a["user_id"], missing="user not found")
    ids = rows(conn, "SELECT reservation_id FROM reservations WHERE user_id=?", a["user_id"])
    return {**user, "reservations": [r["reservation_id"] for r in ids]}


def _reservation(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = one(
        conn,
        "SELECT r.*, f.origin, f.destination, f.date, f.departs FROM reservations r "
        "JOIN flights f USING (flight_number) WHERE reservation_id=?",
        a["reservation_id"],
        missing="reservation not found",
    )
    res["insurance"] = bool(res["insurance"])
    return res


def _search(conn: sqlite3.Connection, a: dict[str, Any]) -> list[dict[str, Any]]:
    found = rows(
        conn,
        "SELECT flight_number, origin, destination, date, departs, economy, business, "
        "seats_left, status FROM flights WHERE lower(origin)=lower(?) AND "
        "lower(destination)=lower(?) AND date=? ORDER BY departs",
        a["origin"],
        a["destination"],
        a["date"],
    )
    for f in found:
        f["basic economy"] = money(f["economy"] * 0.8)
    return found


def _status(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return one(
        conn,
        "SELECT flight_number, date, departs, status FROM flights WHERE flight_number=?",
        a["flight_number"],
        missing="flight not found",
    )


def _price(conn: sqlite3.Connection, flight: str, cabin: str) -> float:
    f = one(conn, "SELECT * FROM flights WHERE flight_number=?", flight, missing="flight not found")
    if cabin == "business":
        return float(f["business"])
    return money(f["economy"] * (0.8 if cabin == "basic economy" else 1.0))


def _flight(conn: sqlite3.Connection, number: str) -> dict[str, Any]:
    return one(
        conn, "SELECT * FROM flights WHERE flight_number=?", number, missing="flight not found"
    )


def _active(conn: sqlite3.Connection, rid: str) -> dict[str, Any]:
    res = one(conn, "SELECT * FROM reservations WHERE reservation_id=?", rid, missing="not found")
    if res["status"] != "active":
        raise RuleBroken(f"reservation {rid} is already cancelled")
    return res


def _book(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    one(conn, "SELECT 1 FROM users WHERE user_id=?", a["user_id"], missing="user not found")
    f = _flight(conn, a["flight_number"])
    if f["date"] < TODAY.isoformat() or f["status"] == "cancelled":
        raise RuleBroken(f"flight {f['flight_number']} cannot be booked (departed or cancelled)")
    if f["seats_left"] < a["passengers"]:
        raise RuleBroken(f"flight {f['flight_number']} has only {f['seats_left']} seat(s) left")
    total = money(_price(conn, f["flight_number"], a["cabin"]) * a["passengers"])
    n = conn.execute("SELECT count(*) FROM reservations").fetchone()[0]
    key = f"{a['user_id']}:{f['flight_number']}:{n}"
    rid = hashlib.sha256(key.encode()).hexdigest()[:5].upper() + "N"
    conn.execute(
        "INSERT INTO reservations VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            rid,
            a["user_id"],
            f["flight_number"],
            a["cabin"],
            a["passengers"],
            0,
            0,
            TODAY.isoformat(),
            "active",
            total,
            0.0,
        ),
    )
    conn.execute(
        "UPDATE flights SET seats_left = seats_left - ? WHERE flight_number=?",
        (a["passengers"], f["flight_number"]),
    )
    return {"reservation_id": rid, "total": total}


def cancellable(res: dict[str, Any], flight: dict[str, Any]) -> str | None:
    """Why a reservation cannot be cancelled, or None. Shared by the tool and the generator."""
    if flight["date"] < TODAY.isoformat():
        return "the flight has already departed"
    if res["booked_on"] == TODAY.isoformat() or res["cabin"] == "business" or res["insurance"]:
        return None
    return "it was booked more than 24 hours ago, is not business class and has no insurance"


def _cancel(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = _active(conn, a["reservation_id"])
    why = cancellable(res, _flight(conn, res["flight_number"]))
    if why:
        raise RuleBroken(f"reservation {res['reservation_id']} cannot be cancelled: {why}")
    conn.execute(
        "UPDATE reservations SET status='cancelled', refund=total WHERE reservation_id=?",
        (res["reservation_id"],),
    )
    conn.execute(
        "UPDATE flights SET seats_left = seats_left + ? WHERE flight_number=?",
        (res["passengers"], res["flight_number"]),
    )
    return {"reservation_id": res["reservation_id"], "status": "cancelled", "refund": res["total"]}


def _change(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = _active(conn, a["reservation_id"])
    old, new = _flight(conn, res["flight_number"]), _flight(conn, a["flight_number"])
    if res["cabin"] == "basic economy":
        raise RuleBroken("basic economy reservations cannot be changed")
    if (old["origin"], old["destination"]) != (new["origin"], new["destination"]):
        raise RuleBroken("a change must keep the route; this flight flies another route")
    if new["date"] < TODAY.isoformat() or new["status"] == "cancelled":
        raise RuleBroken(f"flight {new['flight_number']} cannot be booked")
    if new["seats_left"] < res["passengers"]:
        raise RuleBroken(f"flight {new['flight_number']} has only {new['seats_left']} seat(s)")
    total = money(_price(conn, new["flight_number"], res["cabin"]) * res["passengers"])
    conn.execute(
        "UPDATE reservations SET flight_number=?, total=? WHERE reservation_id=?",
        (new["flight_number"], total, res["reservation_id"]),
    )
    for number, delta in ((old["flight_number"], 1), (new["flight_number"], -1)):
        conn.execute(
            "UPDATE flights SET seats_left = seats_left + ? WHERE flight_number=?",
            (delta * res["passengers"], number),
        )
    return {"reservation_id": res["reservation_id"], "fare_difference": money(total - res["total"])}


def bag_fee(conn: sqlite3.Connection, res: dict[str, Any], total_bags: int) -> float:
    member = one(conn, "SELECT membership FROM users WHERE user_id=?", res["user_id"], missing="?")
    free = res["passengers"] * (FREE_BAGS[member["membership"]] + (res["cabin"] == "business"))
    paid_before = max(0, res["bags"] - free)
    return money(BAG_FEE * (max(0, total_bags - free) - paid_before))


def _bags(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = _active(conn, a["reservation_id"])
    if a["total_bags"] < res["bags"]:
        raise RuleBroken(f"bags can only be added; the reservation already has {res['bags']}")
    fee = bag_fee(conn, res, a["total_bags"])
    conn.execute(
        "UPDATE reservations SET bags=?, total=total+? WHERE reservation_id=?",
        (a["total_bags"], fee, res["reservation_id"]),
    )
    return {"reservation_id": res["reservation_id"], "bags": a["total_bags"], "fee": fee}


def compensation(conn: sqlite3.Connection, res: dict[str, Any]) -> float | str:
    """The certificate's amount, or why there is none. Shared by the tool and the generator."""
    flight = _flight(conn, res["flight_number"])
    member = one(conn, "SELECT membership FROM users WHERE user_id=?", res["user_id"], missing="?")
    if flight["status"] not in COMPENSATION:
        return f"flight {flight['flight_number']} was not delayed or cancelled"
    if member["membership"] != "gold" and res["cabin"] != "business":
        return "certificates are only for gold members or business passengers"
    if conn.execute(
        "SELECT 1 FROM certificates WHERE reservation_id=?", (res["reservation_id"],)
    ).fetchone():
        return "a certificate was already issued for this reservation"
    return money(COMPENSATION[flight["status"]] * res["passengers"])


def _certificate(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = _active(conn, a["reservation_id"])
    amount = compensation(conn, res)
    if isinstance(amount, str):
        raise RuleBroken(f"no certificate for reservation {res['reservation_id']}: {amount}")
    conn.execute(
        "INSERT INTO certificates VALUES (?,?,?)",
        (res["reservation_id"], res["user_id"], amount),
    )
    return {"reservation_id": res["reservation_id"], "amount": amount}


# ----- task drafts: a goal and the reference plan that serves it -------------------------
def _pick_reservation(conn: sqlite3.Connection, r: Any) -> dict[str, Any]:
    res = rows(conn, "SELECT * FROM reservations WHERE status='active' ORDER BY reservation_id")
    return r.choice(res)


def _lookup(rid: str) -> list[dict[str, Any]]:
    return [
        {"ask": "reservation_id"},
        {"call": "get_reservation_details", "args": {"reservation_id": "$reservation_id"}},
    ]


def _decoy(conn: sqlite3.Connection, rid: str) -> str:
    others = rows(
        conn,
        "SELECT reservation_id FROM reservations WHERE reservation_id != ? "
        "ORDER BY reservation_id LIMIT 1",
        rid,
    )
    return others[0]["reservation_id"]


def _refusal(key: str, goal: dict[str, Any], why: str, rid: str, decoy: str) -> dict[str, Any]:
    return {
        "key": key,
        "goal": {**goal, "grantable": False},
        "plan": [
            *_lookup(rid),
            {"tell": f"I'm sorry, but I cannot do that for reservation {{reservation_id}}: {why}."},
        ],
        "decoys": {"reservation_id": decoy},
    }


def _cancel_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    res = _pick_reservation(conn, r)
    rid = res["reservation_id"]
    why = cancellable(res, _flight(conn, res["flight_number"]))
    goal = {
        "intent": "cancel",
        "phrase": "cancel my flight reservation",
        "facts": {"reservation_id": rid},
        "requests": ["refund"],
    }
    if why:
        return _refusal(f"cancel:{rid}", goal, why, rid, _decoy(conn, rid))
    return {
        "key": f"cancel:{rid}",
        "goal": goal,
        "plan": [
            *_lookup(rid),
            {
                "confirm": "I can cancel reservation {reservation_id} with a full refund of "
                f"${res['total']:.2f}. Shall I proceed?"
            },
            {"call": "cancel_reservation", "args": {"reservation_id": "$reservation_id"}},
            {
                "tell": "Reservation {reservation_id} has been cancelled and "
                f"${res['total']:.2f} will be refunded to your original payment.",
                "facts": [f"{res['total']:.2f}"],
            },
        ],
        "decoys": {"reservation_id": _decoy(conn, rid)},
    }


def _change_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    res = _pick_reservation(conn, r)
    rid = res["reservation_id"]
    old = _flight(conn, res["flight_number"])
    options = rows(
        conn,
        "SELECT * FROM flights WHERE origin=? AND destination=? AND flight_number != ? "
        "AND date >= ? AND status != 'cancelled' AND seats_left >= ? ORDER BY flight_number",
        old["origin"],
        old["destination"],
        old["flight_number"],
        TODAY.isoformat(),
        res["passengers"],
    )
    if not options or old["date"] < TODAY.isoformat():
        return None
    new = r.choice(options)
    goal = {
        "intent": "change",
        "phrase": f"move my reservation to another flight from {old['origin']} to "
        f"{old['destination']}",
        "facts": {"reservation_id": rid, "flight_number": new["flight_number"]},
        "requests": ["fare_difference"],
    }
    decoy = _decoy(conn, rid)
    if res["cabin"] == "basic economy":
        return _refusal(
            f"change:{rid}", goal, "basic economy reservations cannot be changed", rid, decoy
        )
    total = money(_price(conn, new["flight_number"], res["cabin"]) * res["passengers"])
    diff = money(total - res["total"])
    word = "charged" if diff >= 0 else "refunded"
    return {
        "key": f"change:{rid}",
        "goal": goal,
        "plan": [
            *_lookup(rid),
            {"ask": "flight_number"},
            {
                "confirm": "I will move reservation {reservation_id} to flight {flight_number} "
                f"on {new['date']}. Shall I proceed?"
            },
            {
                "call": "update_reservation_flight",
                "args": {"reservation_id": "$reservation_id", "flight_number": "$flight_number"},
            },
            {
                "tell": "Reservation {reservation_id} is now on flight {flight_number}. The fare "
                f"difference of ${abs(diff):.2f} has been {word}.",
                "facts": [f"{abs(diff):.2f}"],
            },
        ],
        "decoys": {"reservation_id": decoy, "flight_number": options[0]["flight_number"]}
        if options[0] is not new
        else {"reservation_id": decoy},
    }


def _bags_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    res = _pick_reservation(conn, r)
    rid = res["reservation_id"]
    total_bags = res["bags"] + r.randrange(1, 3)
    fee = bag_fee(conn, res, total_bags)
    if _flight(conn, res["flight_number"])["date"] < TODAY.isoformat():
        return None
    return {
        "key": f"bags:{rid}",
        "goal": {
            "intent": "bags",
            "phrase": "add checked bags to my reservation",
            "facts": {"reservation_id": rid, "bags": str(total_bags)},
            "requests": ["fee"],
        },
        "plan": [
            *_lookup(rid),
            {"ask": "bags"},
            {
                "confirm": "I will set reservation {reservation_id} to {bags} checked bags in "
                f"total, for a fee of ${fee:.2f}. Shall I proceed?"
            },
            {
                "call": "update_reservation_baggages",
                "args": {"reservation_id": "$reservation_id", "total_bags": "$bags:int"},
            },
            {
                "tell": "Reservation {reservation_id} has been updated to {bags} checked bags. "
                f"The fee charged is ${fee:.2f}.",
                "facts": [f"{fee:.2f}"],
            },
        ],
        "decoys": {"reservation_id": _decoy(conn, rid), "bags": str(total_bags + 1)},
    }


def _book_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    users = rows(conn, "SELECT user_id FROM users ORDER BY user_id")
    flights = rows(
        conn,
        "SELECT * FROM flights WHERE date >= ? AND status != 'cancelled' ORDER BY flight_number",
        TODAY.isoformat(),
    )
    user, flight = r.choice(users)["user_id"], r.choice(flights)
    cabin = r.choice(("economy", "business"))
    pax = r.randrange(1, 4)
    goal = {
        "intent": "book",
        "phrase": f"book a flight from {flight['origin']} to {flight['destination']}",
        "facts": {
            "user_id": user,
            "flight_number": flight["flight_number"],
            "cabin": cabin,
            "passengers": str(pax),
        },
        "requests": ["total"],
    }
    key = f"book:{user}:{flight['flight_number']}"
    ask = [{"ask": "user_id"}, {"ask": "flight_number"}, {"ask": "cabin"}, {"ask": "passengers"}]
    if flight["seats_left"] < pax:
        return {
            "key": key,
            "goal": {**goal, "grantable": False},
            "plan": [
                *ask,
                {"call": "get_flight_status", "args": {"flight_number": "$flight_number"}},
                {
                    "tell": "I'm sorry, but flight {flight_number} cannot take {passengers} "
                    f"passengers: only {flight['seats_left']} seat(s) are left."
                },
            ],
            "decoys": {"cabin": "basic economy"},
        }
    total = money(_price(conn, flight["flight_number"], cabin) * pax)
    return {
        "key": key,
        "goal": goal,
        "plan": [
            *ask,
            {
                "confirm": "I will book flight {flight_number} in {cabin} for {passengers} "
                f"passengers, total ${total:.2f}. Shall I proceed?"
            },
            {
                "call": "book_reservation",
                "args": {
                    "user_id": "$user_id",
                    "flight_number": "$flight_number",
                    "cabin": "$cabin",
                    "passengers": "$passengers:int",
                },
            },
            {
                "tell": "Your flight {flight_number} has been booked. The total price is "
                f"${total:.2f}.",
                "facts": [f"{total:.2f}"],
            },
        ],
        "decoys": {"cabin": "basic economy"},
    }


def _certificate_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    disrupted = rows(
        conn,
        "SELECT r.* FROM reservations r JOIN flights f USING (flight_number) "
        "WHERE r.status='active' AND f.status != 'scheduled' ORDER BY reservation_id",
    )
    if not disrupted:
        return None
    res = r.choice(disrupted)
    rid = res["reservation_id"]
    amount = compensation(conn, res)
    goal = {
        "intent": "certificate",
        "phrase": "get compensation for my disrupted flight",
        "facts": {"reservation_id": rid},
        "requests": ["certificate"],
    }
    if isinstance(amount, str):
        return _refusal(f"cert:{rid}", goal, amount, rid, _decoy(conn, rid))
    return {
        "key": f"cert:{rid}",
        "goal": goal,
        "plan": [
            *_lookup(rid),
            {
                "confirm": "I can issue a compensation certificate of "
                f"${amount:.2f} for reservation {{reservation_id}}. Shall I proceed?"
            },
            {"call": "send_certificate", "args": {"reservation_id": "$reservation_id"}},
            {
                "tell": f"A certificate worth ${amount:.2f} has been issued for reservation "
                "{reservation_id}.",
                "facts": [f"{amount:.2f}"],
            },
        ],
        "decoys": {"reservation_id": _decoy(conn, rid)},
    }


Airline.makers = (_cancel_task, _change_task, _bags_task, _book_task, _certificate_task)
