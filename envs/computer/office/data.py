"""Realistic records for the office generators, drawn from our synthesized domains.

The shop, bank, calendar and train domains (``synth_apps/domains/*.yaml``) already seed
believable data: a product catalog with prices and stock, accounts, payees and transactions,
a team calendar, names and cities from Faker. A document generator here reads those seeded
databases (built once per seed by :func:`palaestra.synth_apps.data.template`) instead of
inventing a second world, and shapes them into what office files hold: invoices, budgets,
schedules, inventories, grade books, companies with staff, meetings, quarterly figures.

Everything is a pure function of the seed: the domain databases are seeded, and each shaping
step draws from its own ``random.Random`` keyed by (seed, purpose), so adding a draw to one
shape never moves the records of another. Results are cached per seed (frozen dataclasses).
"""

from __future__ import annotations

import datetime as dt
import functools
import random
from dataclasses import dataclass
from typing import Any

from palaestra.synth_apps import data as synth_data
from palaestra.synth_apps import spec as synth_spec

#: the domains' "today": every generated date is around it
TODAY = dt.date(2026, 12, 1)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
ROLES = (
    "Operations Manager",
    "Finance Lead",
    "Product Manager",
    "Sales Director",
    "Office Coordinator",
    "Marketing Lead",
    "Head of Support",
    "Engineering Manager",
)


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    city: str
    address: str
    role: str

    @property
    def first(self) -> str:
        return self.name.split()[0]

    @property
    def last(self) -> str:
        return self.name.split()[-1]


@dataclass(frozen=True)
class Product:
    name: str
    category: str
    price: float
    stock: int


@dataclass(frozen=True)
class Account:
    number: str
    owner: str
    kind: str
    balance: float


@dataclass(frozen=True)
class Transaction:
    reference: str
    date: dt.date
    account: str
    payee: str
    category: str  # the payee's category (Utilities, Housing, Shopping, Services, Personal)
    amount: float
    memo: str


@dataclass(frozen=True)
class Event:
    title: str
    date: dt.date
    starts: str  # "HH:MM"
    ends: str
    location: str
    organizer: str


@dataclass(frozen=True)
class Records:
    """One seed's raw records from the domains, before any document shape."""

    seed: int
    people: tuple[Person, ...]
    products: tuple[Product, ...]
    accounts: tuple[Account, ...]
    transactions: tuple[Transaction, ...]
    events: tuple[Event, ...]
    companies: tuple[str, ...]


def rng(seed: int, purpose: str) -> random.Random:
    """A generator of its own for each (seed, purpose): draws of one shape never move another."""
    return random.Random(f"office:{seed}:{purpose}")


@functools.cache
def _spec(domain: str) -> Any:
    """A domain's spec, parsed once per process (every seed's records read the same YAML)."""
    return synth_spec.load_spec(domain)


def _rows(domain: str, seed: int) -> dict[str, list[dict[str, Any]]]:
    spec = _spec(domain)
    with synth_data.opened(synth_data.template(spec, seed), readonly=True) as conn:
        scope = synth_data.Scope(spec, conn)
        return {name: scope.rows(name) for name in spec.entities}


def _email(name: str, company: str) -> str:
    host = "".join(c for c in company.lower() if c.isalnum())[:16] or "example"
    user = ".".join(p.lower() for p in name.replace(".", "").split()[:2])
    return f"{user}@{host}.example"


@functools.lru_cache(maxsize=16)
def records(seed: int) -> Records:
    shop, bank = _rows("shop", seed), _rows("bank", seed)
    cal, train = _rows("calendar", seed), _rows("train", seed)
    companies = tuple(
        dict.fromkeys(
            ["Cartwheel", "Lakeside Bank", "RailWay"]
            + [a["owner"] for a in bank["account"] if " " in a["owner"] and a["owner"][-1] != "e"]
            + [p["name"] for p in bank["payee"] if p["category"] != "Personal"]
        )
    )
    r = rng(seed, "people")
    names: dict[str, tuple[str, str]] = {}
    for o in shop["orders"]:
        names.setdefault(o["recipient"], (o["city"], o["address"]))
    stations = [s["name"] for s in train["station"]]
    for n in [i["invitee"] for i in cal["invitation"]] + [b["passenger"] for b in train["booking"]]:
        names.setdefault(n, (r.choice(stations), f"{r.randint(2, 990)} {r.choice(stations)} Road"))
    people = tuple(
        Person(n, _email(n, companies[i % len(companies)]), city, addr, ROLES[i % len(ROLES)])
        for i, (n, (city, addr)) in enumerate(sorted(names.items()))
        if len(n.split()) == 2  # plain "First Last": no "Dr."/"MD" noise in a letter's salutation
    )
    people = tuple(r.sample(people, len(people)))
    category = {p["name"]: p["category"] for p in bank["payee"]}
    return Records(
        seed=seed,
        people=people,
        products=tuple(
            Product(p["name"], p["category"], p["price"], p["stock"]) for p in shop["product"]
        ),
        accounts=tuple(
            Account(a["number"], a["owner"], a["kind"], a["balance"]) for a in bank["account"]
        ),
        transactions=tuple(
            Transaction(
                t["reference"],
                t["date"],
                t["account"],
                t["payee"],
                category[t["payee"]],
                t["amount"],
                t["memo"],
            )
            for t in bank["transactions"]
        ),
        events=tuple(
            Event(e["title"], e["date"], e["starts"], e["ends"], e["location"], e["organizer"])
            for e in cal["event"]
        ),
        companies=companies,
    )


# --- document shapes -----------------------------------------------------------------------


@dataclass(frozen=True)
class InvoiceLine:
    product: str
    category: str
    quantity: int
    unit_price: float

    @property
    def amount(self) -> float:
        return round(self.quantity * self.unit_price, 2)


@dataclass(frozen=True)
class Invoice:
    number: str
    date: dt.date
    due: dt.date
    seller: str
    customer: Person
    lines: tuple[InvoiceLine, ...]
    tax_rate: float  # e.g. 0.08

    @property
    def subtotal(self) -> float:
        return round(sum(line.amount for line in self.lines), 2)


def invoice(seed: int, lines: int = 6) -> Invoice:
    rec, r = records(seed), rng(seed, "invoice")
    picked = r.sample(rec.products, lines)
    day = TODAY - dt.timedelta(days=r.randint(1, 20))
    return Invoice(
        number=f"INV-{r.randint(1000, 9999)}",
        date=day,
        due=day + dt.timedelta(days=30),
        seller="Cartwheel",
        customer=r.choice(rec.people),
        lines=tuple(InvoiceLine(p.name, p.category, r.randint(1, 12), p.price) for p in picked),
        tax_rate=r.choice((0.05, 0.07, 0.08, 0.1)),
    )


@dataclass(frozen=True)
class BudgetLine:
    category: str
    item: str
    amounts: tuple[float, ...]  # one per month of the budget


@dataclass(frozen=True)
class Budget:
    owner: str
    year: int
    months: tuple[str, ...]
    lines: tuple[BudgetLine, ...]


def budget(seed: int, months: int = 6) -> Budget:
    """Monthly spending per payee, scaled from the seed's real transactions to that payee."""
    rec, r = records(seed), rng(seed, "budget")
    spent: dict[tuple[str, str], list[float]] = {}
    for t in rec.transactions:
        spent.setdefault((t.category, t.payee), []).append(t.amount)
    lines = []
    for (cat, payee), amounts in sorted(spent.items()):
        base = sum(amounts) / len(amounts)
        monthly = tuple(round(base * r.uniform(0.8, 1.2), 2) for _ in range(months))
        lines.append(BudgetLine(cat, payee, monthly))
    owner = r.choice([a.owner for a in rec.accounts])
    return Budget(owner, TODAY.year + 1, MONTHS[:months], tuple(lines))


def schedule(seed: int, count: int = 12) -> tuple[Event, ...]:
    """Upcoming events of the team calendar, in date and start order."""
    rec, r = records(seed), rng(seed, "schedule")
    upcoming = [e for e in rec.events if e.date >= TODAY]
    picked = r.sample(upcoming, min(count, len(upcoming)))
    return tuple(sorted(picked, key=lambda e: (e.date, e.starts, e.title)))


@dataclass(frozen=True)
class StockItem:
    sku: str
    name: str
    category: str
    stock: int
    reorder_level: int
    unit_cost: float
    location: str


def inventory(seed: int, count: int = 15) -> tuple[StockItem, ...]:
    rec, r = records(seed), rng(seed, "inventory")
    picked = r.sample(rec.products, min(count, len(rec.products)))
    numbers = r.sample(range(100, 1000), len(picked))  # distinct: a SKU names one item
    return tuple(
        StockItem(
            sku=f"{p.category[:3].upper()}-{numbers[i]}",
            name=p.name,
            category=p.category,
            stock=p.stock,
            reorder_level=r.randint(3, 10),
            unit_cost=round(p.price * r.uniform(0.45, 0.7), 2),
            location=f"Aisle {r.randint(1, 9)}{r.choice('ABC')}",
        )
        for i, p in enumerate(picked)
    )


@dataclass(frozen=True)
class GradeBook:
    course: str
    teacher: str
    assignments: tuple[str, ...]
    students: tuple[tuple[str, tuple[int, ...]], ...]  # (name, one score out of 100 each)


COURSES = ("Biology 101", "World History", "Algebra II", "Intro to Economics", "Chemistry 201")


def gradebook(seed: int, students: int = 12) -> GradeBook:
    rec, r = records(seed), rng(seed, "grades")
    people = r.sample(rec.people, min(students + 1, len(rec.people)))
    works = ("Quiz 1", "Essay", "Quiz 2", "Lab report", "Midterm", "Project", "Final")
    assignments = tuple(w for w in works if r.random() < 0.75) or works[:4]
    rows = []
    for p in people[1:]:
        level = r.randint(55, 95)
        scores = tuple(max(0, min(100, level + r.randint(-15, 12))) for _ in assignments)
        rows.append((p.name, scores))
    return GradeBook(r.choice(COURSES), people[0].name, assignments, tuple(rows))


@dataclass(frozen=True)
class Company:
    name: str
    city: str
    staff: tuple[Person, ...]
    products: tuple[Product, ...]
    quarters: tuple[tuple[str, float, int], ...]  # (label, revenue, customers) oldest first


def company(seed: int, staff: int = 6) -> Company:
    """A company for letters, reports and pitch decks: its people, products and figures."""
    rec, r = records(seed), rng(seed, "company")
    name = r.choice(rec.companies)
    team = tuple(r.sample(rec.people, min(staff, len(rec.people))))
    revenue, customers, quarters = r.uniform(80_000, 400_000), r.randint(200, 3000), []
    for i in range(6):
        year, q = TODAY.year - 1 + (i + 2) // 4, (i + 2) % 4 + 1
        quarters.append((f"Q{q} {year}", round(revenue, -2), customers))
        revenue *= r.uniform(0.95, 1.25)
        customers = int(customers * r.uniform(0.97, 1.2))
    return Company(name, team[0].city, team, tuple(r.sample(rec.products, 5)), tuple(quarters))


@dataclass(frozen=True)
class Meeting:
    title: str
    date: dt.date
    starts: str
    location: str
    chair: str
    attendees: tuple[str, ...]
    agenda: tuple[str, ...]
    actions: tuple[tuple[str, str, dt.date], ...]  # (what, who, by when)


def meeting(seed: int) -> Meeting:
    """A meeting from the calendar with an agenda drawn from other events' subjects."""
    rec, r = records(seed), rng(seed, "meeting")
    event = r.choice([e for e in rec.events if e.date >= TODAY])
    people = r.sample(rec.people, 5)
    others = [e.title for e in rec.events if e.title != event.title]
    agenda = tuple(r.sample(others, 4))
    actions = tuple(
        (f"Follow up on {a.lower()}", p.name, event.date + dt.timedelta(days=r.randint(3, 14)))
        for a, p in zip(agenda[:3], people[1:], strict=False)
    )
    return Meeting(
        event.title,
        event.date,
        event.starts,
        event.location,
        people[0].name,
        tuple(p.name for p in people),
        agenda,
        actions,
    )
