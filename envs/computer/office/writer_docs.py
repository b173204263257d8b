"""The documents the Writer templates start from: letters, quarterly reports, meeting minutes.

Each is built from one seed's records (:mod:`.data`: a company with its staff, products and
quarterly figures; an invoice; a meeting from the calendar) as a list of blocks of
:mod:`.writer_docx`, which a template then changes (a heading left as plain text, a table
missing a row, a paragraph out of place) before the bytes are written. Every paragraph's text
is unique within its document, so a task and its checks can name a paragraph by its words.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office.writer_docx import Para, Run, Table

Blocks = list[Para | Table]


def day(d: dt.date) -> str:
    return f"{d.day} {d.strftime('%B %Y')}"


def money(x: float) -> str:
    return f"${x:,.2f}"


def letter(seed: int) -> Blocks:
    """A supplier's letter to a customer about an invoice: letterhead, addresses, date,
    subject, salutation, four body paragraphs, closing and signature."""
    inv, firm = data.invoice(seed), data.company(seed)
    sender, to = firm.staff[0], inv.customer
    lines = inv.lines[:3]
    items = ", ".join(f"{x.quantity} x {x.product}" for x in lines[:-1])
    total = inv.subtotal * (1 + inv.tax_rate)
    return [
        Para(firm.name),
        Para(sender.address),
        Para(firm.city),
        Para(day(inv.date)),
        Para(to.name),
        Para(to.address),
        Para(to.city),
        Para(f"Subject: Invoice {inv.number}"),
        Para(f"Dear {to.name},"),
        Para(
            f"Thank you for your recent order with {firm.name}. Please find enclosed invoice "
            f"{inv.number}, dated {day(inv.date)}, for the goods delivered to {to.city}."
        ),
        Para(
            f"The delivery included {items} and {lines[-1].quantity} x {lines[-1].product}, "
            f"among {len(inv.lines)} lines in all. The total amount due, tax included, is "
            f"{money(total)}."
        ),
        Para(
            f"Payment is due by {day(inv.due)}. Should you have any questions about this "
            f"invoice, please contact me at {sender.email}."
        ),
        Para(
            "We appreciate your business and look forward to serving you again in the coming year."
        ),
        Para("Kind regards,"),
        Para(sender.name),
        Para(f"{sender.role}, {firm.name}"),
    ]


def report(seed: int) -> Blocks:
    """A quarterly report: a title, five sections with headings (one with a table of the
    last quarters, one with a second-level heading per product), and next steps."""
    firm = data.company(seed)
    quarters = firm.quarters[-4:]
    (q0, r0, c0), (q1, r1, c1) = quarters[-2], quarters[-1]
    growth = (r1 / r0 - 1) * 100
    lead = firm.staff[1]
    blocks: Blocks = [
        Para(f"{firm.name} Quarterly Report", style="Title"),
        Para("Summary", style="Heading1"),
        Para(
            f"Revenue reached {money(r1)} in {q1}, {abs(growth):.1f}% "
            f"{'up' if growth >= 0 else 'down'} on {q0}, and the customer base grew to {c1}."
        ),
        Para(
            f"This report was prepared by {lead.name} ({lead.role}) for the management team "
            f"in {firm.city}."
        ),
        Para("Revenue", style="Heading1"),
        Para(f"The table below lists revenue and customers for the last {len(quarters)} quarters."),
        Table(
            (
                ("Quarter", "Revenue", "Customers"),
                *((q, f"{r:,.0f}", str(c)) for q, r, c in quarters),
            )
        ),
        Para("Products", style="Heading1"),
    ]
    for p in firm.products[:3]:
        blocks.append(Para(p.name, style="Heading2"))
        blocks.append(
            Para(
                f"The {p.name} ({p.category.lower()}) sells at {money(p.price)}; "
                f"{p.stock} units are in stock at the end of the quarter."
            )
        )
    blocks += [
        Para("Customers", style="Heading1"),
        Para(
            f"We served {c1} customers in {q1}, against {c0} in {q0}. Most new customers came "
            f"through referrals from existing accounts."
        ),
        Para("Next steps", style="Heading1"),
        Para(f"Review pricing of the {firm.products[3].name} before the next quarter."),
        Para(f"Hire a second assistant for the {firm.city} office."),
        Para("Renew the logistics contract for another year."),
        Para("Publish the customer survey results to all staff."),
    ]
    return blocks


def minutes(seed: int) -> Blocks:
    """Minutes of a meeting: title, when/where, chair and attendees, the agenda (one
    paragraph per item), the discussion, a table of actions and the next meeting's date."""
    m = data.meeting(seed)
    r = data.rng(seed, "minutes")
    notes = (
        "presented the current figures and the open questions",
        "summarised the feedback received since the last meeting",
        "proposed a timeline and asked for comments by Friday",
        "reported that the work is on track",
    )
    blocks: Blocks = [
        Para(f"Minutes: {m.title}", style="Title"),
        Para(f"Date: {day(m.date)}, {m.starts}, {m.location}"),
        Para(f"Chair: {m.chair}"),
        Para(f"Attendees: {', '.join(m.attendees)}"),
        Para("Agenda", style="Heading1"),
        *(Para(item) for item in m.agenda),
        Para("Discussion", style="Heading1"),
    ]
    for item, who, note in zip(m.agenda, r.sample(m.attendees, len(m.agenda)), notes, strict=False):
        blocks.append(Para((Run(f"{item}. ", bold=True), Run(f"{who} {note}."))))
    blocks += [
        Para("Action items", style="Heading1"),
        Table((("Action", "Owner", "Due"), *((a, w, day(d)) for a, w, d in m.actions))),
        Para(f"Next meeting: {day(m.date + dt.timedelta(days=14))}, {m.location}"),
    ]
    return blocks


@dataclass
class Source:
    """A document the templates start from: the file it is written to (home-relative, named
    ``{file}`` by the phrasings) and how a seed builds it. A template declares its source, so
    each builder's file name is written once, here, and never paired with another file. (Not
    frozen: a test breaks ``build`` to see a generator's failure named.)"""

    path: str
    build: Callable[[int], Blocks]


LETTER = Source("invoice-letter.docx", letter)
REPORT = Source("quarterly-report.docx", report)
MINUTES = Source("minutes.docx", minutes)


def texts(blocks: Blocks) -> list[str]:
    """The document's paragraph texts in order (tables left out)."""
    return [b.plain for b in blocks if isinstance(b, Para)]


def para_at(blocks: Blocks, index: int) -> Para:
    """Block ``index``, which a template knows is a paragraph."""
    block = blocks[index]
    if not isinstance(block, Para):
        raise TypeError(f"block {index} is a table, not a paragraph")
    return block


def table_at(blocks: Blocks, index: int) -> Table:
    """Block ``index``, which a template knows is a table."""
    block = blocks[index]
    if not isinstance(block, Table):
        raise TypeError(f"block {index} is a paragraph, not a table")
    return block


def section(blocks: Blocks, heading: str, count: int | None = None) -> tuple[int, list[str]]:
    """Where the paragraphs under ``heading`` start, and the texts of ``count`` of them (all
    to the document's end by default)."""
    top = find(blocks, heading) + 1
    end = len(blocks) if count is None else top + count
    return top, [para_at(blocks, i).plain for i in range(top, end)]


def first_table(blocks: Blocks) -> tuple[int, Table]:
    index = next(i for i, b in enumerate(blocks) if isinstance(b, Table))
    return index, table_at(blocks, index)


def find(blocks: Blocks, text: str) -> int:
    """The index of the paragraph whose text is ``text`` (or starts with it)."""
    for i, b in enumerate(blocks):
        if isinstance(b, Para) and (b.plain == text or b.plain.startswith(text)):
            return i
    raise KeyError(text)
