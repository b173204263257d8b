"""docs/architecture.md's picture of the layers is the import-linter contract, in its order.

The diagram's chain of boxes (``a --> b --> ...``), top first, must name every module of each
layer of pyproject.toml's ``layers`` contract in the box at that layer's place, with the kernel
last: a layer added, moved or renamed in the contract and not in the picture fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
MODULE_RE = re.compile(r"\b((?:palaestra\.)?(?:envs\.)?[a-z_][a-z_0-9]*(?:\.[a-z_0-9]+)*)")


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def _picture() -> list[tuple[str, set[str]]]:
    """Each box of the diagram (its label, the modules it names), in the order the arrows
    chain them."""
    block = re.search(r"^```mermaid\nflowchart TB\n(.*?)^```", DOC.read_text(), re.S | re.M)
    assert block is not None, "architecture.md has no layer diagram"
    labels = dict(re.findall(r'^\s+(\w+)\["(.*)"\]$', block.group(1), re.M))
    chain: list[str] = []
    for line in re.findall(r"^\s+(\w+(?: --> \w+)+)$", block.group(1), re.M):
        nodes = line.split(" --> ")
        chain += nodes[1:] if chain and chain[-1] == nodes[0] else nodes
    boxes = []
    for node in chain:
        named = [m for m in MODULE_RE.findall(labels[node]) if "." in m]
        modules = {m if m.startswith("palaestra.") else f"palaestra.{m}" for m in named}
        boxes.append((labels[node], modules))
    return boxes


def test_the_layer_picture_is_the_contract_in_its_order() -> None:
    layers, picture = _contract_layers(), _picture()
    assert len(picture) == len(layers) + 1, "one box per layer, and the kernel last"
    for place, (layer, (_, box)) in enumerate(zip(layers, picture, strict=False)):
        assert layer <= box, f"box {place + 1} of the picture lacks {sorted(layer - box)}"
    kernel, _ = picture[-1]
    assert "kernel" in kernel and "registry" in kernel
