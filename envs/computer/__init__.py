"""The computer family: ``palaestra/computer-v0``, a sandboxed Linux desktop with GUI and code."""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="computer",
    envs=(
        EnvSpec(
            "palaestra/computer-v0",
            "palaestra.envs.computer.env:ComputerEnv",
            family="computer",
            description="A Linux desktop (Xvfb, a window manager, real apps) in a sandbox with "
            "no network: GUI actions and shell/Python code in one action space.",
        ),
    ),
    suites=(
        SuiteSpec(
            "computer-basic",
            "palaestra.envs.computer.suites:load_suite",
            "Desktop tasks: file management, text editing, shell and scripting, archives and "
            "permissions, mixed GUI + code; each with an oracle, execution-validated.",
        ),
        SuiteSpec(
            "office",
            "palaestra.envs.computer.office.suite:load_suite",
            "Office work in LibreOffice Calc, Writer and Impress: generated spreadsheets, "
            "documents and decks, checked in the saved file; office-calc, -writer, -impress.",
        ),
        *(
            SuiteSpec(
                f"office-{app}",
                f"palaestra.envs.computer.office.suite:load_{app}",
                f"Office work in LibreOffice {app.capitalize()} (a part of the office suite), "
                "checked in the saved file; execution-validated.",
            )
            for app in ("calc", "writer", "impress")
        ),
        SuiteSpec(
            "osworld-os",
            "palaestra.envs.computer.osworld:load_suite",
            "OSWorld's os-domain tasks in their own JSON format: the ones this desktop can run.",
        ),
    ),
    package="palaestra.envs.computer",
    # the office documents' check kinds (spreadsheet, text_document, presentation, OSWorld's)
    checks=(
        "palaestra.verifiers.computer",
        "palaestra.verifiers.office",
        "palaestra.verifiers.office_osworld",
    ),
    options="palaestra.envs.computer.options:ComputerOptions",
    description="A sandboxed Linux desktop: GUI actions and shell/Python code.",
)
