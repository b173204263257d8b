"""GUI recipes the office templates' GUI oracles share: keyboard action lists for LibreOffice.

Each function returns a list of action strings of the computer family (``key(...)``,
``type_text(...)``, ``wait(...)``), for a template's ``Case.gui`` (played by the ``replay``
oracle). Keyboard only, no code: the GUI oracle must be something a person at the keyboard does.

Decisions:

- Waits are fixed and short (:data:`DIALOG_S`, :data:`SAVE_S`): a replayed oracle cannot look
  at the screen, so each recipe waits as long as LibreOffice needs on this 2-core machine
  under load, measured on the real apps (``tests/envs/computer/test_office_app.py``).
- Saving keeps the task's format: Ctrl+S, then for a non-ODF format the "Keep current format"
  question answered with its default button ("Use Excel 2007-365!" and its kin), which
  Return presses. The question stays on (LibreOffice's default), as on a real desktop.
- Menus are walked by their mnemonics (Alt+letter, then letters): the same keys a person
  uses. (LibreOffice's Shift+Esc "Search Commands" box is not used: in Calc that key opens the
  Function Wizard.)
- Calc's AutoInput completes a typed text from the column's other entries; a cell typed by
  :func:`type_cells` ends with Delete (which drops a suggested completion and does nothing
  otherwise) before Tab or Return, so the cell holds exactly what was typed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: how long a dialog or popup takes to open (and focus) under load
DIALOG_S = 1.0
#: how long a save takes before the next key (the format question, writing the file)
SAVE_S = 1.5
#: formats LibreOffice saves without asking to keep them
ODF = frozenset({"ods", "odt", "odp", "fods", "fodt", "fodp"})
#: formats whose export shows an options dialog after the format question
TEXT_EXPORTS = frozenset({"csv"})


def key(combo: str) -> str:
    return f"key({combo!r})"


def type_text(text: str) -> str:
    return f"type_text({text!r})"


def wait(seconds: float) -> str:
    return f"wait({seconds!r})"


def save(fmt: str) -> list[str]:
    """Ctrl+S keeping the document's format (``fmt``: its extension, ``"xlsx"``, ``"odt"``...):
    a non-ODF format's "Keep current format" question is answered with Return (its default,
    "Use <format>!")."""
    actions = [key("ctrl+s"), wait(SAVE_S)]
    if fmt.lower().lstrip(".") not in ODF:
        actions += [key("Return"), wait(SAVE_S)]
    return actions


def save_as(path: str) -> list[str]:
    """File > Save As (Ctrl+Shift+S) to ``path`` (absolute, ``/home/user/...``; a new file):
    GTK's file dialog takes the whole path in its name field, and LibreOffice picks the format
    from the extension (``.ods``, ``.xlsx``, ``.csv``, ``.odt``, ``.docx``, ``.pptx``...). A
    non-ODF format's "Keep current format" question gets Return; a CSV export then shows its
    options dialog, whose OK is Return too."""
    ext = path.rsplit(".", 1)[-1].lower()
    actions = [key("ctrl+shift+s"), wait(DIALOG_S), type_text(path), key("Return"), wait(SAVE_S)]
    if ext not in ODF:
        actions += [key("Return"), wait(SAVE_S)]
    if ext in TEXT_EXPORTS:
        actions += [key("Return"), wait(SAVE_S)]
    return actions


def menu(*keys: str) -> list[str]:
    """Open a menu by keyboard and walk it: ``menu("alt+o", "i")`` presses Alt+O (Format),
    then I; each key waits for its menu to open."""
    actions: list[str] = []
    for k in keys:
        actions += [key(k), wait(0.4)]
    return actions


def close_dialog() -> list[str]:
    """Escape: a dialog (or a popup) closes without applying."""
    return [key("Escape"), wait(0.4)]


def confirm_dialog() -> list[str]:
    """Return: the dialog's default button (OK) applies it; waits for it to close."""
    return [key("Return"), wait(DIALOG_S)]


# ----- Calc ---------------------------------------------------------------------------------
def go_to_cell(ref: str) -> list[str]:
    """Select a cell or a range (``"B4"``, ``"A1:C9"``, ``"Sheet2.A1"``) through the Name Box
    (Ctrl+Shift+F5 focuses it with its text selected; Return goes there)."""
    return [key("ctrl+shift+F5"), wait(0.3), type_text(ref), key("Return"), wait(0.2)]


def type_cells(start: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """Type ``rows`` of values into Calc from ``start`` on: Tab between a row's cells, Return
    after a row (Calc goes back to the row's first column). A value is typed as it reads
    (``"=SUM(B2:B9)"`` is a formula); ``None`` leaves a cell as it is."""
    actions = go_to_cell(start)
    for row in rows:
        for i, value in enumerate(row):
            if value is not None:
                actions += [type_text(str(value)), key("Delete")]
            actions.append(key("Tab" if i < len(row) - 1 else "Return"))
    return actions


def type_cell(ref: str, value: object) -> list[str]:
    """One cell: go to it, type ``value``, Return."""
    return type_cells(ref, [[value]])


# ----- Writer and Impress -------------------------------------------------------------------
def find_replace(find: str, replace: str, app: str = "writer") -> list[str]:
    """Find & Replace (Ctrl+H): every ``find`` replaced by ``replace`` (Replace All, Alt+L),
    then the dialog closed (Alt+C). Calc reports the replacements in a "Search Results" box of
    its own, closed first (``app="calc"``); Writer and Impress report in the dialog."""
    actions = [key("ctrl+h"), wait(DIALOG_S), type_text(find), key("alt+p"), wait(0.2)]
    actions += [type_text(replace), key("alt+l"), wait(DIALOG_S)]
    if app == "calc":
        actions += [key("Escape"), wait(0.4)]
    return [*actions, key("alt+c"), wait(0.4)]


def to_start() -> list[str]:
    """The text cursor to the document's start (Writer), the first cell (Calc)."""
    return [key("ctrl+Home")]
