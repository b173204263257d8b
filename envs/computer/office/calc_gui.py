"""How the Calc templates' reference solutions are written.

GUI recipes are action lists (keyboard first, Calc's own shortcuts), played by ``replay``; each
was tried on LibreOffice 7.4 (gtk3, 1024x768, en-US):

- ``goto(ref)``: Ctrl+Shift+F5 focuses the Name Box; a cell (``B7``) or a range (``B2:B9``)
  typed there and Enter moves the cursor or selects the range;
- ``cells(ref, values)``: from ``ref``, each value typed and Tab (the last one Enter): a row of
  cells, one ``type_text`` per cell (typing several cells in one text let AutoInput and the
  formula tooltip eat keys);
- ``command(name)``: Shift+Esc opens "Search Commands" (LibreOffice 7.2+), the menu item's
  name typed picks it as the first hit, Enter runs it ("sort ascending", "chart", "freeze rows
  and columns", "insert sheet at end", "rename sheet");
- formulas typed in the GUI use Calc's references (``$Sheet.A1``), commas between arguments
  (en-US); the code solutions write Excel's (``Sheet!A1``) through openpyxl;
- ``conditional(...)``: Format (Alt+O), eleven Downs to "Conditional" (disabled items are
  skipped), Right to "Condition...": in the dialog Tab, Down to the operator (the list's order
  is fixed), Tab, the value, Tab, Downs to the style (Accent, Accent 1-3, Bad, ...), Enter;
- ``chart(...)``: "Insert > Chart" on the selected range; the type list has the focus (Column,
  Bar, Pie, Area, Line: Downs), Enter does not finish there: Alt+F is Finish (its mnemonic,
  as the accessibility tree says; the dialog's place depends on the window manager);
- ``save()``: Ctrl+S and Enter on "Use Excel 2007-365!" (keep the format).

Code recipes are Python run in the sandbox with Debian's python3-openpyxl: ``code(path, body)``
wraps a body that sees ``wb`` (the workbook) and ``ws`` (its first sheet); a body that writes
formulas asks for ``recalc``: openpyxl stores formulas without results, so the saved file goes
once through a headless LibreOffice (its own profile, not the session's) that computes and
stores them, as a spreadsheet app would.
"""

from __future__ import annotations

import textwrap

from palaestra.envs.computer.office.gui_common import Action, key, type_text, wait

HOME = "/home/user"
#: the operators of the conditional format dialog's list, in its order
OPERATORS = ("=", "<", ">", "<=", ">=", "!=")
#: the cell styles of its style list from the default one (Accent)
STYLES = ("Accent", "Accent 1", "Accent 2", "Accent 3", "Bad", "Default", "Error", "Footnote")
#: the chart wizard's types, in the list's order
CHARTS = ("column", "bar", "pie", "area", "line")


def goto(ref: str) -> list[Action]:
    return [key("ctrl+shift+F5"), wait(0.4), type_text(ref), key("Return"), wait(0.4)]


def cells(ref: str, values: list[str], down: bool = False) -> list[Action]:
    """Type ``values`` into the cells from ``ref`` on: along the row, or down the column."""
    out = goto(ref)
    for i, v in enumerate(values):
        last = i == len(values) - 1
        out += [type_text(v), key("Return" if down or last else "Tab"), wait(0.2)]
    return out


def fill(range_ref: str, down: bool = True) -> list[Action]:
    """Copy the first cell of the range over the rest: Ctrl+D down a column; along a row by
    copy and paste (Calc's Ctrl+R aligns right, it does not fill)."""
    if down:
        return [*goto(range_ref), key("ctrl+d"), wait(0.4)]
    first, _, last = range_ref.partition(":")
    col = "".join(c for c in first if c.isalpha())
    row = first[len(col) :]
    nxt = chr(ord(col) + 1) + row  # the templates fill from a one-letter column
    return [
        *goto(first),
        key("ctrl+c"),
        wait(0.3),
        *goto(f"{nxt}:{last}"),
        key("ctrl+v"),
        wait(0.5),
        key("Escape"),
    ]


def command(name: str, settle: float = 1.0) -> list[Action]:
    return [key("shift+Escape"), wait(1.0), type_text(name), wait(1.0), key("Return"), wait(settle)]


def new_sheet(name: str) -> list[Action]:
    """Append a sheet named ``name`` (it becomes the current one, the cursor on A1)."""
    return [
        *command("insert sheet at end", 1.5),
        key("ctrl+a"),
        type_text(name),
        key("Return"),
        wait(1.0),
    ]


def conditional(range_ref: str, operator: str, value: str, style: str = "Bad") -> list[Action]:
    return [
        *goto(range_ref),
        key("alt+o"),
        wait(0.8),
        key(" ".join(["Down"] * 11)),
        key("Right"),
        wait(0.5),
        key("Return"),
        wait(2.0),
        key("Tab"),
        *(
            [key(" ".join(["Down"] * OPERATORS.index(operator)))]
            if OPERATORS.index(operator)
            else []
        ),
        key("Tab"),
        type_text(value),
        key("Tab"),
        *([key(" ".join(["Down"] * STYLES.index(style)))] if STYLES.index(style) else []),
        wait(0.3),
        key("Return"),
        wait(1.0),
    ]


def chart(range_ref: str, kind: str) -> list[Action]:
    downs = CHARTS.index(kind)
    return [
        *goto(range_ref),
        *command("chart", 3.0),
        *([key(" ".join(["Down"] * downs)), wait(0.5)] if downs else []),
        key("alt+f"),  # Finish (the wizard's default button does not take Enter)
        wait(2.0),
        key("Escape"),
        wait(1.0),
    ]


def save() -> list[Action]:
    return [key("ctrl+s"), wait(1.5), key("Return"), wait(2.0)]


_RECALC = """
def _recalc(path):
    import os, shutil, subprocess, tempfile
    out = tempfile.mkdtemp()
    subprocess.run(["soffice", "-env:UserInstallation=file://" + out + "/profile", "--headless",
                    "--norestore", "--convert-to", path.rsplit(".", 1)[1], "--outdir", out, path],
                   check=True, timeout=100, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.copyfile(os.path.join(out, os.path.basename(path)), path)
    shutil.rmtree(out, ignore_errors=True)
"""


#: openpyxl writes a float as ``%.16g`` (8.14 as 8.140000000000001): a value the original never
#: held, which the wrong-content adversary would "put off" by 1e-15 (no wrong content at all);
#: written shortest (``repr``; 46339 for a day, never 46339.0), the file holds the original's
#: numbers and that adversary has to change real data instead
_SHORTEST = """
import openpyxl.cell._writer as _writer
_plain = _writer.safe_string
def _shortest(v):
    if type(v) is not float:
        return _plain(v)
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text
_writer.safe_string = _shortest
"""


def code(path: str, body: str, recalc: bool = False, shortest: bool = False) -> list[Action]:
    """A ``run_python`` action that opens ``~/path`` with openpyxl, runs ``body``, saves
    (and has LibreOffice compute the formulas it wrote when ``recalc``; floats written in
    their shortest form when ``shortest``)."""
    full = f"{HOME}/{path}"
    src = (
        "import openpyxl\n"
        "from openpyxl.utils import get_column_letter\n"
        + (_SHORTEST if shortest else "")
        + (_RECALC if recalc else "")
        + f"path = {full!r}\n"
        + "wb = openpyxl.load_workbook(path)\nws = wb.worksheets[0]\n"
        + textwrap.dedent(body).strip()
        + "\nwb.save(path)\n"
        + ("_recalc(path)\n" if recalc else "")
    )
    return [{"name": "run_python", "args": {"code": src, "timeout": 120}}]
