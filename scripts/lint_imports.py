"""``lint-imports`` from the repository root, seeing ``palaestra.envs`` & co. where they live.

``palaestra.envs``, ``.verifiers``, ``.synth_apps``, ``.server`` and ``.bench`` are the
repository's top-level folders, mapped under ``palaestra`` by setup.py's ``ROOTS``. Grimp (the
import graph behind import-linter) looks for a package's modules inside its one folder only, so
run plainly from the root it would see the kernel alone. This script hands grimp the folders as
setup.py maps them (read from setup.py, not copied) and then runs import-linter's own command
with the contracts of pyproject.toml: ``python scripts/lint_imports.py [lint-imports options]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

from grimp.adaptors.modulefinder import ModuleFinder
from grimp.adaptors.packagefinder import ImportLibPackageFinder
from grimp.application.config import settings

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "palaestra"


def package_folders(setup_py: Path = ROOT / "setup.py") -> dict[str, str]:
    """Folder -> package name, from the ``ROOTS = {...}`` literal of setup.py."""
    for node in ast.parse(setup_py.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "ROOTS"
        ):
            roots: dict[str, str] = ast.literal_eval(node.value)
            return {str(ROOT / folder): name for name, folder in roots.items()}
    raise SystemExit(f"{setup_py}: no ROOTS mapping of packages to folders")


class _MappedPackages(ImportLibPackageFinder):
    """``palaestra`` is every mapped folder, not only the one ``palaestra/``."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def determine_package_directories(self, package_name: str, file_system: Any) -> set[str]:
        if package_name == PACKAGE:
            return set(self.folders)
        return super().determine_package_directories(package_name, file_system)


class _MappedModules(ModuleFinder):
    """A mapped folder's modules are named under its package (``envs/web`` is
    ``palaestra.envs.web``)."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def find_package(self, package_name: str, package_directory: str, file_system: Any) -> Any:
        name = self.folders.get(package_directory, package_name)
        return super().find_package(name, package_directory, file_system)


def main(argv: list[str]) -> None:
    folders = package_folders()
    settings.configure(
        PACKAGE_FINDER=_MappedPackages(folders), MODULE_FINDER=_MappedModules(folders)
    )
    from importlinter.cli import lint_imports_command

    lint_imports_command.main(args=argv or [str(ROOT / "pyproject.toml")], prog_name="lint-imports")


if __name__ == "__main__":
    main(sys.argv[1:])
