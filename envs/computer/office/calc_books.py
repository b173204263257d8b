"""The workbooks the Calc templates start from, made of :mod:`.data`'s records.

Each maker returns a :class:`Book`: the sheets as the file holds them, plus the plain rows
(header and body) the templates compute their expected answers from, so a template never
re-derives a number from the file it wrote. Column widths follow the longest text so the
document opens readable (no ``###`` cells).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, cast

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office.calc_files import Cell, Sheet, Value, col_name, table

MONEY = "#,##0.00"


@dataclass
class Book:
    name: str  # the sheet's name
    header: list[str]
    body: list[list[Value]]
    fmts: dict[int, str]

    @property
    def last_row(self) -> int:
        """The 1-based row of the table's last line."""
        return len(self.body) + 1

    def col(self, title: str) -> str:
        return col_name(self.header.index(title))

    def column(self, title: str) -> list[Value]:
        i = self.header.index(title)
        return [row[i] for row in self.body]

    def numbers(self, title: str) -> list[float]:
        return [cast(float, v) for v in self.column(title)]

    def texts(self, title: str) -> list[str]:
        return [cast(str, v) for v in self.column(title)]

    def day(self, row: int, col: int) -> dt.date:
        return cast(dt.date, self.body[row][col])

    def pinned(self) -> dict[str, Any]:
        """The assertion that the table (header and body) still holds exactly its values:
        what a task about its form (a format, a freeze, a chart) must leave alone."""
        last = col_name(len(self.header) - 1)
        rows = [self.header, *(plain(row) for row in self.body)]
        return {"range": f"A1:{last}{self.last_row}", "values": rows}

    def sheet(self, bold: bool = True, fmts: bool = True, extra: list | None = None) -> Sheet:
        rows = table(self.header, self.body, self.fmts if fmts else None)
        if not bold:
            rows[0] = [Cell(h) for h in self.header]
        rows += extra or []
        return Sheet(self.name, rows, widths(self.header, self.body))


def plain(row: list[Value]) -> list[Any]:
    """A row as a check spec holds it (a date as ``{"date": "YYYY-MM-DD"}``)."""
    return [{"date": v.isoformat()} if isinstance(v, dt.date) else v for v in row]


def widths(header: list[str], body: list[list[Value]]) -> dict[int, float]:
    out = {}
    for i, h in enumerate(header):
        texts = [h] + [_shown(row[i]) for row in body if i < len(row)]
        out[i] = float(min(45, max(9, max(len(t) for t in texts) + 2)))
    return out


def _shown(v: Value) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}"
    return "" if v is None else str(v)


def invoice(seed: int, amounts: bool = False) -> tuple[Book, data.Invoice]:
    inv = data.invoice(seed, lines=6 + seed % 3)
    header = ["Product", "Category", "Qty", "Unit Price"] + (["Amount"] if amounts else [])
    body: list[list[Value]] = []
    for line in inv.lines:
        row: list[Value] = [line.product, line.category, line.quantity, line.unit_price]
        body.append(row + ([line.amount] if amounts else []))
    return Book("Invoice", header, body, {3: MONEY, 4: MONEY}), inv


def amount_cells(book: Book) -> list[list[Cell | Value]]:
    """The invoice's rows with Amount as a formula (Qty x Unit Price) and its cached value."""
    rows = table(book.header, book.body, book.fmts)
    for r, line in enumerate(rows[1:], start=2):
        line[4] = Cell(line[4].value, formula=f"C{r}*D{r}", fmt=MONEY)
    return rows


def budget(seed: int) -> tuple[Book, data.Budget]:
    b = data.budget(seed)
    header = ["Category", "Payee", *b.months]
    body: list[list[Value]] = [[line.category, line.item, *line.amounts] for line in b.lines]
    return Book("Budget", header, body, {i: MONEY for i in range(2, 2 + len(b.months))}), b


def gradebook(seed: int) -> tuple[Book, data.GradeBook]:
    g = data.gradebook(seed, students=10 + seed % 4)
    header = ["Student", *g.assignments]
    body: list[list[Value]] = [[name, *scores] for name, scores in g.students]
    return Book("Grades", header, body, {}), g


def unique_last(book: Book) -> Book:
    """The grade book with the last assignment's scores made distinct (a sort by it has one
    right order), nudging a repeated score by one point."""
    i, seen = len(book.header) - 1, set()
    for row in book.body:
        v = int(cast(int, row[i]))
        while v in seen:
            v = v - 1 if v > 40 else v + 1
        seen.add(v)
        row[i] = v
    return book


def inventory(seed: int) -> Book:
    items = data.inventory(seed, count=12 + seed % 4)
    header = ["SKU", "Item", "Category", "In Stock", "Reorder Level", "Unit Cost", "Location"]
    body: list[list[Value]] = [
        [s.sku, s.name, s.category, s.stock, s.reorder_level, s.unit_cost, s.location]
        for s in items
    ]
    return Book("Inventory", header, body, {5: MONEY})


def transactions(seed: int, count: int = 24) -> Book:
    rec = data.records(seed)
    picked = data.rng(seed, "calc-transactions").sample(rec.transactions, count)
    picked.sort(key=lambda t: (t.date, t.reference))
    header = ["Date", "Reference", "Account", "Payee", "Category", "Amount", "Memo"]
    body: list[list[Value]] = [
        [t.date, t.reference, t.account, t.payee, t.category, t.amount, t.memo] for t in picked
    ]
    return Book("Transactions", header, body, {5: MONEY})


def schedule(seed: int) -> Book:
    events = data.schedule(seed, count=12 + seed % 3)
    header = ["Date", "Start", "End", "Event", "Location", "Organizer"]
    body: list[list[Value]] = [
        [e.date, e.starts, e.ends, e.title, e.location, e.organizer] for e in events
    ]
    return Book("Schedule", header, body, {})


def quarters(seed: int) -> tuple[Book, data.Company]:
    c = data.company(seed)
    header = ["Quarter", "Revenue", "Customers"]
    body: list[list[Value]] = [[q, rev, n] for q, rev, n in c.quarters]
    return Book("Quarterly", header, body, {1: MONEY}), c


def category_spend(seed: int) -> Book:
    """Spending per payee category over the seed's transactions (a small table for charts)."""
    totals: dict[str, float] = {}
    for t in data.records(seed).transactions:
        totals[t.category] = round(totals.get(t.category, 0.0) + t.amount, 2)
    body: list[list[Value]] = [[c, v] for c, v in sorted(totals.items())]
    return Book("Spending", ["Category", "Spent"], body, {1: MONEY})


def stamp(d: dt.date) -> str:
    return d.strftime("%Y%m%d")
