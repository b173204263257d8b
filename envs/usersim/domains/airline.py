"""Airline: book, change, cancel, baggage and compensation, under tau-bench-style rules."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from datetime import date, timedelta
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Slot, by_name
from palaestra.envs.usersim import drafts
from palaestra.envs.usersim.domain import Domain, money, one, rows
from palaestra.envs.usersim.tools import STR, RuleBroken, Tools
from palaestra.envs.usersim.vocab import MONEY, REFUND, USER_ID, customer, number_of

TODAY = date(2026, 12, 1)
CITIES = ("Boston", "Denver", "Seattle", "Miami", "Chicago", "Austin", "Phoenix", "Atlanta")
CABINS = ("basic economy", "economy", "business")
FREE_BAGS = {"regular": 0, "silver": 1, "gold": 2}  # per passenger, plus 1 in business
BAG_FEE = 50.0
COMPENSATION = {"cancelled": 100.0, "delayed": 50.0}  # per passenger
TOOLS = Tools()

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
    tools = TOOLS
    slots = by_name(
        USER_ID,
        Slot(
            "reservation_id",
            "reservation number",
            ("reservation", "booking", "confirmation number", "reservation number"),
            r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b",
        ),
        Slot(
            "flight_number",
            "flight number",
            ("flight number", "which flight", "what flight", "new flight"),
            r"\bHAT\d{4}\b",
        ),
        Slot("cabin", "cabin", ("cabin", "class", "fare"), values=CABINS),
        number_of(
            "passengers",
            ("passengers", "how many people", "travellers", "travelers"),
            r"(?:passengers?|people|travell?ers?|persons?)",
        ),
        number_of("bags", ("bags", "baggage", "luggage"), r"(?:checked )?bags?"),
        REFUND,
        Slot("fee", "fee", ("fee", "cost", "charge", "charged", "pay"), MONEY),
        Slot("total", "total", ("total", "price", "cost", "charged"), MONEY),
        Slot(
            "fare_difference",
            "fare difference",
            ("difference", "charged", "refunded", "charge"),
            MONEY,
        ),
        Slot("certificate", "certificate", ("certificate", "voucher", "compensation"), MONEY),
    )
    phrases = {
        "passengers": "We are {value} passengers.",
        "bags": "I'd like {value} checked bags in total.",
    }
    requests = {
        "refund": "How much will I get back?",
        "fee": "How much will that cost me?",
        "total": "What is the total price?",
        "fare_difference": "What is the fare difference?",
        "certificate": "How much is the certificate worth?",
    }

    # ----- the world ----------------------------------------------------------------------
    schema = """
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

    def populate(self, conn: sqlite3.Connection, r: random.Random) -> None:
        users = []
        for _ in range(30):
            uid, name = customer(r)
            member = r.choice(("regular", "regular", "silver", "gold"))
            users.append(uid)
            conn.execute("INSERT OR IGNORE INTO users VALUES (?,?,?)", (uid, name, member))
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
@TOOLS.read("A user's profile (name, membership) and their reservation ids.", {"user_id": STR})
def get_user_details(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    user = one(conn, "SELECT * FROM users WHERE user_id=?", a["user_id"], missing="user not found")
    ids = rows(conn, "SELECT reservation_id FROM reservations WHERE user_id=?", a["user_id"])
    return {**user, "reservations": [r["reservation_id"] for r in ids]}


@TOOLS.read(
    "A reservation: flight, cabin, passengers, bags, insurance, booking date, total.",
    {"reservation_id": STR},
)
def get_reservation_details(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    res = one(
        conn,
        "SELECT r.*, f.origin, f.destination, f.date, f.departs FROM reservations r "
        "JOIN flights f USING (flight_number) WHERE reservation_id=?",
        a["reservation_id"],
        missing="reservation not found",
    )
    res["insurance"] = bool(res["insurance"])
    return res


@TOOLS.read(
    "Flights between two cities on a date (YYYY-MM-DD) with prices and seats left.",
    {"origin": STR, "destination": STR, "date": STR},
)
def search_flights(conn: sqlite3.Connection, a: dict[str, Any]) -> list[dict[str, Any]]:
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


@TOOLS.read("Whether a flight is scheduled, delayed or cancelled.", {"flight_number": STR})
def get_flight_status(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


@TOOLS.write(
    "Book a flight for a user in a cabin for a number of passengers.",
    {
        "user_id": STR,
        "flight_number": STR,
        "cabin": {"type": "string", "enum": list(CABINS)},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
    },
)
def book_reservation(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


@TOOLS.write("Cancel a reservation and refund it, if the policy allows.", {"reservation_id": STR})
def cancel_reservation(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


@TOOLS.write(
    "Move a reservation to another flight on the same route, same cabin.",
    {"reservation_id": STR, "flight_number": STR},
)
def update_reservation_flight(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


@TOOLS.write(
    "Set the total number of checked bags of a reservation (add only).",
    {"reservation_id": STR, "total_bags": {"type": "integer", "minimum": 0, "maximum": 20}},
)
def update_reservation_baggages(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


@TOOLS.write(
    "Issue the compensation certificate the policy allows for a disrupted flight.",
    {"reservation_id": STR},
)
def send_certificate(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
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


def _lookup() -> drafts.Steps:
    return drafts.lookup("reservation_id", "get_reservation_details")


def _decoys(conn: sqlite3.Connection, rid: str) -> dict[str, str]:
    return {"reservation_id": drafts.other_id(conn, "reservations", "reservation_id", rid)}


def _refusal(conn: sqlite3.Connection, key: str, goal: dict[str, Any], why: str) -> dict:
    rid = goal["facts"]["reservation_id"]
    tell = drafts.sorry(f"do that for reservation {{reservation_id}}: {why}")
    return drafts.refused(key, goal, _lookup(), tell, _decoys(conn, rid))


def _granted(
    conn: sqlite3.Connection,
    key: str,
    goal: dict[str, Any],
    call: str,
    said: tuple[str, str],
    amount: float,
    more: dict[str, str] | None = None,
    decoys: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A write on the user's reservation that the rules allow: the reservation looked up, the
    slot of each ``more`` argument of the write (bound as in a plan, ``"$slot"``) asked for, then
    the write proposed and made (``said``: the proposal, the report) and the ``amount`` it costs
    or pays told."""
    rid = goal["facts"]["reservation_id"]
    more = more or {}
    args = {"reservation_id": "$reservation_id", **more}
    confirm, tell = said
    plan = drafts.write(f"{confirm} Shall I proceed?", call, args, tell, [f"{amount:.2f}"])
    asks = [{"ask": bound[1:].partition(":")[0]} for bound in more.values()]
    return drafts.draft(key, goal, [*_lookup(), *asks, *plan], _decoys(conn, rid) | (decoys or {}))


def _cancel_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    res = _pick_reservation(conn, r)
    rid = res["reservation_id"]
    why = cancellable(res, _flight(conn, res["flight_number"]))
    goal = drafts.goal(
        "cancel", "cancel my flight reservation", {"reservation_id": rid}, ["refund"]
    )
    if why:
        return _refusal(conn, f"cancel:{rid}", goal, why)
    refund = f"${res['total']:.2f}"
    said = (
        f"I can cancel reservation {{reservation_id}} with a full refund of {refund}.",
        f"Reservation {{reservation_id}} has been cancelled and {refund} will be refunded to "
        "your original payment.",
    )
    return _granted(conn, f"cancel:{rid}", goal, "cancel_reservation", said, res["total"])


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
    goal = drafts.goal(
        "change",
        f"move my reservation to another flight from {old['origin']} to {old['destination']}",
        {"reservation_id": rid, "flight_number": new["flight_number"]},
        ["fare_difference"],
    )
    if res["cabin"] == "basic economy":
        return _refusal(conn, f"change:{rid}", goal, "basic economy reservations cannot be changed")
    total = money(_price(conn, new["flight_number"], res["cabin"]) * res["passengers"])
    diff = money(total - res["total"])
    said = (
        f"I will move reservation {{reservation_id}} to flight {{flight_number}} on {new['date']}.",
        "Reservation {reservation_id} is now on flight {flight_number}. The fare difference of "
        f"${abs(diff):.2f} has been {'charged' if diff >= 0 else 'refunded'}.",
    )
    first = options[0]["flight_number"]
    decoys = {"flight_number": first} if options[0] is not new else {}
    more = {"flight_number": "$flight_number"}
    return _granted(
        conn, f"change:{rid}", goal, "update_reservation_flight", said, abs(diff), more, decoys
    )


def _bags_task(d: Airline, conn: sqlite3.Connection, r: Any) -> dict[str, Any] | None:
    res = _pick_reservation(conn, r)
    rid = res["reservation_id"]
    total_bags = res["bags"] + r.randrange(1, 3)
    fee = bag_fee(conn, res, total_bags)
    if _flight(conn, res["flight_number"])["date"] < TODAY.isoformat():
        return None
    goal = drafts.goal(
        "bags",
        "add checked bags to my reservation",
        {"reservation_id": rid, "bags": str(total_bags)},
        ["fee"],
    )
    said = (
        "I will set reservation {reservation_id} to {bags} checked bags in total, for a fee of "
        f"${fee:.2f}.",
        f"Reservation {{reservation_id}} has been updated to {{bags}} checked bags. The fee "
        f"charged is ${fee:.2f}.",
    )
    decoys = {"bags": str(total_bags + 1)}
    more = {"total_bags": "$bags:int"}
    return _granted(
        conn, f"bags:{rid}", goal, "update_reservation_baggages", said, fee, more, decoys
    )


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
    goal = drafts.goal(
        "book",
        f"book a flight from {flight['origin']} to {flight['destination']}",
        {
            "user_id": user,
            "flight_number": flight["flight_number"],
            "cabin": cabin,
            "passengers": str(pax),
        },
        ["total"],
    )
    key = f"book:{user}:{flight['flight_number']}"
    ask = [{"ask": "user_id"}, {"ask": "flight_number"}, {"ask": "cabin"}, {"ask": "passengers"}]
    decoys = {"cabin": "basic economy"}
    if flight["seats_left"] < pax:
        status = {"call": "get_flight_status", "args": {"flight_number": "$flight_number"}}
        left = flight["seats_left"]
        tell = "I'm sorry, but flight {flight_number} cannot take {passengers} passengers: "
        tell += f"only {left} seat(s) are left."
        return drafts.refused(key, goal, [*ask, status], tell, decoys)
    total = money(_price(conn, flight["flight_number"], cabin) * pax)
    plan = drafts.write(
        "I will book flight {flight_number} in {cabin} for {passengers} passengers, total "
        f"${total:.2f}. Shall I proceed?",
        "book_reservation",
        {
            "user_id": "$user_id",
            "flight_number": "$flight_number",
            "cabin": "$cabin",
            "passengers": "$passengers:int",
        },
        f"Your flight {{flight_number}} has been booked. The total price is ${total:.2f}.",
        [f"{total:.2f}"],
    )
    return drafts.draft(key, goal, [*ask, *plan], decoys)


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
    goal = drafts.goal(
        "certificate",
        "get compensation for my disrupted flight",
        {"reservation_id": rid},
        ["certificate"],
    )
    if isinstance(amount, str):
        return _refusal(conn, f"cert:{rid}", goal, amount)
    said = (
        f"I can issue a compensation certificate of ${amount:.2f} for reservation "
        "{reservation_id}.",
        f"A certificate worth ${amount:.2f} has been issued for reservation {{reservation_id}}.",
    )
    return _granted(conn, f"cert:{rid}", goal, "send_certificate", said, amount)


Airline.makers = (_cancel_task, _change_task, _bags_task, _book_task, _certificate_task)
