"""What every Calc template is made with: the check spec, the guarded generator, the Case, and
the solutions several templates share (a formula column, a number format on a range, a
conditional format on a range)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.envs.computer.office import calc_gui as g
from palaestra.envs.computer.office.calc_files import Sheet, ods, xlsx
from palaestra.envs.computer.office.template import ArtifactError, Case, Template

TOL = 0.01


def check(path: str, expect: list[dict[str, Any]], sheet: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": "spreadsheet", "path": f"~/{path}", "formats": ["xlsx", "ods"]}
    if sheet:
        spec["sheet"] = sheet
    spec["expect"] = expect
    return spec


def template(
    name: str, skills: tuple[str, ...], phrasings: tuple[str, ...], make: Callable[[int], Case]
) -> Template:
    """A Template whose generator names itself and the seed when it fails."""

    def guarded(seed: int) -> Case:
        try:
            return make(seed)
        except ArtifactError:
            raise
        except Exception as exc:
            raise ArtifactError(name, seed, f"{type(exc).__name__}: {exc}") from exc

    return Template(name=name, app="calc", skills=skills, phrasings=phrasings, make=guarded)


def case(
    path: str,
    sheets: list[Sheet],
    params: dict[str, Any],
    expect: list[dict[str, Any]],
    gui: list[Any],
    code: list[Any] | None,
    sheet: str | None = None,
    extra: dict[str, bytes] | None = None,
    text_files: dict[str, str] | None = None,
) -> Case:
    data = ods(sheets) if path.endswith(".ods") else xlsx(sheets)
    return Case(
        params={"file": f"~/{path}", **params},
        files={path: data, **(extra or {})},
        open=path,
        verifier=check(path, expect, sheet),
        gui=[*gui, *g.save()],
        code=code,
        text_files=text_files or {},
    )


def formula_column(
    path: str,
    col: str,
    header: str,
    values: list[float],
    formula: str,
    gui_formula: str | None = None,
    check: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[Any], list[Any]]:
    """The checks, GUI solution and code solution of a new column ``col`` headed ``header``
    whose rows from 2 on each hold ``formula`` (``{r}`` standing for the row) and evaluate to
    ``values``, one per row. The GUI types the header and row 2's formula (``gui_formula``
    where Calc's syntax differs, e.g. another sheet's cell), then fills it down; the code
    writes every row's formula. Each value cell is checked within :data:`TOL` and, by default,
    to hold a formula (``check`` replaces that, e.g. with ``formula_contains``). Shared by the
    templates that add a computed column (amounts, row totals, averages, tax), which differ
    only in these arguments."""
    n = len(values) + 1
    expect: list[dict[str, Any]] = [{"cell": f"{col}1", "value": header, "ignore_case": True}]
    expect += [
        {"cell": f"{col}{r}", "value": v, "tol": TOL, **(check or {"formula": True})}
        for r, v in enumerate(values, start=2)
    ]
    first = gui_formula or formula.format(r=2)
    gui = [*g.cells(f"{col}1", [header, first], down=True), *g.fill(f"{col}2:{col}{n}")]
    body = (
        f'ws["{col}1"] = "{header}"\n'
        f"for r in range(2, {n + 1}):\n"
        f'    ws[f"{col}{{r}}"] = f"{formula}"'
    )
    return expect, gui, g.code(path, body, recalc=True)


def number_format(path: str, ref: str, shortcut: str, fmt: str) -> tuple[list[Any], list[Any]]:
    """The GUI solution (select ``ref``, press Calc's ``shortcut`` for the format) and the code
    solution (``fmt`` on every cell of ``ref``) of a number format task; the templates that
    format money and percentages differ only in these arguments."""
    gui = [*g.goto(ref), g.key(shortcut), g.wait(0.5)]
    body = f'for row in ws["{ref}"]:\n    for c in row:\n        c.number_format = "{fmt}"'
    return gui, g.code(path, body, shortest=True)


#: the comparisons of the conditional format templates, as openpyxl's ``CellIsRule`` names them
CELL_IS = {"<": "lessThan", ">=": "greaterThanOrEqual"}
#: what Calc's cell style looks like in openpyxl: (font colour or None, fill colour)
LOOKS = {"Bad": ("9C0006", "FFC7CE"), "Accent 3": (None, "C6EFCE")}


def conditional_format(
    path: str, ref: str, op: str, value: int, style: str, shortest: bool = False
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """The rule the check expects, the GUI solution (Calc's conditional format dialog: cells
    ``op`` ``value`` get the cell style ``style``) and the code solution (openpyxl's
    ``CellIsRule`` with the font and fill that style stands for) of a highlighting task;
    the templates that highlight low stock and top marks differ only in these arguments."""
    rule = {"range": ref, "type": "cell", "operator": op, "values": [value]}
    gui = g.conditional(ref, op, str(value), style)
    font, fill = LOOKS[style]
    body = f"""
        from openpyxl.formatting.rule import CellIsRule
        from openpyxl.styles import {"Font, " if font else ""}PatternFill
        ws.conditional_formatting.add("{ref}", CellIsRule(operator="{CELL_IS[op]}",
            formula=["{value}"],{f' font=Font(color="{font}"),' if font else ""}
            fill=PatternFill(start_color="{fill}", end_color="{fill}", fill_type="solid")))
        """
    return rule, gui, g.code(path, body, shortest=shortest)
