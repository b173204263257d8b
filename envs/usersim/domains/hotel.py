"""Hotel: find and book restaurants and hotels, MultiWOZ style, under capacity and date rules.

The user knows constraints (area, food, price range, stars, parking) and the details of the
booking (people, date, time, nights); the assistant searches, offers a venue that fits, books it
after the user's yes and tells the booking reference. The user "prefers" the venue the generator
picked (the first match, in the order the search tool lists them), so an assistant that offers
another is told which one it wants, and the gold world is a single one.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import timedelta
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Slot, by_name
from palaestra.envs.usersim import drafts
from palaestra.envs.usersim.domain import Domain, money, one, rows
from palaestra.envs.usersim.domains.hotel_bookings import (
    AREAS,
    CUISINES,
    FOODS,
    HOTELS,
    MAX_ROOM,
    MAX_TABLE,
    POLICY,
    PRICES,
    RESTAURANTS,
    STREETS,
    TIMES,
    TODAY,
    TOOLS,
    cancel_problem,
    find_hotels,
    find_restaurants,
    hotel_problem,
    restaurant_problem,
    rooms_left,
    seats_left,
)
from palaestra.envs.usersim.vocab import MONEY, REFUND, number_of


def _venue_name(kind: str, names: tuple[str, ...]) -> Slot:
    """Restaurants and hotels are asked for by name in the same words."""
    words = (f"{kind} name", f"which {kind}", f"name of the {kind}")
    return Slot(kind, f"{kind} name", words, values=names)


class Hotel(Domain):
    name = "hotel"
    title = "CityStay Bookings"
    policy = POLICY
    tools = TOOLS
    slots = by_name(
        Slot("area", "preferred area", ("area", "part of town"), values=AREAS),
        Slot("food", "type of food", ("food", "cuisine"), values=FOODS),
        Slot("pricerange", "price range", ("price range", "budget"), values=PRICES),
        _venue_name("restaurant", RESTAURANTS),
        _venue_name("hotel", HOTELS),
        Slot("stars", "star rating", ("stars", "star rating"), r"\b([1-5])[- ]stars?\b"),
        Slot("parking", "parking", ("parking",), values=("free parking",)),
        number_of(
            "people",
            ("people", "how many people", "party size", "guests"),
            r"(?:people|persons?|guests?)",
        ),
        Slot("day", "date", ("date", "which day", "check-in"), r"\b(20\d\d-\d\d-\d\d)\b"),
        Slot("time", "time", ("time", "what time"), r"\b((?:[01]\d|2[0-3]):[0-5]\d)\b"),
        number_of("nights", ("nights", "how many nights", "length of stay"), r"nights?"),
        Slot(
            "reference",
            "booking reference",
            ("reference", "booking reference", "reference number"),
            r"\bHB-\d{5}\b",
        ),
        Slot("phone", "phone number", ("phone", "telephone"), r"\b01223 \d{6}\b"),
        Slot(
            "address",
            "address",
            ("address", "located"),
            r"\b\d{1,3} [A-Z][a-z]+ (?:Street|Road|Lane)\b",
        ),
        Slot("total", "total", ("total", "in total"), MONEY),
        REFUND,
    )
    phrases = {
        "area": "We want somewhere in the {value}.",
        "food": "We want {value} food.",
        "pricerange": "We want something in the {value} price range.",
        "restaurant": "The restaurant is {value}.",
        "hotel": "The hotel is {value}.",
        "stars": "We want a {value}-star hotel.",
        "parking": "We need {value}.",
        "people": "We are {value} people.",
        "day": "It's for {value}.",
        "time": "It's for {value}.",
        "nights": "We want to stay {value} nights.",
    }
    requests = {
        "reference": "What is the booking reference?",
        "phone": "What is their phone number?",
        "address": "What is the address?",
        "total": "What is the total price?",
        "refund": "How much will be refunded?",
    }

    refuse_share = 0.22
    today = TODAY.isoformat()

    # ----- the world ----------------------------------------------------------------------
    schema = """
        CREATE TABLE restaurants (name TEXT PRIMARY KEY, area TEXT, food TEXT,
            pricerange TEXT, phone TEXT, address TEXT, seats INTEGER);
        CREATE TABLE hotels (name TEXT PRIMARY KEY, area TEXT, stars INTEGER,
            parking INTEGER, price REAL, phone TEXT, address TEXT, rooms INTEGER);
        CREATE TABLE bookings (reference TEXT PRIMARY KEY, kind TEXT, venue TEXT,
            people INTEGER, day TEXT, time TEXT, nights INTEGER, total REAL, status TEXT,
            refund REAL);
        """

    def populate(self, conn: sqlite3.Connection, r: random.Random) -> None:
        phones: set[str] = set()

        def phone() -> str:
            while True:
                p = f"01223 {r.randrange(200000, 999999)}"
                if p not in phones:
                    phones.add(p)
                    return p

        def address() -> str:
            return (
                f"{r.randrange(1, 200)} {r.choice(STREETS)} {r.choice(('Street', 'Road', 'Lane'))}"
            )

        for name, food in CUISINES.items():
            conn.execute(
                "INSERT INTO restaurants VALUES (?,?,?,?,?,?,?)",
                (
                    name,
                    r.choice(AREAS),
                    food,
                    r.choice(PRICES),
                    phone(),
                    address(),
                    r.choice((8, 10, 12)),
                ),
            )
        for name in HOTELS:
            stars = r.randrange(2, 6)
            conn.execute(
                "INSERT INTO hotels VALUES (?,?,?,?,?,?,?,?)",
                (
                    name,
                    r.choice(AREAS),
                    stars,
                    int(r.random() < 0.6),
                    float(stars * 30 + r.randrange(0, 60)),
                    phone(),
                    address(),
                    r.randrange(1, 4),
                ),
            )
        refs: set[str] = set()
        for i in range(110):
            ref = f"HB-{r.randrange(100000):05d}"
            day = (TODAY + timedelta(days=r.randrange(-3, 8))).isoformat()
            status = "cancelled" if r.random() < 0.1 else "booked"
            if ref in refs:
                continue
            row: tuple[object, ...]
            if i % 3:  # two restaurant bookings for each hotel booking, busiest in the evening
                venue = r.choice(RESTAURANTS)
                time = r.choice(("19:00", "19:30", "20:00", "12:30"))
                people = r.randrange(2, MAX_TABLE + 1)
                if seats_left(conn, venue, day, time) < people:
                    continue
                row = (ref, "restaurant", venue, people, day, time, None, 0.0, status, 0.0)
            else:
                venue = r.choice(HOTELS)
                nights = r.randrange(1, 5)
                if rooms_left(conn, venue, day, nights) < 1:
                    continue
                price = one(conn, "SELECT price FROM hotels WHERE name=?", venue, missing="?")
                total = money(price["price"] * nights)
                people = r.randrange(1, MAX_ROOM + 1)
                refund = total if status == "cancelled" else 0.0
                row = (ref, "hotel", venue, people, day, None, nights, total, status, refund)
            refs.add(ref)
            conn.execute("INSERT INTO bookings VALUES (?,?,?,?,?,?,?,?,?,?)", row)


# ----- task drafts: a goal and the reference plan that serves it -------------------------
def _days() -> list[str]:
    return [(TODAY + timedelta(days=n)).isoformat() for n in range(0, 8)]


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _other(values: tuple[str, ...] | list[str], value: str) -> str:
    return next(v for v in values if v != value)


def _table(conn: sqlite3.Connection, r: Any, venue: str, refuse: bool) -> tuple[int, str, str]:
    """People, day and time for a table at ``venue``: bookable, or (``refuse``) not."""
    if not refuse:
        for _ in range(20):
            people, day, time = r.randrange(1, 7), r.choice(_days()), r.choice(TIMES)
            if restaurant_problem(conn, venue, people, day, time) is None:
                return people, day, time
    full = [
        (left + 1, day, time)
        for day in _days()
        for time in TIMES
        if (left := seats_left(conn, venue, day, time)) < MAX_TABLE
    ]
    if full and r.random() < 0.7:
        return r.choice(full)
    return r.randrange(MAX_TABLE + 1, MAX_TABLE + 5), r.choice(_days()), r.choice(TIMES)


def _stay(conn: sqlite3.Connection, r: Any, venue: str, refuse: bool) -> tuple[int, str, int]:
    """People, check-in day and nights at ``venue``: bookable, or (``refuse``) not."""
    if not refuse:
        for _ in range(20):
            people, day, nights = r.randrange(1, MAX_ROOM + 1), r.choice(_days()), r.randrange(1, 5)
            if hotel_problem(conn, venue, people, day, nights) is None:
                return people, day, nights
    full = [
        (r.randrange(1, MAX_ROOM + 1), day, nights)
        for day in _days()
        for nights in (1, 2, 3)
        if rooms_left(conn, venue, day, nights) < 1
    ]
    if full and r.random() < 0.7:
        return r.choice(full)
    return r.randrange(MAX_ROOM + 1, MAX_ROOM + 3), r.choice(_days()), r.randrange(1, 4)


def _when(room: bool) -> tuple[str, str]:
    """The slot that says when (a room's nights, a table's time) and how a plan binds it."""
    return ("nights", "$nights:int") if room else ("time", "$time")


def _booking_asks(room: bool, name: str) -> drafts.Steps:
    """What a table or a room needs asked, and the availability check. ``name`` is the tool
    argument: the found venue, or "$restaurant"/"$hotel" when it is the user's own."""
    when, arg = _when(room)
    return [
        {"ask": "people"},
        {"ask": "day"},
        {"ask": when},
        {
            "call": "check_availability",
            "args": {"name": name, "day": "$day", "people": "$people:int", when: arg},
        },
    ]


def _booking_draft(
    d: Hotel,
    conn: sqlite3.Connection,
    draft: dict[str, Any],
    head: drafts.Steps,
    venue: dict[str, Any],
    named: bool,
    extra: str = "",
    extra_facts: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The tail every booking draft shares: a refusal when the rules forbid it, else the
    booking, made on a scratch copy first so the plan tells the reference (and a room's total).
    ``named``: the user names the venue, so the plan uses what it said; ``extra`` is one more
    sentence to tell (the address or phone the user also asked for)."""
    key, goal, decoys = draft["key"], draft["goal"], draft["decoys"]
    facts = goal["facts"]
    room = "nights" in facts
    slot, tool = ("hotel", "book_hotel") if room else ("restaurant", "book_restaurant")
    name, text = (f"${slot}", f"{{{slot}}}") if named else (venue["name"], venue["name"])
    people, day = int(facts["people"]), facts["day"]
    when_key, when_arg = _when(room)
    when: Any = int(facts["nights"]) if room else facts["time"]
    check = hotel_problem if room else restaurant_problem
    why = check(conn, venue["name"], people, day, when)
    asks = [*head, *_booking_asks(room, name)]
    what = f"book {'a room' if room else 'a table'} at {text} for {{people}} people"
    stay = "from {day} for {nights} nights" if room else "on {day} at {time}"
    if why:
        return drafts.refused(key, goal, asks, drafts.sorry(f"{what} {stay}: {why}"), decoys)
    result = d.trial(
        conn, tool, {"name": venue["name"], "people": people, "day": day, when_key: when}
    )
    told = [result["reference"]]
    price = ""
    if room:
        total = result["total"]
        price = f", for a total of ${total:.2f}"
        tell = (
            f"Your room at {text} has been booked from {{day}} for {{nights}} nights. Your "
            f"booking reference is {result['reference']}, and the total price is ${total:.2f}."
        )
        told.append(f"{total:.2f}")
    else:
        tell = (
            f"Your table at {text} has been booked for {{people}} people on {{day}} at {{time}}. "
            f"Your booking reference is {result['reference']}."
        )
    call_args = {"name": name, "people": "$people:int", "day": "$day", when_key: when_arg}
    plan = drafts.write(f"Shall I {what} {stay}{price}?", tool, call_args, tell, told)
    if extra:
        plan.append({"tell": extra, "facts": list(extra_facts)})
    return drafts.draft(key, goal, [*asks, *plan], decoys)


def _restaurant_search(conn: sqlite3.Connection, r: Any) -> tuple[dict, dict, str, drafts.Steps]:
    """A restaurant the user looks for by area, food and price range: the first match, the
    search criteria, how the user describes what it wants, and the steps that find it."""
    pick = r.choice(rows(conn, "SELECT * FROM restaurants ORDER BY name"))
    criteria = {k: pick[k] for k in ("area", "food", "pricerange")}
    wanted = f"{_a(pick['pricerange'])} {pick['food']} restaurant in the {pick['area']}"
    search: drafts.Steps = [
        {"ask": "area"},
        {"ask": "food"},
        {"ask": "pricerange"},
        {
            "call": "find_restaurants",
            "args": {"area": "$area", "food": "$food", "pricerange": "$pricerange"},
        },
    ]
    return find_restaurants(conn, criteria)[0], criteria, wanted, search


def _restaurant_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    """Search by area, food and price range; the first match is the one the user takes."""
    venue, criteria, wanted, search = _restaurant_search(conn, r)
    people, day, time = _table(conn, r, venue["name"], refuse)
    facts = {**criteria, "restaurant": venue["name"], "people": str(people), "day": day}
    facts["time"] = time
    goal = drafts.goal("restaurant", f"book a table at {wanted}", facts, ["reference"])
    key = f"restaurant:{venue['name']}:{day}:{time}:{people}"
    decoys = {"area": _other(AREAS, criteria["area"]), "people": str(people + 1)}
    offer = {
        "offer": f"How about {venue['name']}, a restaurant in the {{area}} serving {{food}} "
        "food in the {pricerange} price range?"
    }
    draft = {"key": key, "goal": goal, "decoys": decoys}
    return _booking_draft(d, conn, draft, [*search, offer], venue, named=False)


def _hotel_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    """Search by area, stars and (sometimes) parking; the first match is the user's."""
    pick = r.choice(rows(conn, "SELECT * FROM hotels ORDER BY name"))
    wants_parking = bool(pick["parking"]) and r.random() < 0.6
    criteria: dict[str, Any] = {"area": pick["area"], "stars": pick["stars"]}
    if wants_parking:
        criteria["parking"] = True
    venue = find_hotels(conn, criteria)[0]
    people, day, nights = _stay(conn, r, venue["name"], refuse)
    facts = {"area": pick["area"], "stars": str(pick["stars"])}
    if wants_parking:
        facts["parking"] = "free parking"
    facts.update(hotel=venue["name"], people=str(people), day=day, nights=str(nights))
    goal = drafts.goal(
        "hotel",
        f"book a {pick['stars']}-star hotel in the {pick['area']}"
        + (" with free parking" if wants_parking else ""),
        facts,
        ["reference", "total"],
    )
    key = f"hotel:{venue['name']}:{day}:{nights}:{people}"
    decoys = {"area": _other(AREAS, pick["area"]), "nights": str(nights + 1)}
    args: dict[str, Any] = {"area": "$area", "stars": "$stars:int"}
    asks = [{"ask": "area"}, {"ask": "stars"}]
    with_parking = ""
    if wants_parking:
        args["parking"] = True
        asks.append({"ask": "parking"})
        with_parking = " with {parking}"
    search: drafts.Steps = [
        *asks,
        {"call": "find_hotels", "args": args},
        {
            "offer": f"How about {venue['name']}, a {{stars}}-star hotel in the "
            f"{{area}}{with_parking}?"
        },
    ]
    draft = {"key": key, "goal": goal, "decoys": decoys}
    return _booking_draft(d, conn, draft, search, venue, named=False)


def _named_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool, kind: str) -> dict:
    """The user knows the venue by name and wants one more of its details: a restaurant's
    address, a hotel's phone number."""
    room = kind == "hotel"
    venue = r.choice(rows(conn, f"SELECT * FROM {kind}s ORDER BY name"))
    name = venue["name"]
    people, day, when = (_stay if room else _table)(conn, r, name, refuse)
    facts = {
        kind: name,
        "people": str(people),
        "day": day,
        ("nights" if room else "time"): str(when),
    }
    phrase = f"book {'a room' if room else 'a table'} at {name}"
    requests = ["reference", "total", "phone"] if room else ["reference", "address"]
    goal = drafts.goal(f"{kind}_by_name", phrase, facts, requests)
    if room:
        decoys = {"hotel": _other(HOTELS, name), "people": str(people % MAX_ROOM + 1)}
        extra, told = f"The phone number of the hotel is {venue['phone']}.", venue["phone"]
    else:
        decoys = {"restaurant": _other(RESTAURANTS, name), "time": _other(TIMES, str(when))}
        extra, told = f"The address of {{restaurant}} is {venue['address']}.", venue["address"]
    draft = {"key": f"named-{kind}:{name}:{day}:{when}:{people}", "goal": goal, "decoys": decoys}
    lookup = drafts.lookup(kind, f"find_{kind}s", "name")
    return _booking_draft(d, conn, draft, lookup, venue, True, extra, (told,))


def _named_restaurant_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    return _named_task(d, conn, r, refuse, "restaurant")


def _named_hotel_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    return _named_task(d, conn, r, refuse, "hotel")


def _cancel_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    bookings = [
        b
        for b in rows(conn, "SELECT * FROM bookings ORDER BY reference")
        if (cancel_problem(b) is not None) == refuse and b["day"] >= TODAY.isoformat()
    ]
    if not bookings:
        return None
    booking = r.choice(bookings)
    ref, venue, kind = booking["reference"], booking["venue"], booking["kind"]
    hotel = kind == "hotel"
    goal = drafts.goal(
        "cancel",
        f"cancel my {'hotel' if hotel else 'restaurant'} booking at {venue}",
        {"reference": ref, ("hotel" if hotel else "restaurant"): venue},
        ["refund"] if hotel else [],
    )
    others = [b["reference"] for b in bookings if b["reference"] != ref]
    decoys = {"reference": others[0] if others else "HB-00000"}
    lookup = drafts.lookup("reference", "get_booking")
    why = cancel_problem(booking)
    if why:
        tell = drafts.sorry(f"cancel booking {{reference}} at {venue}: {why}")
        return drafts.refused(f"cancel:{ref}", goal, lookup, tell, decoys)
    total = f"${booking['total']:.2f}"
    plan = drafts.write(
        f"Shall I cancel booking {{reference}} at {venue} on {booking['day']}"
        + (f", with a full refund of {total}?" if hotel else "?"),
        "cancel_booking",
        {"reference": "$reference"},
        f"Booking {{reference}} at {venue} has been cancelled."
        + (f" {total} will be refunded to your card." if hotel else ""),
        [total[1:]] if hotel else [ref],
    )
    return drafts.draft(f"cancel:{ref}", goal, [*lookup, *plan], decoys)


def _info_task(d: Hotel, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    """A question only (MultiWOZ's 'find me a place and its phone number'): nothing is written,
    so the phone number and address told are the whole outcome."""
    if refuse:
        return None
    venue, criteria, wanted, search = _restaurant_search(conn, r)
    goal = drafts.goal(
        "restaurant_info",
        f"find {wanted} and get its phone number and address",
        {**criteria, "restaurant": venue["name"]},
        ["phone", "address"],
        action=False,
    )
    tell = {
        "tell": f"{venue['name']}, in the {{area}}, serves {{food}} food in the {{pricerange}} "
        f"price range. Its phone number is {venue['phone']} and its address is "
        f"{venue['address']}.",
        "facts": [venue["phone"], venue["address"]],
    }
    decoys = {"area": _other(AREAS, criteria["area"])}
    return drafts.draft(f"info:{venue['name']}", goal, [*search, tell], decoys)


Hotel.makers = (
    _restaurant_task,
    _hotel_task,
    _cancel_task,
    _named_restaurant_task,
    _named_hotel_task,
    _info_task,
)
