"""The Calc templates of formats, conditional formats, charts, summaries on a new sheet,
cross-sheet references, sheet structure and CSV (the rest are in :mod:`.calc`): the generators,
then ``TEMPLATES``, the table declaring them, as in :mod:`.calc`."""

from __future__ import annotations

import csv
import io
from typing import Any

from palaestra.envs.computer.office import calc_books as books
from palaestra.envs.computer.office import calc_gui as g
from palaestra.envs.computer.office.calc_base import (
    TOL,
    case,
    conditional_format,
    formula_column,
    number_format,
    template,
)
from palaestra.envs.computer.office.calc_files import Cell, Sheet, col_name, table
from palaestra.envs.computer.office.template import Case, Template

# ----- cross-sheet references ---------------------------------------------------------------


def _invoice_tax(seed: int) -> Case:
    book, inv = books.invoice(seed, amounts=True)
    path = f"sales_{inv.number[4:]}.xlsx"
    rates = Sheet(
        "Rates",
        [
            [Cell("Rate", bold=True), Cell("Value", bold=True)],
            ["Sales tax", Cell(inv.tax_rate, fmt="0%")],
            ["Discount", Cell(0.0, fmt="0%")],
        ],
        {0: 14.0, 1: 10.0},
    )
    main = Sheet(book.name, books.amount_cells(book), books.widths(book.header, book.body))
    taxes = [round(line.amount * inv.tax_rate, 4) for line in inv.lines]
    expect, gui, code = formula_column(
        path,
        "F",
        "Tax",
        taxes,
        "=E{r}*Rates!$B$2",
        gui_formula="=E2*$Rates.$B$2",  # Calc names another sheet's cell its own way
        check={"formula_contains": "Rates"},
    )
    return case(
        path, [main, rates], {"customer": inv.customer.name}, expect, gui, code, sheet="Invoice"
    )


def _quarter_growth(seed: int) -> Case:
    book, co = books.quarters(seed)
    n = book.last_row
    path = f"{co.name.lower().replace(' ', '_').replace('.', '').replace('&', 'and')}_kpis.xlsx"
    expect: list[dict[str, Any]] = [{"cell": "D1", "value": "Growth", "ignore_case": True}]
    revenue = book.numbers("Revenue")
    for r in range(3, n + 1):
        prev, cur = revenue[r - 3], revenue[r - 2]
        expect.append(
            {
                "cell": f"D{r}",
                "value": round(cur / prev - 1, 6),
                "tol": 0.0005,
                "formula": True,
                "number_format": "percent",
            }
        )
    gui = [
        *g.cells("D1", ["Growth"]),
        *g.cells("D3", ["=B3/B2-1"]),
        *g.fill(f"D3:D{n}"),
        *g.goto(f"D3:D{n}"),
        g.key("ctrl+shift+5"),
        g.wait(0.5),
    ]
    code = g.code(
        path,
        f"""
        ws["D1"] = "Growth"
        for r in range(3, {n + 1}):
            ws[f"D{{r}}"] = f"=B{{r}}/B{{r - 1}}-1"
            ws[f"D{{r}}"].number_format = "0%"
        """,
        recalc=True,
    )
    return case(path, [book.sheet()], {"company": co.name}, expect, gui, code)


# ----- pivot-style summaries ----------------------------------------------------------------


def _category_summary(seed: int) -> Case:
    book = books.transactions(seed)
    n = book.last_row
    path = f"spending_{seed + 1}.xlsx"
    cats = sorted(set(book.texts("Category")))
    amounts = book.numbers("Amount")
    expect: list[dict[str, Any]] = [{"has_sheet": "Summary"}]
    expect += [
        {"cell": "A1", "value": "Category", "sheet": "Summary"},
        {"cell": "B1", "value": "Total", "sheet": "Summary"},
    ]
    gui = [*g.new_sheet("Summary"), *g.cells("A1", ["Category", "Total"])]
    body = []
    for r, cat in enumerate(cats, start=2):
        want = round(
            sum(a for c, a in zip(book.texts("Category"), amounts, strict=False) if c == cat), 2
        )
        expect += [
            {"cell": f"A{r}", "value": cat, "sheet": "Summary"},
            {"cell": f"B{r}", "value": want, "tol": TOL, "sheet": "Summary"},
        ]
        gui += g.cells(
            f"A{r}", [cat, f"=SUMIF($Transactions.$E$2:$E${n},A{r},$Transactions.$F$2:$F${n})"]
        )
        body.append(
            f'    s["A{r}"] = {cat!r}\n    s["B{r}"] = '
            f'"=SUMIF(Transactions!$E$2:$E${n},A{r},Transactions!$F$2:$F${n})"'
        )
    code = g.code(
        path,
        's = wb.create_sheet("Summary")\ns["A1"], s["B1"] = "Category", "Total"\nif True:\n'
        + "\n".join(body),
        recalc=True,
    )
    params = {"categories": ", ".join(cats)}
    return case(path, [book.sheet()], params, expect, gui, code)


def _budget_by_category(seed: int) -> Case:
    book, b = books.budget(seed)
    n, last = book.last_row, col_name(len(book.header) - 1)
    path = f"budget_review_{b.year}_{seed + 1}.xlsx"
    cats = sorted({line.category for line in b.lines})
    expect: list[dict[str, Any]] = [{"has_sheet": "By Category"}]
    gui = [*g.new_sheet("By Category"), *g.cells("A1", ["Category", "Half-year"])]
    lines = ['s = wb.create_sheet("By Category")', 's["A1"], s["B1"] = "Category", "Half-year"']
    for r, cat in enumerate(cats, start=2):
        want = round(sum(sum(x.amounts) for x in b.lines if x.category == cat), 2)
        expect += [
            {"cell": f"A{r}", "value": cat, "sheet": "By Category"},
            {"cell": f"B{r}", "value": want, "tol": TOL, "sheet": "By Category"},
        ]
        gui += g.cells(
            f"A{r}", [cat, f"=SUMPRODUCT(($Budget.$A$2:$A${n}=A{r})*$Budget.$C$2:${last}${n})"]
        )
        lines += [
            f's["A{r}"] = {cat!r}',
            f's["B{r}"] = "=SUMPRODUCT((Budget!$A$2:$A${n}=A{r})*Budget!$C$2:${last}${n})"',
        ]
    code = g.code(path, "\n".join(lines), recalc=True)
    params = {"first": b.months[0], "last": b.months[-1], "owner": b.owner}
    return case(path, [book.sheet()], params, expect, gui, code)


# ----- number formats and styles ------------------------------------------------------------


def _money_format(seed: int) -> Case:
    book, inv = books.invoice(seed, amounts=True)
    n = book.last_row
    path = f"quote_{inv.customer.last.lower()}_{seed + 1}.xlsx"
    expect = [{"range": f"D2:E{n}", "number_format": "number", "decimals": 2}, book.pinned()]
    gui, code = number_format(path, f"D2:E{n}", "ctrl+shift+1", "#,##0.00")
    sheet = book.sheet(fmts=False)
    return case(path, [sheet], {"customer": inv.customer.name}, expect, gui, code)


def _share_percent(seed: int) -> Case:
    book = books.category_spend(seed)
    n = book.last_row
    total = sum(book.numbers("Spent"))
    rows = table([*book.header, "Share"], [[*r, None] for r in book.body], book.fmts)
    for r, line in enumerate(rows[1:], start=2):
        line[2] = Cell(round(line[1].value / total, 6), formula=f"B{r}/SUM(B$2:B${n})")
    path = f"spending_breakdown_{seed + 1}.xlsx"
    expect = [
        {"range": f"C2:C{n}", "number_format": "percent"},
        book.pinned(),
        {"cell": "C1", "value": "Share"},
    ]
    gui, code = number_format(path, f"C2:C{n}", "ctrl+shift+5", "0%")
    sheet = Sheet(book.name, rows, {0: 14.0, 1: 12.0, 2: 10.0})
    return case(path, [sheet], {}, expect, gui, code)


def _bold_header(seed: int) -> Case:
    book = books.inventory(seed)
    last = col_name(len(book.header) - 1)
    path = f"warehouse_{seed + 1}.xlsx"
    expect = [
        {"range": f"A1:{last}1", "bold": True},
        {"range": "A2:B3", "bold": False},
        book.pinned(),
    ]
    gui = [*g.goto(f"A1:{last}1"), g.key("ctrl+b"), g.wait(0.4)]
    code = g.code(
        path,
        f"""
        from openpyxl.styles import Font
        for c in ws["A1:{last}1"][0]:
            c.font = Font(name=c.font.name, size=c.font.size, bold=True)
        """,
        shortest=True,
    )
    return case(path, [book.sheet(bold=False)], {}, expect, gui, code)


# ----- conditional formats ------------------------------------------------------------------


def _low_stock(seed: int) -> Case:
    book = books.inventory(seed)
    n = book.last_row
    limit = books.data.rng(seed, "calc-low-stock").choice((3, 4, 5, 6))
    path = f"inventory_check_{seed + 1}.xlsx"
    rule, gui, code = conditional_format(path, f"D2:D{n}", "<", limit, "Bad", shortest=True)
    expect = [{"conditional_format": rule}, book.pinned()]
    return case(path, [book.sheet()], {"limit": limit}, expect, gui, code)


def _top_marks(seed: int) -> Case:
    book, gb = books.gradebook(seed)
    n, last = book.last_row, col_name(len(gb.assignments))
    mark = books.data.rng(seed, "calc-top-marks").choice((85, 90))
    path = f"{gb.course.split()[0].lower()}_scores_{seed + 1}.xlsx"
    rule, gui, code = conditional_format(path, f"B2:{last}{n}", ">=", mark, "Accent 3")
    params = {"mark": mark, "course": gb.course}
    return case(path, [book.sheet()], params, [{"conditional_format": rule}], gui, code)


# ----- charts -------------------------------------------------------------------------------


def _chart_code(path: str, ctor: str, n: int, anchor: str, shortest: bool = False) -> list[Any]:
    """openpyxl's chart of column B (header in row 1, ``n`` rows) labelled by column A."""
    return g.code(
        path,
        f"""
        from openpyxl.chart import {ctor}, Reference
        ch = {ctor}()
        ch.add_data(Reference(ws, min_col=2, min_row=1, max_row={n}), titles_from_data=True)
        ch.set_categories(Reference(ws, min_col=1, min_row=2, max_row={n}))
        ws.add_chart(ch, "{anchor}")
        """,
        shortest=shortest,
    )


def _revenue_chart(seed: int) -> Case:
    book, co = books.quarters(seed)
    n = book.last_row
    path = f"revenue_{seed + 1}.xlsx"
    want = {"type": "bar", "horizontal": False, "values": f"B2:B{n}"}
    code = _chart_code(path, "BarChart", n, "E2", True)
    gui = g.chart(f"A1:B{n}", "column")
    expect = [{"chart": want}, book.pinned()]
    return case(path, [book.sheet()], {"company": co.name}, expect, gui, code)


def _spend_pie(seed: int) -> Case:
    book = books.category_spend(seed)
    n = book.last_row
    path = f"where_the_money_went_{seed + 1}.xlsx"
    want = {"type": "pie", "values": f"B2:B{n}"}
    code = _chart_code(path, "PieChart", n, "D2", True)
    gui = g.chart(f"A1:B{n}", "pie")
    return case(path, [book.sheet()], {}, [{"chart": want}, book.pinned()], gui, code)


def _customers_line(seed: int) -> Case:
    book, co = books.quarters(seed)
    n = book.last_row
    path = f"customer_growth_{seed + 1}.xlsx"
    sheet = Sheet(
        book.name,
        table(["Quarter", "Customers"], [[r[0], r[2]] for r in book.body]),
        {0: 12.0, 1: 12.0},
    )
    want = {"type": "line", "values": f"B2:B{n}"}
    code = _chart_code(path, "LineChart", n, "D2")
    gui = g.chart(f"A1:B{n}", "line")
    return case(path, [sheet], {"company": co.name}, [{"chart": want}], gui, code)


# ----- sheets and CSV -----------------------------------------------------------------------


def _rename_sheet(seed: int) -> Case:
    book = books.schedule(seed)
    month = book.day(0, 0).strftime("%B")
    new = f"{month} Plan"
    path = f"planner_{seed + 1}.xlsx"
    sheet = book.sheet()
    sheet.name = "Sheet1"
    expect: list[dict[str, Any]] = [
        {"sheets": [new]},
        {"cell": "D2", "value": book.body[0][3], "sheet": new},
    ]
    gui = [
        *g.command("rename sheet", 1.5),
        g.key("ctrl+a"),
        g.type_text(new),
        g.key("Return"),
        g.wait(0.8),
    ]
    code = g.code(path, f"ws.title = {new!r}")
    return case(path, [sheet], {"name": new}, expect, gui, code)


def _csv_export(seed: int) -> Case:
    book = books.inventory(seed)
    path = f"stock_{seed + 1}.xlsx"
    out = f"stock_{seed + 1}_export.csv"
    expect_rows = []
    for r, row in enumerate(book.body):
        expect_rows += [
            {"kind": "csv_cell", "path": f"~/{out}", "row": r, "col": "SKU", "value": row[0]},
            {
                "kind": "csv_cell",
                "path": f"~/{out}",
                "row": r,
                "col": "In Stock",
                "value": row[3],
                "tol": 0.001,
            },
        ]
    # the workbook keeps its data (a CSV text left at its path is no export, it is a loss)
    c = case(path, [book.sheet()], {"csv": f"~/{out}"}, [book.pinned()], [], None)
    gui = [
        g.key("ctrl+shift+s"),
        g.wait(1.5),
        g.key("ctrl+a"),
        g.type_text(f"{g.HOME}/{out}"),
        g.wait(0.3),
        g.key("Return"),
        g.wait(2.0),
        g.key("Return"),  # "Use Text CSV Format!"
        g.wait(1.5),
        g.key("Return"),  # the export options: OK
        g.wait(1.5),
        g.key("Return"),  # "only the active sheet was saved": OK
        g.wait(1.0),
    ]
    code = [
        {
            "name": "run_python",
            "args": {
                "timeout": 60,
                "code": (
                    "import csv, openpyxl\n"
                    f"wb = openpyxl.load_workbook({g.HOME + '/' + path!r})\n"
                    f"with open({g.HOME + '/' + out!r}, 'w', newline='') as f:\n"
                    "    w = csv.writer(f)\n"
                    "    for row in wb.worksheets[0].iter_rows(values_only=True):\n"
                    "        w.writerow(['' if v is None else v for v in row])\n"
                ),
            },
        }
    ]
    return Case(
        params=c.params,
        files=c.files,
        open=c.open,
        # a gate: the kept workbook earns no credit by itself (doing nothing scores 0)
        verifier={"kind": "all", "checks": [{**c.verifier, "gate": True}, *expect_rows]},
        gui=gui,
        code=code,
    )


def _csv_import(seed: int) -> Case:
    book = books.transactions(seed, count=16)
    acc = books.data.records(seed).accounts
    accounts = Sheet(
        "Accounts",
        table(
            ["Account", "Owner", "Type", "Balance"],
            [[a.number, a.owner, a.kind, a.balance] for a in acc],
            {3: books.MONEY},
        ),
        {0: 12.0, 1: 20.0, 2: 10.0, 3: 12.0},
    )
    path = f"bank_{seed + 1}.xlsx"
    csv_name = f"statement_{seed + 1}.csv"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Reference", "Payee", "Amount", "Memo"])
    rows = [[r[1], r[3], r[5], r[6]] for r in book.body]
    w.writerows(rows)
    expect: list[dict[str, Any]] = [
        {"has_sheet": "Statement"},
        {"cell": "A1", "value": "Reference", "sheet": "Statement"},
    ]
    for i, (ref, _payee, amount, _memo) in enumerate(rows, start=2):
        expect += [
            {"cell": f"A{i}", "value": ref, "sheet": "Statement"},
            {"cell": f"C{i}", "value": amount, "tol": TOL, "sheet": "Statement"},
        ]
    gui = [
        g.key("ctrl+o"),
        g.wait(1.5),
        g.key("ctrl+a"),
        g.type_text(f"{g.HOME}/{csv_name}"),
        g.key("Return"),
        g.wait(2.5),
        g.key("Return"),
        g.wait(2.5),  # the text import: OK
        g.key("ctrl+a"),
        g.key("ctrl+c"),
        g.wait(0.5),
        g.key("ctrl+w"),
        g.wait(2.0),
        *g.new_sheet("Statement"),
        g.key("ctrl+v"),
        g.wait(1.0),
    ]
    n = len(rows) + 1
    code = g.code(
        path,
        f"""
        import csv
        s = wb.create_sheet("Statement")
        with open({g.HOME + "/" + csv_name!r}, newline="") as f:
            for r, row in enumerate(csv.reader(f), start=1):
                for c, v in enumerate(row, start=1):
                    s.cell(r, c, float(v) if c == 3 and r > 1 else v)
        assert s.max_row == {n}
        """,
    )
    params = {"csv": f"~/{csv_name}"}
    return case(path, [accounts], params, expect, gui, code, text_files={csv_name: buf.getvalue()})


TEMPLATES: list[Template] = [
    # ----- cross-sheet references
    template(
        "calc-invoice-tax",
        ("cross-sheet references", "formulas"),
        (
            "In {file}, add a Tax column (F) on the Invoice sheet: each line's amount times the "
            "sales tax rate kept on the Rates sheet. Refer to that rate cell, don't copy the "
            "number, so a new rate updates it. Save.",
            "The sales tax rate for {customer}'s order lives on the Rates sheet of {file}. Head "
            "column F of the Invoice sheet 'Tax' and compute each line's tax from its Amount and "
            "a reference to that rate. Save the workbook.",
            "Work out the tax per line in {file}: column F titled Tax, formula = Amount x the "
            "Sales tax value from the other sheet (linked, not typed in). Then save.",
        ),
        _invoice_tax,
    ),
    template(
        "calc-quarter-growth",
        ("formulas", "number formats"),
        (
            "In {file}, add a Growth column (D) with each quarter's revenue change against the "
            "quarter before, as a formula shown as a percentage (leave the first quarter's row "
            "empty). Save.",
            "{company}'s quarterly sheet ({file}) needs quarter-over-quarter revenue growth: "
            "header 'Growth' in D1, from row 3 on the revenue divided by the previous quarter's "
            "minus 1, formatted as percent. Save the file.",
            "Show how much revenue grew each quarter in {file}: column D, titled Growth, a "
            "formula per quarter from the second one, displayed in percent. Then save.",
        ),
        _quarter_growth,
    ),
    # ----- pivot-style summaries
    template(
        "calc-category-summary",
        ("pivot-style summaries", "cross-sheet references"),
        (
            "Summarize {file} by category on a new sheet named Summary: headers Category and "
            "Total in A1:B1, then one row per category in alphabetical order with the sum of its "
            "amounts. Save the workbook.",
            "Add a sheet called Summary to {file} that totals the Amount column per Category "
            "(column A the category names sorted A-Z under a 'Category' header, column B the "
            "totals under 'Total'). Save.",
            "I need spending per category from the transactions in {file}: a new Summary sheet "
            "with a Category/Total header row and a line for each of {categories}, in that order. "
            "Save it.",
        ),
        _category_summary,
    ),
    template(
        "calc-budget-by-category",
        ("pivot-style summaries", "cross-sheet references"),
        (
            "Add a sheet named By Category to {file} with, for each budget category (sorted "
            "A-Z, one per row from row 2), its total over all payees and all months {first} to "
            "{last}. Headers: Category and Half-year. Save.",
            "Roll {owner}'s budget ({file}) up by category on a new 'By Category' sheet: column A "
            "the categories alphabetically under 'Category', column B the sum of everything "
            "budgeted for it under 'Half-year'. Save the file.",
            "Make a category summary of {file}: new sheet By Category, header row Category / "
            "Half-year, then each category in alphabetical order with its six-month total. Save.",
        ),
        _budget_by_category,
    ),
    # ----- number formats and styles
    template(
        "calc-money-format",
        ("number formats",),
        (
            "The Unit Price and Amount columns of {file} show raw numbers. Format them with a "
            "thousands separator and exactly two decimal places. Save.",
            "Make the prices and amounts in {file} read like money: two decimals and thousands "
            "separators on every line (columns D and E). Save the file.",
            "In the quote for {customer} ({file}), give the Unit Price and Amount figures a "
            "number format with 2 decimal places and a thousands separator, then save.",
        ),
        _money_format,
    ),
    template(
        "calc-share-percent",
        ("number formats",),
        (
            "The Share column in {file} shows fractions like 0.23. Display them as percentages "
            "instead. Save.",
            "Format column C (Share) of {file} as percent so each category's part of the total "
            "reads as a percentage. Save the workbook.",
            "Please turn the Share figures in {file} into percentage format (the values stay the "
            "same) and save.",
        ),
        _share_percent,
    ),
    template(
        "calc-bold-header",
        ("formats",),
        (
            "Make the column headings in row 1 of {file} bold (only the header row). Save.",
            "The header row of the stock sheet in {file} looks like the data. Put the titles in "
            "row 1 in bold and save.",
            "Bold the first row of {file}, the one with SKU, Item, Category and so on, then save "
            "the workbook.",
        ),
        _bold_header,
    ),
    # ----- conditional formats
    template(
        "calc-low-stock-highlight",
        ("conditional formats",),
        (
            "In {file}, make the In Stock cells turn red when fewer than {limit} items are left "
            "(a conditional format on that column, so it updates by itself). Save.",
            "Add conditional formatting to the In Stock column of {file}: any value below {limit} "
            "should be highlighted. Save the workbook.",
            "I want to spot low stock at a glance in {file}: highlight In Stock numbers under "
            "{limit} with a conditional format, then save.",
        ),
        _low_stock,
    ),
    template(
        "calc-top-marks-highlight",
        ("conditional formats",),
        (
            "Highlight every score of {mark} or more in {file} (all assignment columns) with a "
            "conditional format. Save.",
            "In the {course} grade book ({file}), add conditional formatting so that marks at or "
            "above {mark} stand out, over all the students' scores. Save the file.",
            "Use a conditional format on the score cells of {file} to mark results greater than "
            "or equal to {mark}, then save the workbook.",
        ),
        _top_marks,
    ),
    # ----- charts
    template(
        "calc-revenue-chart",
        ("charts",),
        (
            "Insert a column chart of the Revenue per quarter in {file} (quarters along the "
            "bottom) and save the file.",
            "{company} wants to see revenue by quarter as vertical bars: add a column chart of "
            "the Revenue column of {file}, labelled by Quarter. Save.",
            "Chart the quarterly revenue in {file} with a standard column chart on the same "
            "sheet, then save the workbook.",
        ),
        _revenue_chart,
    ),
    template(
        "calc-spending-pie",
        ("charts",),
        (
            "Make a pie chart of the Spent column in {file}, one slice per category, and save.",
            "Show how the spending in {file} splits across categories as a pie chart (the "
            "categories as the slices' labels). Save the workbook.",
            "Add a pie chart to {file} built from the categories and their Spent amounts, then "
            "save the file.",
        ),
        _spend_pie,
    ),
    template(
        "calc-customers-line",
        ("charts",),
        (
            "Plot the number of customers per quarter in {file} as a line chart and save.",
            "{company}'s customer count over the quarters ({file}) should be a line chart with "
            "the quarters on the horizontal axis. Add it and save.",
            "Insert a line chart of the Customers column of {file} against the quarters, then "
            "save the workbook.",
        ),
        _customers_line,
    ),
    # ----- sheets and CSV
    template(
        "calc-rename-sheet",
        ("sheets",),
        (
            'Rename the only sheet of {file} to "{name}" and save.',
            "The tab in {file} is still called Sheet1. Call it {name} instead, then save the "
            "workbook.",
            "Give the worksheet in {file} the name {name} (keep its contents) and save.",
        ),
        _rename_sheet,
    ),
    template(
        "calc-csv-export",
        ("exporting delimited text",),
        (
            "Export the sheet in {file} as a CSV file at {csv} (comma-separated, header row "
            "included).",
            "Someone needs the stock list from {file} as plain CSV: save a copy as {csv}.",
            "Save {file}'s data to {csv} in CSV format, keeping the header line.",
        ),
        _csv_export,
    ),
    template(
        "calc-csv-import",
        ("importing delimited text",),
        (
            "Bring the bank statement in {csv} into {file} as a new sheet named Statement "
            "(same columns, the amounts as numbers), and save the workbook.",
            "Import {csv} into {file}: put its rows, header included, on an added sheet called "
            "Statement starting at A1. Save.",
            "Copy the data of the CSV file {csv} into a new 'Statement' sheet of {file} so the "
            "Amount column holds real numbers. Save the file.",
        ),
        _csv_import,
    ),
]
