"""The Calc templates: spreadsheet work on invoices, budgets, grade books, inventories,
transaction lists, schedules and quarterly figures made from our synthesized domains' data.

Each template is a ``make(seed)`` returning a :class:`Case`: the workbook
(:mod:`.calc_books`, written by :mod:`.calc_files`), the check (a
:mod:`palaestra.verifiers.office` ``spreadsheet`` spec whose expected values are computed here
from the same rows the file was written from), the GUI solution and the code solution
(:mod:`.calc_gui`). The generators come first; ``TEMPLATES`` at the end declares every
template in one table (its name, skills, phrasings and generator), as :mod:`.impress` declares
its, so what the app offers reads in one place, in the suite's order. The skills (formulas,
sorting, filtering, formats, conditional formats, freezing, charts, summaries, cross-sheet
references, CSV) are in :mod:`.calc_more` too; ``TEMPLATES`` is the union.

Decisions:

- An instruction says what a person asking for the work would say: the file, the columns by
  their header, the label of a new row, a threshold; never the answer (a total, an order).
- Checks accept either format of the app (``.xlsx`` or ``.ods`` beside it): a correct answer
  saved in the other format passes.
- Numbers compare within a cent (``tol`` 0.01); a cell where the instruction asks for a formula
  also checks that it is one (``formula: true``), never which formula.
"""

from __future__ import annotations

from typing import Any

from palaestra.envs.computer.office import calc_books as books
from palaestra.envs.computer.office import calc_gui as g
from palaestra.envs.computer.office.calc_base import TOL, case, formula_column, template
from palaestra.envs.computer.office.calc_files import Sheet, col_name
from palaestra.envs.computer.office.calc_more import TEMPLATES as MORE
from palaestra.envs.computer.office.template import Case, Template

# ----- formulas and totals ------------------------------------------------------------------


def _invoice_amounts(seed: int) -> Case:
    book, inv = books.invoice(seed)
    path = f"invoice_{inv.number.lower().replace('-', '_')}.xlsx"
    amounts = [line.amount for line in inv.lines]
    expect, gui, code = formula_column(path, "E", "Amount", amounts, "=C{r}*D{r}")
    return case(path, [book.sheet()], {"customer": inv.customer.name}, expect, gui, code)


def _invoice_subtotal(seed: int) -> Case:
    book, inv = books.invoice(seed, amounts=True)
    n = book.last_row
    path = f"invoice_{inv.number[4:]}.xlsx"
    sheet = Sheet(book.name, books.amount_cells(book), books.widths(book.header, book.body))
    expect = [
        {"cell": f"A{n + 1}", "value": "Subtotal", "ignore_case": True},
        {"cell": f"E{n + 1}", "value": inv.subtotal, "tol": TOL, "formula": True},
    ]
    gui = [*g.cells(f"A{n + 1}", ["Subtotal"]), *g.cells(f"E{n + 1}", [f"=SUM(E2:E{n})"])]
    code = g.code(
        path, f'ws["A{n + 1}"] = "Subtotal"\nws["E{n + 1}"] = "=SUM(E2:E{n})"', recalc=True
    )
    return case(path, [sheet], {"customer": inv.customer.name}, expect, gui, code)


def _budget_row_totals(seed: int) -> Case:
    book, b = books.budget(seed)
    last, total_col = col_name(len(book.header) - 1), col_name(len(book.header))
    path = f"budget_{b.year}_h1.xlsx"
    totals = [round(sum(line.amounts), 2) for line in b.lines]
    expect, gui, code = formula_column(
        path, total_col, "Total", totals, f"=SUM(C{{r}}:{last}{{r}})"
    )
    params = {"owner": b.owner, "col": total_col, "first": b.months[0], "last": b.months[-1]}
    return case(path, [book.sheet()], params, expect, gui, code)


def _budget_month_totals(seed: int) -> Case:
    book, b = books.budget(seed)
    n, last = book.last_row, col_name(len(book.header) - 1)
    path = f"household_budget_{b.year}.xlsx"
    expect: list[dict[str, Any]] = [{"cell": f"A{n + 1}", "value": "Total", "ignore_case": True}]
    for m in range(len(b.months)):
        want = round(sum(line.amounts[m] for line in b.lines), 2)
        expect.append(
            {"cell": f"{col_name(2 + m)}{n + 1}", "value": want, "tol": TOL, "formula": True}
        )
    gui = [
        *g.cells(f"A{n + 1}", ["Total"]),
        *g.cells(f"C{n + 1}", [f"=SUM(C2:C{n})"]),
        *g.fill(f"C{n + 1}:{last}{n + 1}", down=False),
    ]
    code = g.code(
        path,
        f"""
        ws["A{n + 1}"] = "Total"
        for c in range(3, {len(book.header) + 1}):
            col = get_column_letter(c)
            ws[f"{{col}}{n + 1}"] = f"=SUM({{col}}2:{{col}}{n})"
        """,
        recalc=True,
    )
    params = {"owner": b.owner, "first": b.months[0], "last": b.months[-1]}
    return case(path, [book.sheet()], params, expect, gui, code)


def _grades_average(seed: int) -> Case:
    book, gb = books.gradebook(seed)
    k = len(gb.assignments)
    avg_col, last = col_name(k + 1), col_name(k)
    path = f"{gb.course.lower().replace(' ', '_')}_grades.xlsx"
    means = [round(sum(s) / len(s), 4) for _, s in gb.students]
    formula = f"=AVERAGE(B{{r}}:{last}{{r}})"
    expect, gui, code = formula_column(path, avg_col, "Average", means, formula)
    params = {"course": gb.course, "col": avg_col}
    return case(path, [book.sheet()], params, expect, gui, code)


def _grades_count_below(seed: int) -> Case:
    book, gb = books.gradebook(seed)
    n = book.last_row
    r = books.data.rng(seed, "calc-count-below")
    idx = r.randrange(len(gb.assignments))
    work, threshold = gb.assignments[idx], r.choice((60, 65, 70))
    col = col_name(idx + 1)
    want = sum(1 for _, s in gb.students if s[idx] < threshold)
    at = f"{col_name(len(gb.assignments) + 2)}2"
    path = f"{gb.course.lower().replace(' ', '-')}-marks.xlsx"
    expect = [{"cell": at, "value": want, "formula": True}]
    gui = g.cells(at, [f'=COUNTIF({col}2:{col}{n},"<{threshold}")'])
    code = g.code(path, f"ws[{at!r}] = '=COUNTIF({col}2:{col}{n},\"<{threshold}\")'", recalc=True)
    params = {"work": work, "threshold": threshold, "cell": at, "course": gb.course}
    return case(path, [book.sheet()], params, expect, gui, code)


# ----- sorting ------------------------------------------------------------------------------


def _sorted_case(
    path: str,
    book: books.Book,
    by: str,
    descending: bool,
    params: dict[str, Any],
    shortest: bool = False,
) -> Case:
    n, last = book.last_row, col_name(len(book.header) - 1)
    col = book.col(by)
    rows = [books.plain(row) for row in book.body]
    expect: list[dict[str, Any]] = [
        {"range": f"A2:{last}{n}", "sorted": {"by": col, "descending": descending}},
        {"range": f"A2:{last}{n}", "rows_any_order": rows},
        {"cell": "A1", "value": book.header[0]},
    ]
    gui = [*g.goto(f"{col}2"), *g.command("sort descending" if descending else "sort ascending")]
    i = book.header.index(by)
    code = g.code(
        path,
        f"""
        rows = [[c.value for c in r] for r in ws.iter_rows(min_row=2, max_row={n})]
        fmts = [[c.number_format for c in r] for r in ws.iter_rows(min_row=2, max_row={n})]
        order = sorted(range(len(rows)), key=lambda k: rows[k][{i}], reverse={descending})
        for r, k in enumerate(order, start=2):
            for c, v in enumerate(rows[k], start=1):
                ws.cell(r, c, v).number_format = fmts[k][c - 1]
        """,
        shortest=shortest,
    )
    return case(path, [book.sheet()], {"column": by, **params}, expect, gui, code)


def _grades_sort(seed: int) -> Case:
    book, gb = books.gradebook(seed)
    book = books.unique_last(book)
    return _sorted_case(
        f"grades_{gb.course.split()[0].lower()}_{seed}.xlsx",
        book,
        book.header[-1],
        True,
        {"course": gb.course},
    )


def _inventory_sort(seed: int) -> Case:
    book = books.inventory(seed)
    return _sorted_case(f"stock_list_{seed + 1}.xlsx", book, "In Stock", False, {}, True)


def _schedule_sort(seed: int) -> Case:
    book = books.schedule(seed)
    return _sorted_case(f"team_schedule_{seed + 1}.xlsx", book, "Event", False, {})


# ----- filtering and freezing ---------------------------------------------------------------


def _autofilter(seed: int) -> Case:
    book = books.transactions(seed)
    n, last = book.last_row, col_name(len(book.header) - 1)
    path = f"transactions_{books.stamp(book.day(-1, 0))}.xlsx"
    expect = [{"filter": f"A1:{last}{n}"}, book.pinned()]
    gui = [*g.goto("A1"), g.key("ctrl+shift+l"), g.wait(0.8)]
    code = g.code(path, f'ws.auto_filter.ref = "A1:{last}{n}"', shortest=True)
    return case(path, [book.sheet()], {}, expect, gui, code)


def _freeze_header(seed: int) -> Case:
    book = books.transactions(seed, count=40)
    path = f"account_activity_{seed + 1}.xlsx"
    gui = [*g.goto("A2"), *g.command("freeze rows and columns")]
    code = g.code(path, 'ws.freeze_panes = "A2"', shortest=True)
    return case(path, [book.sheet()], {}, [{"freeze": "A2"}, book.pinned()], gui, code)


def _freeze_corner(seed: int) -> Case:
    book, gb = books.gradebook(seed)
    path = f"{gb.course.split()[0].lower()}_roster_{seed + 1}.xlsx"
    gui = [*g.goto("B2"), *g.command("freeze rows and columns")]
    code = g.code(path, 'ws.freeze_panes = "B2"')
    return case(path, [book.sheet()], {"course": gb.course}, [{"freeze": "B2"}], gui, code)


TEMPLATES: list[Template] = [
    # ----- formulas and totals
    template(
        "calc-invoice-amounts",
        ("formulas",),
        (
            "In {file}, add a column E headed Amount that works out each line's quantity times "
            "its unit price with a formula, then save the file.",
            "The invoice for {customer} in {file} has no line amounts yet. Put an 'Amount' header "
            "in E1 and, on every line below it, a formula multiplying Qty by Unit Price. Save it.",
            "Open {file} and give every invoice line an amount: column E, titled Amount, computed "
            "from the Qty and Unit Price columns. Keep it as a formula and save.",
        ),
        _invoice_amounts,
    ),
    template(
        "calc-invoice-subtotal",
        ("formulas", "totalling"),
        (
            "Right under the last line of the invoice in {file}, add a row labelled Subtotal in "
            "column A with the sum of the Amount column in column E (a formula). Save.",
            "{customer}'s invoice ({file}) needs a subtotal: on the first empty row below the "
            "items write 'Subtotal' in A and total up the amounts in E with a SUM formula.",
            "Please total the Amount column of {file}: put the label Subtotal in column A of the "
            "row just below the items and the formula for the total in that row's column E, "
            "then save the workbook.",
        ),
        _invoice_subtotal,
    ),
    template(
        "calc-budget-row-totals",
        ("formulas",),
        (
            "Add a Total column to the budget in {file}: in column {col}, headed Total, sum each "
            "payee's months from {first} to {last} with a formula. Save the file.",
            "For every line of {owner}'s budget ({file}) I want the half-year total next to the "
            "monthly figures: header 'Total' in {col}1 and a SUM formula on each row. Save.",
            "Each row in {file} should end with its total across the months. Put them in column "
            "{col} under a Total header, as formulas, and save the workbook.",
        ),
        _budget_row_totals,
    ),
    template(
        "calc-budget-month-totals",
        ("formulas", "totalling"),
        (
            "Below the last payee in {file}, add a row labelled Total (column A) that sums every "
            "month column from {first} to {last} with formulas. Save.",
            "I need monthly totals in {owner}'s budget: a Total row right after the data in "
            "{file}, one SUM per month column. Then save the file.",
            "Open {file}, and on the first free row under the table write Total in column A and "
            "the sum of each month ({first} through {last}) under its column. Keep them as "
            "formulas and save.",
        ),
        _budget_month_totals,
    ),
    template(
        "calc-grades-average",
        ("formulas",),
        (
            "In the {course} grade book ({file}), add an Average column ({col}) with each "
            "student's mean score over all assignments, as a formula. Save when done.",
            "Every student in {file} needs their average: header 'Average' in {col}1, and an "
            "AVERAGE of that student's scores on each row. Save the workbook.",
            "Work out each student's average mark across the assignments in {file}. Put the "
            "results in column {col} under the heading Average, using formulas, and save.",
        ),
        _grades_average,
    ),
    template(
        "calc-grades-count-below",
        ("formulas",),
        (
            "In {file}, put a formula in {cell} that counts how many students scored below "
            "{threshold} on the {work}. Save the file.",
            "How many students got under {threshold} on the {work}? Answer it in cell {cell} of "
            "{file} with a counting formula, and save.",
            "Use cell {cell} of the {course} grade book ({file}) for the number of {work} scores "
            "lower than {threshold}; make it a formula so it stays right. Save it.",
        ),
        _grades_count_below,
    ),
    # ----- sorting
    template(
        "calc-grades-sort",
        ("sorting",),
        (
            "Sort the students in {file} by their {column} score, highest first, keeping each "
            "student's row together. Save.",
            "Reorder the {course} grade book ({file}) so the best {column} result is at the top "
            "and the lowest at the bottom (whole rows). Save the file.",
            "Could you rank the class in {file} by the {column} column, from the top mark down? "
            "The header stays in row 1. Save afterwards.",
        ),
        _grades_sort,
    ),
    template(
        "calc-inventory-sort",
        ("sorting",),
        (
            "Sort the inventory in {file} by the {column} column from smallest to largest, moving "
            "whole rows. Save.",
            "I want the items we have least of at the top of {file}: order the rows by {column}, "
            "ascending, and save the workbook.",
            "Put the stock list ({file}) in ascending order of {column}; keep every item's row "
            "intact and the header where it is. Then save.",
        ),
        _inventory_sort,
    ),
    template(
        "calc-schedule-sort",
        ("sorting",),
        (
            "Sort the schedule in {file} alphabetically by the {column} column (A to Z), whole "
            "rows. Save it.",
            "Rearrange {file} so the entries are in alphabetical order of their {column} name; "
            "the header stays on top. Save.",
            "Please alphabetize the rows of the team schedule ({file}) by {column} and save "
            "the file.",
        ),
        _schedule_sort,
    ),
    # ----- filtering and freezing
    template(
        "calc-transactions-autofilter",
        ("filtering",),
        (
            "Turn on filter drop-downs for the header row of the transaction list in {file}, so "
            "every column can be filtered. Save.",
            "Add an AutoFilter to the table in {file} (all its columns, header in row 1) and "
            "save the workbook.",
            "I'd like to filter the transactions in {file} by any column: put filter buttons on "
            "the column headings and save.",
        ),
        _autofilter,
    ),
    template(
        "calc-freeze-header",
        ("freezing",),
        (
            "Freeze the top row of {file} so the column headings stay visible while scrolling "
            "down. Save.",
            "When I scroll through {file} the headers disappear. Keep row 1 fixed on screen (only "
            "that row) and save the file.",
            "Lock the heading row of the transactions in {file} in place (freeze panes below row "
            "1, no columns) and save.",
        ),
        _freeze_header,
    ),
    template(
        "calc-freeze-corner",
        ("freezing",),
        (
            "In {file}, freeze the first row and the first column together, so the assignment "
            "names and student names both stay in view. Save.",
            "Keep both the heading row and the Student column of the {course} grade book "
            "({file}) on screen while scrolling either way. Save the file.",
            "Freeze panes in {file} at the corner: row 1 and column A fixed. Then save.",
        ),
        _freeze_corner,
    ),
    *MORE,
]
