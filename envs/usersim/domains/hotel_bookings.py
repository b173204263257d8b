"""The hotel world's bookings: its venues and limits, the rules both the tools and the task
generator apply, and the tools the assistant calls on the session's database (the domain, its
slots and its task drafts are ``hotel.py``)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from datetime import date, timedelta
from typing import Any

from palaestra.envs.usersim.domain import money, one, rows
from palaestra.envs.usersim.tools import STR, DomainError, RuleBroken, Tools

TODAY = date(2026, 12, 1)
AREAS = ("centre", "north", "south", "east", "west")
FOODS = ("italian", "chinese", "indian", "british", "french", "thai", "spanish", "japanese")
PRICES = ("cheap", "moderate", "expensive")
CUISINES = {  # restaurant: food
    "Bella Napoli": "italian",
    "Pizza Palazzo": "italian",
    "Nonna Rosa": "italian",
    "Golden Wok": "chinese",
    "Jade Dragon": "chinese",
    "Peking Garden": "chinese",
    "Curry Garden": "indian",
    "Maharaja Grill": "indian",
    "Saffron Lounge": "indian",
    "Tamarind Tree": "indian",
    "Copper Kettle": "british",
    "Old Bell Inn": "british",
    "Fitzbillies Kitchen": "british",
    "Midsummer Table": "british",
    "Le Petit Bistro": "french",
    "Chez Marcel": "french",
    "Cafe Rouge": "french",
    "Riverside Brasserie": "french",
    "Bangkok House": "thai",
    "Lotus Leaf": "thai",
    "La Tasca": "spanish",
    "El Toro": "spanish",
    "Sakura Sushi": "japanese",
    "Kyoto Ramen": "japanese",
}
RESTAURANTS = tuple(CUISINES)
HOTELS = (
    "Acorn Guest House",
    "Alexander Lodge",
    "Ashley Hotel",
    "Bridge Guest House",
    "Carolina Lodge",
    "Cityroomz",
    "Gonville Hotel",
    "Hamilton Lodge",
    "Hobsons House",
    "Lensfield Hotel",
    "Limehouse Inn",
    "Lovell Lodge",
    "Allenbell",
    "Warkworth House",
    "Huntingdon Marriott",
    "Autumn House",
)
STREETS = ("Regent", "Trinity", "Mill", "King", "Castle", "Market", "Hills", "Newmarket", "Jesus")
TIMES = ("12:00", "12:30", "13:00", "18:00", "18:30", "19:00", "19:30", "20:00", "20:30")
MAX_TABLE = 8  # people at one restaurant table
MAX_ROOM = 4  # guests in one hotel room (one room per booking)
MAX_NIGHTS = 14
OPENS, CLOSES = "11:00", "22:00"
DAY = {"type": "string", "minLength": 10, "maxLength": 10, "description": "YYYY-MM-DD"}
PEOPLE = {"type": "integer", "minimum": 1, "maximum": 30}
NIGHTS = {"type": "integer", "minimum": 1, "maximum": 60}
TOOLS = Tools()

POLICY = f"""You are a restaurant and hotel booking assistant. Today is {TODAY.isoformat()}.
- Search with the user's constraints (area, food, price range; or area, stars, parking) and
  offer a venue that matches them. Never guess venue names or booking references.
- Check availability before booking. Before any booking or cancellation, state what you will do
  and get the user's explicit yes in their reply to that message.
- Restaurant tables are for 1 to {MAX_TABLE} people, from today on, between {OPENS} and
  {CLOSES}, and only while the restaurant has enough seats left at that time.
- A hotel booking is one room for 1 to {MAX_ROOM} guests and 1 to {MAX_NIGHTS} nights, checking
  in today or later, and needs a free room every night of the stay. The total is the price per
  night times the nights; tell the user the total.
- After booking, tell the user the booking reference.
- A booking can be cancelled only before its day (a restaurant booking) or check-in day (a hotel
  booking), never on that day or after. A hotel booking is refunded in full; tell the user the
  refund. Restaurant bookings cost nothing.
"""


# ----- rules (shared by the tools and the task generator) --------------------------------
def seats_left(conn: sqlite3.Connection, venue: str, day: str, time: str) -> int:
    seats = one(conn, "SELECT seats FROM restaurants WHERE name=?", venue, missing="?")["seats"]
    taken = conn.execute(
        "SELECT coalesce(sum(people), 0) FROM bookings WHERE kind='restaurant' AND venue=? "
        "AND day=? AND time=? AND status='booked'",
        (venue, day, time),
    ).fetchone()[0]
    return int(seats - taken)


def _nights(day: str, nights: int) -> list[str]:
    start = date.fromisoformat(day)
    return [(start + timedelta(days=n)).isoformat() for n in range(nights)]


def rooms_left(conn: sqlite3.Connection, venue: str, day: str, nights: int) -> int:
    """Free rooms on the fullest night of the stay."""
    rooms = one(conn, "SELECT rooms FROM hotels WHERE name=?", venue, missing="?")["rooms"]
    stays = rows(
        conn,
        "SELECT day, nights FROM bookings WHERE kind='hotel' AND venue=? AND status='booked'",
        venue,
    )
    busiest = 0
    for night in _nights(day, nights):
        busiest = max(busiest, sum(night in _nights(s["day"], s["nights"]) for s in stays))
    return rooms - busiest


def _party_problem(day: str, people: int, most: int, limit: str) -> str | None:
    """What any booking must meet, a table or a room: a day still to come, and a party of at
    most ``most`` (``limit`` says so)."""
    if day < TODAY.isoformat():
        return f"{day} is in the past"
    return limit if people > most else None


def restaurant_problem(
    conn: sqlite3.Connection, venue: str, people: int, day: str, time: str
) -> str | None:
    """Why this table cannot be booked, or None."""
    why = _party_problem(day, people, MAX_TABLE, f"tables are for at most {MAX_TABLE} people")
    if why or not OPENS <= time <= CLOSES:
        return why or f"tables can only be booked between {OPENS} and {CLOSES}"
    left = seats_left(conn, venue, day, time)
    return f"{venue} has only {left} seat(s) left on {day} at {time}" if left < people else None


def hotel_problem(
    conn: sqlite3.Connection, venue: str, people: int, day: str, nights: int
) -> str | None:
    """Why this stay cannot be booked, or None."""
    limit = f"a booking is one room for at most {MAX_ROOM} guests"
    why = _party_problem(day, people, MAX_ROOM, limit)
    if why or nights > MAX_NIGHTS:
        return why or f"a stay is at most {MAX_NIGHTS} nights"
    if rooms_left(conn, venue, day, nights) < 1:
        return f"{venue} has no room free for every night from {day} for {nights} night(s)"
    return None


def cancel_problem(booking: dict[str, Any]) -> str | None:
    """Why this booking cannot be cancelled, or None."""
    if booking["status"] != "booked":
        return "it is already cancelled"
    if booking["day"] <= TODAY.isoformat():
        what = "day" if booking["kind"] == "restaurant" else "check-in day"
        return f"bookings can only be cancelled before their {what}, which is {booking['day']}"
    return None


# ----- tool functions (each reads/writes the session's database) -------------------------
def _day(text: str) -> str:
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise DomainError(f"day must be a date YYYY-MM-DD, not {text!r}") from None


def _time(text: str) -> str:
    if not re.fullmatch(r"(?:[01]\d|2[0-3]):[0-5]\d", text):
        raise DomainError(f"time must be HH:MM (24 h), not {text!r}")
    return text


def _venue(conn: sqlite3.Connection, kind: str, name: str) -> dict[str, Any]:
    """A restaurant or hotel by its name as the agent typed it (any case, stray spaces)."""
    return one(
        conn,
        f"SELECT * FROM {kind}s WHERE lower(name)=lower(?)",
        name.strip(),
        missing=f"no {kind} called {name!r}",
    )


@TOOLS.read(
    "Restaurants matching every given constraint, by name: area, food, price range, phone, "
    "address.",
    {
        "area": {"type": "string", "enum": list(AREAS)},
        "food": STR,
        "pricerange": {"type": "string", "enum": list(PRICES)},
        "name": STR,
    },
    required=(),
)
def find_restaurants(conn: sqlite3.Connection, a: dict[str, Any]) -> list[dict[str, Any]]:
    found = [
        {k: v for k, v in x.items() if k != "seats"}
        for x in rows(conn, "SELECT * FROM restaurants ORDER BY name")
        if all(str(x[k]).lower() == str(a[k]).strip().lower() for k in a)
    ]
    if not found:
        raise DomainError("no restaurant matches these constraints")
    return found


@TOOLS.read(
    "Hotels matching every given constraint, by name: area, stars, parking, price per night, "
    "phone, address.",
    {
        "area": {"type": "string", "enum": list(AREAS)},
        "stars": {"type": "integer", "minimum": 1, "maximum": 5},
        "parking": {"type": "boolean"},
        "name": STR,
    },
    required=(),
)
def find_hotels(conn: sqlite3.Connection, a: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for x in rows(conn, "SELECT * FROM hotels ORDER BY name"):
        x = {k: v for k, v in x.items() if k != "rooms"}
        x["parking"] = bool(x["parking"])
        if all(
            (x[k] == v if k != "name" else x[k].lower() == v.strip().lower()) for k, v in a.items()
        ):
            out.append(x)
    if not out:
        raise DomainError("no hotel matches these constraints")
    return out


@TOOLS.read(
    "Whether a restaurant (give time) or hotel (give nights) can take a booking for this many "
    "people on this date, and if not, why.",
    {"name": STR, "day": DAY, "people": PEOPLE, "time": STR, "nights": NIGHTS},
    required=("name", "day", "people"),
)
def check_availability(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    day = _day(a["day"])
    if rows(conn, "SELECT 1 FROM restaurants WHERE lower(name)=lower(?)", a["name"].strip()):
        venue = _venue(conn, "restaurant", a["name"])["name"]
        if "time" not in a:
            raise DomainError("a restaurant booking needs a time")
        time = _time(a["time"])
        why = restaurant_problem(conn, venue, a["people"], day, time)
        left = {"seats_left": max(0, seats_left(conn, venue, day, time))}
    else:
        venue = _venue(conn, "hotel", a["name"])["name"]
        if "nights" not in a:
            raise DomainError("a hotel booking needs the number of nights")
        why = hotel_problem(conn, venue, a["people"], day, a["nights"])
        left = {"rooms_left": max(0, rooms_left(conn, venue, day, a["nights"]))}
    return {"name": venue, "available": why is None, **left, **({"reason": why} if why else {})}


def reference(conn: sqlite3.Connection, key: str) -> str:
    """A new booking's reference: a hash of what was booked and how many bookings exist, so a
    replay of the same calls on the same world gives the same reference."""
    n = conn.execute("SELECT count(*) FROM bookings").fetchone()[0]
    salt = 0
    while True:
        digest = hashlib.sha256(f"{key}:{n}:{salt}".encode()).hexdigest()
        ref = f"HB-{int(digest[:8], 16) % 100000:05d}"
        if not conn.execute("SELECT 1 FROM bookings WHERE reference=?", (ref,)).fetchone():
            return ref
        salt += 1


@TOOLS.write(
    "Book a table; answers the booking reference.",
    {"name": STR, "people": PEOPLE, "day": DAY, "time": STR},
)
def book_restaurant(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    venue = _venue(conn, "restaurant", a["name"])["name"]
    day, time = _day(a["day"]), _time(a["time"])
    why = restaurant_problem(conn, venue, a["people"], day, time)
    if why:
        raise RuleBroken(f"cannot book {venue}: {why}")
    ref = reference(conn, f"restaurant:{venue}:{day}:{time}:{a['people']}")
    conn.execute(
        "INSERT INTO bookings VALUES (?,?,?,?,?,?,?,?,?,?)",
        (ref, "restaurant", venue, a["people"], day, time, None, 0.0, "booked", 0.0),
    )
    return {"reference": ref, "name": venue, "day": day, "time": time, "people": a["people"]}


@TOOLS.write(
    "Book one room from a check-in date for some nights; answers the booking reference and the "
    "total.",
    {"name": STR, "people": PEOPLE, "day": DAY, "nights": NIGHTS},
)
def book_hotel(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    hotel = _venue(conn, "hotel", a["name"])
    day = _day(a["day"])
    why = hotel_problem(conn, hotel["name"], a["people"], day, a["nights"])
    if why:
        raise RuleBroken(f"cannot book {hotel['name']}: {why}")
    total = money(hotel["price"] * a["nights"])
    ref = reference(conn, f"hotel:{hotel['name']}:{day}:{a['nights']}:{a['people']}")
    conn.execute(
        "INSERT INTO bookings VALUES (?,?,?,?,?,?,?,?,?,?)",
        (ref, "hotel", hotel["name"], a["people"], day, None, a["nights"], total, "booked", 0.0),
    )
    return {"reference": ref, "name": hotel["name"], "day": day, "total": total}


def _booking(conn: sqlite3.Connection, ref: str) -> dict[str, Any]:
    return one(
        conn,
        "SELECT * FROM bookings WHERE upper(reference)=upper(?)",
        ref.strip(),
        missing="booking not found",
    )


@TOOLS.read(
    "A booking by its reference: venue, date, time or nights, people, total, status.",
    {"reference": STR},
)
def get_booking(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in _booking(conn, a["reference"]).items() if v is not None}


@TOOLS.write(
    "Cancel a booking, if the policy allows; a hotel booking is refunded.", {"reference": STR}
)
def cancel_booking(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    booking = _booking(conn, a["reference"])
    why = cancel_problem(booking)
    if why:
        raise RuleBroken(f"booking {booking['reference']} cannot be cancelled: {why}")
    refund = booking["total"] if booking["kind"] == "hotel" else 0.0
    conn.execute(
        "UPDATE bookings SET status='cancelled', refund=? WHERE reference=?",
        (refund, booking["reference"]),
    )
    return {"reference": booking["reference"], "status": "cancelled", "refund": refund}
