"""What every Calc template is made with: the check spec, the guarded generator, the Case."""

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
