"""Writer templates on layout and structure: page setup (orientation, margins, paper size),
bulleted and numbered lists, tables (inserted, filled, a row added) and comments. The
generators come first; ``TEMPLATES`` at the end declares them in one table, as in
:mod:`.writer_text`."""

from __future__ import annotations

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office import writer_gui as g
from palaestra.envs.computer.office.template import Case, Template
from palaestra.envs.computer.office.writer_base import ensure_searchable, make_case, pick, template
from palaestra.envs.computer.office.writer_docs import (
    LETTER,
    MINUTES,
    REPORT,
    Blocks,
    find,
    first_table,
    para_at,
    section,
)
from palaestra.envs.computer.office.writer_docx import PAPERS, Page, Table

_CODE_PAGE = """s = d.sections[0]
s.orientation = {orient}
s.page_width, s.page_height = Mm({w}), Mm({h})
"""


# ----- page setup ---------------------------------------------------------------------------
def _page_landscape(seed: int, blocks: Blocks, path: str) -> Case:
    paper = ("A4", "Letter", "A4")[seed % 3]
    w, h = PAPERS[paper]
    return make_case(
        path,
        blocks,
        {"paper": paper},
        [g.page_is(orientation="landscape", width=h, height=w, tol=1.0)],
        g.page(landscape=True),
        _CODE_PAGE.format(orient="WD_ORIENT.LANDSCAPE", w=h, h=w),
        page=Page(paper=paper),
    )


def _page_margins(seed: int, blocks: Blocks, path: str) -> Case:
    cm = (1.5, 3.0, 2.0)[seed % 3]
    mm = cm * 10
    return make_case(
        path,
        blocks,
        {"cm": f"{cm:g}"},
        [
            g.page_is(
                margins={"top": mm, "bottom": mm, "left": mm, "right": mm}, width=210.0, tol=0.6
            )
        ],
        g.page(margins_cm=(cm, cm, cm, cm)),
        "s = d.sections[0]\n"
        f"s.top_margin = s.bottom_margin = s.left_margin = s.right_margin = Mm({mm})",
        page=Page(margins_mm=(25.0, 25.0, 25.0, 25.0)),
    )


def _page_paper(seed: int, blocks: Blocks, path: str) -> Case:
    old, new, region = (("A4", "Letter", "the US"), ("Letter", "A4", "Germany"))[seed % 2]
    w, h = PAPERS[new]
    return make_case(
        path,
        blocks,
        {"old": old, "new": new, "region": region},
        [g.page_is(orientation="portrait", width=w, height=h, tol=1.0)],
        g.page(paper=(old, new)),
        _CODE_PAGE.format(orient="WD_ORIENT.PORTRAIT", w=w, h=h),
        page=Page(paper=old),
    )


# ----- lists --------------------------------------------------------------------------------
_CODE_LIST = """for text in {items!r}:
    ppr = para(text)._p.get_or_add_pPr()
    num = OxmlElement('w:numPr')
    for tag, val in (('w:ilvl', '0'), ('w:numId', '{num_id}')):
        el = OxmlElement(tag)
        el.set(qn('w:val'), val)
        num.append(el)
    ppr.append(num)
"""


def _list_bullets(seed: int, blocks: Blocks, path: str) -> Case:
    top, items = section(blocks, "Agenda", 4)
    ensure_searchable(blocks, top, items[0])
    return make_case(
        path,
        blocks,
        {"n": len(items), "first": items[0], "last": items[-1]},
        [{"list": items, "ordered": False}, g.para("Discussion", list=None)],
        [*g.select_paragraphs(items[0], len(items)), g.key("shift+F12"), g.wait(0.5)],
        _CODE_LIST.format(items=items, num_id=1),
    )


def _list_numbered(seed: int, blocks: Blocks, path: str) -> Case:
    top, items = section(blocks, "Next steps")
    start = " ".join(items[0].split()[:3])
    ensure_searchable(blocks, top, start)
    return make_case(
        path,
        blocks,
        {"n": len(items), "first": items[0], "last": items[-1]},
        [{"list": items, "ordered": True}, g.para("Next steps", list=None)],
        [*g.select_paragraphs(start, len(items)), g.key("F12"), g.wait(0.5)],
        _CODE_LIST.format(items=items, num_id=2),
    )


# ----- tables -------------------------------------------------------------------------------
def _table_insert(seed: int, blocks: Blocks, path: str) -> Case:
    inv = data.invoice(seed)
    rows = [["Product", "Quantity", "Unit price"]] + [
        [x.product, str(x.quantity), f"{x.unit_price:.2f}"] for x in inv.lines[:3]
    ]
    i = find(blocks, "The delivery included")
    start = " ".join(para_at(blocks, i).plain.split()[:4])
    listing = "; ".join(f"{p}, {q}, {u}" for p, q, u in rows[1:])
    cells = [a for r in rows for c in r for a in (g.key("Tab"), g.type_text(c))][1:]
    return make_case(
        path,
        blocks,
        {"listing": listing, "start": start},
        [g.table(0, rows), {"tables": 1}],
        [
            *g.find(start),
            g.key("Home ctrl+Down"),  # the start of the next paragraph: the table goes above it
            g.key("ctrl+F12"),
            g.wait(4.0),
            g.key("Tab"),  # from the name to the columns (Alt+C is also Cancel's)
            g.key("ctrl+a"),
            g.type_text("3"),
            g.key("alt+r"),
            g.key("ctrl+a"),
            g.type_text(str(len(rows))),
            g.key("Return"),
            g.wait(1.5),
            *cells,
        ],
        f"t = d.add_table(rows={len(rows)}, cols=3)\n"
        f"for r, values in zip(t.rows, {rows!r}):\n"
        "    for c, v in zip(r.cells, values):\n"
        "        c.text = v\n"
        f"para({para_at(blocks, i).plain!r})._p.addnext(t._tbl)",
    )


def _table_fill(seed: int, blocks: Blocks, path: str) -> Case:
    t, full = first_table(blocks)
    empty = Table((full.rows[0], *((a, "", d) for a, _, d in full.rows[1:])))
    before = [*blocks[:t], empty, *blocks[t + 1 :]]
    listing = "; ".join(f"{a}: {w}" for a, w, _ in full.rows[1:])
    gui = []
    for action, owner, _ in full.rows[1:]:
        ensure_searchable(before, t, action)
        gui += [*g.find(action), g.key("End"), g.key("Tab"), g.type_text(owner)]
    return make_case(
        path,
        before,
        {"listing": listing},
        [g.table(0, [list(r) for r in full.rows])],
        gui,
        "t = d.tables[0]\n"
        f"for r, owner in zip(t.rows[1:], {[w for _, w, _ in full.rows[1:]]!r}):\n"
        "    r.cells[1].paragraphs[0].add_run(owner)",
    )


def _table_add_row(seed: int, blocks: Blocks, path: str) -> Case:
    t, full = first_table(blocks)
    short = Table(full.rows[:-1])
    before = [*blocks[:t], short, *blocks[t + 1 :]]
    quarter, revenue, customers = full.rows[-1]
    last = short.rows[-1][1]  # the last row's revenue: only the table has it formatted so
    ensure_searchable(before, t, last)
    return make_case(
        path,
        before,
        {
            "prev": short.rows[-1][0],
            "quarter": quarter,
            "revenue": revenue,
            "customers": customers,
        },
        [g.table(0, [list(r) for r in full.rows])],
        [
            *g.find(last),
            g.key("End"),
            g.key("Tab"),
            g.key("Tab"),
            g.wait(0.3),
            g.type_text(quarter),
            g.key("Tab"),
            g.type_text(revenue),
            g.key("Tab"),
            g.type_text(customers),
        ],
        "r = d.tables[0].add_row()\n"
        f"for c, v in zip(r.cells, {list(full.rows[-1])!r}):\n"
        "    c.text = v",
    )


# ----- comments -----------------------------------------------------------------------------
def _comment_add(seed: int, blocks: Blocks, path: str) -> Case:
    i = find(blocks, "Revenue reached")
    text = para_at(blocks, i).plain
    start = " ".join(text.split()[:3])
    note = pick(
        seed,
        "note",
        [
            "Please check this figure against the ledger.",
            "Confirm the growth rate with Finance.",
            "Source for this number?",
        ],
    )
    return make_case(
        path,
        blocks,
        {"start": start, "note": note},
        [{**g.comment(note.rstrip("?.")), "anchor": start}, {"comments": 1}],
        [
            *g.find(start),
            g.key("ctrl+alt+c"),
            g.wait(2.5),
            g.type_text(note),
            g.wait(0.5),
            g.key("Escape"),
            g.wait(1.0),
        ],
        None,
    )


TEMPLATES: list[Template] = [
    # ----- page setup
    template(
        "writer-page-landscape",
        ("print layout",),
        REPORT,
        _page_landscape,
        "The revenue table in the report is too wide for the page. Switch the page orientation "
        "to landscape (same paper size) and save.",
        "Turn the pages of {file} to landscape and save the document.",
        "Lay the open report out on landscape {paper} pages instead of portrait, then save it.",
    ),
    template(
        "writer-page-margins",
        ("print layout",),
        LETTER,
        _page_margins,
        "Set all four page margins of the open letter to {cm} cm and save it.",
        "The letter needs {cm} cm margins on every side (top, bottom, left and right). Change "
        "them and save {file}.",
        "Our letterhead paper requires margins of {cm} cm all round: adjust the document's page "
        "margins accordingly and save.",
    ),
    template(
        "writer-page-paper",
        ("print layout",),
        LETTER,
        _page_paper,
        "This letter will be printed in {region}: change its paper size from {old} to {new} and "
        "save.",
        "Set the paper format of {file} to {new} (it is {old} now), keeping portrait, and save.",
        "Switch the open document to {new} paper and save it.",
    ),
    # ----- lists
    template(
        "writer-list-bullets",
        ("itemization",),
        MINUTES,
        _list_bullets,
        "Turn the {n} agenda items of the minutes into a bulleted list and save.",
        'In {file}, the lines from "{first}" to "{last}" should be bullet points. Format '
        "them that way and save the document.",
        "Make the agenda a bulleted list (one bullet per item) and save the file.",
    ),
    template(
        "writer-list-numbered",
        ("itemization",),
        REPORT,
        _list_numbered,
        "Number the next steps at the end of the report (1, 2, 3, ...) as a numbered list and "
        "save.",
        'Format the {n} paragraphs under "Next steps" in {file} as a numbered list, then save.',
        'The closing action points of the report, from "{first}" to "{last}", should form a '
        "numbered list. Do it and save the document.",
    ),
    # ----- tables
    template(
        "writer-table-insert",
        ("tabular data",),
        LETTER,
        _table_insert,
        "Below the paragraph about what the delivery included, insert a table with the columns "
        "Product, Quantity and Unit price and one row per item: {listing}. Save the letter.",
        "Add a 3-column table (Product, Quantity, Unit price) to {file}, right after the "
        'paragraph starting "{start}", holding these rows: {listing}. Then save.',
        "Put the delivered items in a table under the delivery paragraph: header row Product / "
        "Quantity / Unit price, then {listing}. Save the document when done.",
    ),
    template(
        "writer-table-fill",
        ("tabular data",),
        MINUTES,
        _table_fill,
        "The Owner column of the action items table is empty. Fill it in: {listing}. Save the "
        "minutes.",
        "Complete the actions table in {file} with who owns each action ({listing}) and save.",
        "Write the owners into the action items table of the open minutes ({listing}), then save "
        "the file.",
    ),
    template(
        "writer-table-add-row",
        ("tabular data",),
        REPORT,
        _table_add_row,
        "The revenue table stops at {prev}. Add a row at the bottom for {quarter}: revenue "
        "{revenue}, customers {customers}. Save the report.",
        "Append the figures for {quarter} to the table in {file} (Revenue {revenue}, Customers "
        "{customers}) as a new last row, then save.",
        "Extend the quarterly table by one row: {quarter}, {revenue}, {customers}. Save the "
        "document afterwards.",
    ),
    # ----- comments
    template(
        "writer-comment-add",
        ("review notes",),
        REPORT,
        _comment_add,
        'Attach a comment to the paragraph starting "{start}" that says: {note} Save the report.',
        'Leave the review note "{note}" as a comment on the summary figure in {file}, then save.',
        'Add a comment with the text "{note}" on the paragraph beginning "{start}", and save '
        "the document.",
    ),
]
