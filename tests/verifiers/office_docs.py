"""Makes the office documents the office verifier tests judge (run as a script by a Python with
openpyxl, python-docx and odfpy: Debian's ``/usr/bin/python3`` or ``.venv-osworld``'s).

``python office_docs.py OUT`` writes, into OUT, a workbook and its variants (a value changed, a
style changed, a sheet missing, a sheet renamed, another chart type, other frozen panes), a
text document and its variants, and a text document with a comment (ODF, for LibreOffice to
turn into .docx). :func:`convert` in the tests then has LibreOffice save them as it would
(formulas computed) and in the other format.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

#: the Python that makes the documents: Debian's, with python3-openpyxl, -docx and -odf
MAKER = "/usr/bin/python3"


def soffice(out: Path, fmt: str, *files: Path) -> None:
    """LibreOffice saves ``files`` as ``fmt`` into ``out``, in a profile of its own (another
    LibreOffice running on the machine must not take the job over)."""
    with tempfile.TemporaryDirectory(prefix="lo-profile-") as profile:
        subprocess.run(
            ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
             "--convert-to", fmt, "--outdir", str(out), *map(str, files)],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    for f in files:
        made = out / (f.stem + "." + fmt.split(":")[0])
        if not made.exists():
            raise RuntimeError(f"LibreOffice did not save {f.name} as {fmt}")


def build(out: Path) -> Path:
    """Every document of the office tests, in ``out/lo`` as LibreOffice saved them (``.xlsx``
    and ``.ods``, ``.docx`` and ``.odt``; a deck as ``.odp`` and ``.pptx``) and the originals
    in ``out``."""
    subprocess.run([MAKER, __file__, str(out)], check=True, capture_output=True, timeout=120)
    from palaestra.envs.computer.office.impress_odp import Deck, Slide, odp

    deck = Deck(
        (
            Slide("Quarterly plan", ("Launch", "Grow"), notes="Speak slowly", layout="title"),
            Slide(
                "Costs",
                ("Rent 1200", "Food 450"),
                boxes=("Draft",),
                table=(("Item", "Cost"), ("Rent", "1200")),
                background="#ffcc00",
            ),
            Slide("Next steps", layout="title_only"),
        )
    )
    (out / "deck.odp").write_bytes(odp(deck))
    lo = out / "lo"
    soffice(lo, "xlsx", *sorted(out.glob("book_*.xlsx")))
    soffice(lo, "ods", out / "book_base.xlsx")
    soffice(lo, "docx", *sorted(out.glob("doc_*.docx")), out / "commented.odt")
    soffice(lo, "odt", out / "doc_base.docx")
    soffice(lo, "pptx", out / "deck.odp")
    soffice(lo, "odp", out / "deck.odp")
    return lo


def workbook(out: Path) -> None:
    import openpyxl
    from openpyxl.chart import BarChart, LineChart, Reference
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import Font, PatternFill

    def make(variant: str) -> None:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "Budget"
        ws.append(["Item", "Cost", "Share"])
        rows = [("Rent", 1200), ("Food", 451 if variant == "value" else 450.5), ("Bus", 80)]
        for name, cost in rows:
            ws.append([name, cost, None])
        ws["A5"], ws["B5"] = "Total", "=SUM(B2:B4)"
        ws["A5"].font = Font(bold=True)
        ws["C2"] = 0.25
        ws["C2"].number_format = "0.00%"
        color = "00FF00" if variant == "style" else "FFFF00"
        ws["B2"].fill = PatternFill("solid", fgColor=color)
        ws.freeze_panes = "B2" if variant == "freeze" else "A2"
        ws.auto_filter.ref = "A1:C4"
        ws.merge_cells("E1:F1")
        red = PatternFill("solid", fgColor="FF0000")
        rule = CellIsRule(operator="greaterThan", formula=["1000"], fill=red)
        ws.conditional_formatting.add("B2:B4", rule)
        chart = LineChart() if variant == "chart" else BarChart()
        chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=4))
        chart.title = "Costs"
        ws.add_chart(chart, "H2")
        if variant != "sheet_missing":
            notes = wb.create_sheet("Memo" if variant == "sheet_renamed" else "Notes")
            notes["A1"] = "hello"
        wb.save(out / f"book_{variant}.xlsx")

    for variant in ("base", "value", "style", "sheet_missing", "sheet_renamed", "chart", "freeze"):
        make(variant)


def document(out: Path) -> None:
    import docx
    from docx.enum.section import WD_ORIENT
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    def make(variant: str) -> None:
        d = docx.Document()
        d.add_heading("Quarterly Report" if variant != "case" else "quarterly report", 1)
        body = "Sales grew in every region."
        if variant == "text":
            body = "Sales fell in every region."
        first = d.add_paragraph(body)
        first.alignment = WD_ALIGN_PARAGRAPH.CENTER
        second = d.add_paragraph("Costs stayed flat.")
        if variant == "order":
            first._p.addprevious(second._p)
        d.add_paragraph("Hire two engineers", style="List Bullet")
        d.add_paragraph("Open the Lyon office", style="List Number")
        mixed = d.add_paragraph("The ")
        mixed.add_run("net total").bold = True
        mixed.add_run(" is final.")
        if variant == "added":
            d.add_paragraph("One more thing.")
        table = d.add_table(rows=2, cols=2)
        for (r, c), text in {
            (0, 0): "Region",
            (0, 1): "Sales",
            (1, 0): "North",
            (1, 1): "12",
        }.items():
            table.cell(r, c).text = text
        section = d.sections[0]
        section.orientation = WD_ORIENT.LANDSCAPE
        section.page_width, section.page_height = section.page_height, section.page_width
        d.save(out / f"doc_{variant}.docx")

    for variant in ("base", "text", "added", "case", "order"):
        make(variant)


def commented(out: Path) -> None:
    """An ODF text with a comment anchored on words (LibreOffice makes the .docx of it)."""
    from odf.dc import Creator
    from odf.namespaces import OFFICENS
    from odf.office import Annotation, AnnotationEnd
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    doc = OpenDocumentText()
    p = P(text="Revenue: ")
    ann = Annotation()
    ann.setAttrNS(OFFICENS, "name", "c1")  # odfpy's name= writes draw:name, not office:name
    ann.addElement(Creator(text="Dana"))
    ann.addElement(P(text="check the totals"))
    p.addElement(ann)
    p.addText("4,200 EUR")
    p.addElement(AnnotationEnd(name="c1"))
    p.addText(" this quarter.")
    doc.text.addElement(p)
    doc.save(str(out / "commented.odt"))


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    workbook(target)
    document(target)
    commented(target)
