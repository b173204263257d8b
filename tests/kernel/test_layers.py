"""The layer contracts (checked by `scripts/lint.sh imports`) cover every kernel module.

A new module in palaestra/ is kernel unless it is an application; if it is not named in the
"kernel imports nothing above it" contract, nothing would stop it importing a family.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_kernel_module_is_in_the_kernel_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    kernel = next(c for c in contracts if c["type"] == "forbidden")
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    # a module named in the layers contract (cli, demo, evals, ...) sits above the kernel
    above = {
        name.strip().removeprefix("palaestra.").split(".")[0]
        for layer in layers
        for name in layer.split("|")
    }
    modules = {p.stem for p in (ROOT / "palaestra").glob("*.py")} - {"__init__"} - above
    packages = {p.parent.name for p in (ROOT / "palaestra").glob("*/__init__.py")} - above
    listed = {m.removeprefix("palaestra.") for m in kernel["source_modules"]}
    assert modules | packages == listed
