"""Layers hold at run time too: every target named by a string points down, like an import.

import-linter sees ``import`` statements only, yet much of palaestra is reached through
``"module:attr"`` strings resolved at run time: the ``palaestra.envs`` entry points, each
``Family`` descriptor's envs, options, suites, policies, checks and validation, the specs and
suites the registries resolve, the bench catalog's mains (``bench/catalog.yaml``), and any such
string in product code (a driver table, a subprocess's ``-m`` module). A string naming a module
above its owner is an upward import in disguise (a loop through strings). The layers and the
forbidden edges are read from pyproject.toml's import-linter contracts, never copied here; a
violation is reported with its owner, its target, their layers and where the string was found.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from palaestra import registry, tasks
from palaestra.family import Family, families

ROOT = Path(__file__).resolve().parents[2]
#: a string that names a palaestra module, maybe with an attribute: "palaestra.x.y[:attr]"
REF_RE = re.compile(r"^(palaestra(?:\.[A-Za-z_]\w*)+)(?::[\w.]+)?$")
#: strings left out, each with why (an entry here is a known debt: say it in the issue)
NOT_TARGETS = {
    ("palaestra.registry", "palaestra.envs"): "the entry-point group's name, not a module",
}


def _folders() -> dict[str, Path]:
    """Package name -> folder, as setup.py's ``ROOTS`` maps them (read, not copied)."""
    spec = importlib.util.spec_from_file_location("lint_imports", ROOT / "scripts/lint_imports.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: Path(folder) for folder, name in module.package_folders().items()}


FOLDERS = _folders()


@dataclass(frozen=True)
class Layers:
    """pyproject's contracts: the layers (top first, ``a | b`` independent siblings) and the
    forbidden edges."""

    layers: list[list[str]]
    forbidden: list[tuple[list[str], list[str]]]

    @classmethod
    def read(cls) -> Layers:
        config = tomllib.loads((ROOT / "pyproject.toml").read_text())
        contracts = config["tool"]["importlinter"]["contracts"]
        layers = [
            [name.strip() for name in layer.split("|")]
            for c in contracts
            if c["type"] == "layers"
            for layer in c["layers"]
        ]
        forbidden = [
            (c["source_modules"], c["forbidden_modules"])
            for c in contracts
            if c["type"] == "forbidden"
        ]
        return cls(layers, forbidden)

    def place(self, module: str) -> tuple[int, str] | None:
        """(rank from the bottom, the sibling it belongs to); the kernel (palaestra/ outside
        every layer) is rank -1; None for a module no contract places."""
        best: tuple[int, str] | None = None
        for i, layer in enumerate(self.layers):
            for name in layer:
                if _within(module, name) and (best is None or len(name) > len(best[1])):
                    best = (len(self.layers) - 1 - i, name)
        if best is not None:
            return best
        if _folder_of(module) == "palaestra":
            return (-1, "palaestra")
        return None

    def violation(self, owner: str, target: str) -> str | None:
        for sources, forbidden in self.forbidden:
            if any(_within(owner, s) for s in sources) and any(
                _within(target, f) for f in forbidden
            ):
                return "a forbidden edge"
        mine, theirs = self.place(owner), self.place(target)
        if mine is None or theirs is None:
            return None
        if theirs[0] > mine[0]:
            return f"{theirs[1]} is above {mine[1]}"
        if theirs[0] == mine[0] and theirs[1] != mine[1] and mine[0] >= 0:
            return f"{theirs[1]} and {mine[1]} are independent siblings of one layer"
        return None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _folder_of(module: str) -> str | None:
    """The setup.py package whose folder holds ``module`` (the longest match)."""
    found = [name for name in FOLDERS if _within(module, name)]
    return max(found, key=len) if found else None


def _exists(module: str) -> bool:
    package = _folder_of(module)
    if package is None:
        return False
    rest = module[len(package) + 1 :].split(".") if module != package else []
    path = FOLDERS[package].joinpath(*rest)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _target(ref: str) -> str | None:
    found = REF_RE.match(ref)
    return found.group(1) if found and _exists(found.group(1)) else None


@dataclass(frozen=True)
class Ref:
    owner: str  # the module whose layer the string speaks for
    target: str  # the module it names
    where: str  # how it was found


def _module_files() -> list[tuple[str, Path]]:
    out = []
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts or any(p.startswith(".") for p in path.parts):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            # a subfolder of a mapped folder that is itself mapped is walked under its own name
            name = ".".join((package, *parts))
            if _folder_of(name) == package:
                out.append((name, path))
    return out


def strings_in_code() -> list[Ref]:
    """Every string literal in product code that names a palaestra module."""
    refs = []
    for module, path in _module_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                target = _target(node.value)
                if target is not None and (module, target) not in NOT_TARGETS:
                    where = f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}"
                    refs.append(Ref(module, target, where))
    return refs


def entry_points() -> list[Ref]:
    """The installed ``palaestra.*`` entry points, loaded by the kernel in every process,
    workers included: a family may name itself (it registers itself, the kernel only discovers
    it); anything else is spoken for by the kernel's registry, so it must be kernel too."""
    refs = []
    groups = sorted(g for g in metadata.entry_points().groups if g.startswith("palaestra"))
    assert "palaestra.envs" in groups
    for group in groups:
        for ep in metadata.entry_points(group=group):
            target = _target(ep.value)
            if target is not None:
                owner = _family_package(target) or "palaestra.registry"
                refs.append(Ref(owner, target, f"entry point {group}: {ep.name} = {ep.value}"))
    return refs


def _family_package(module: str) -> str | None:
    """The family package (``palaestra.envs.<name>``) holding ``module``, if it is one."""
    fams = {f"palaestra.envs.{name}" for name in families()}
    return next((f for f in fams if _within(module, f)), None)


def family_descriptors() -> list[Ref]:
    """Each installed family's strings, spoken for by the family's own package."""
    refs = []
    for fam in families().values():
        owner = f"palaestra.envs.{fam.name}"
        named = {
            "policies": [fam.policies],
            "checks": list(fam.checks),
            "validation": [fam.validation],
            "options": [fam.options],
            "envs": [s.entry_point for s in fam.envs] + [s.options for s in fam.envs],
            "suites": [s.source for s in fam.suites if isinstance(s.source, str)],
        }
        for field_name, values in named.items():
            for value in values:
                where = f"Family {fam.name!r}.{field_name} = {value!r}"
                target = _target(value) if value else None
                if target is not None:
                    refs.append(Ref(owner, target, where))
                else:  # a palaestra name must name a module that exists
                    assert not (value and REF_RE.match(value)), f"{where} names no module"
    return refs


def registered_targets() -> list[Ref]:
    """What the kernel's registries resolve by string in any process (env specs' classes and
    options, suites' loaders): at most the layer of the family that registered them. Fixture
    specs (registered only by who asks for them: the bench, the CLI, the tests) are left out."""
    fams = families()
    refs = []
    for spec in registry.specs().values():
        if spec.fixture or spec.family not in fams:
            continue
        for value in (spec.entry_point, spec.options):
            target = _target(value) if value else None
            if target is not None:
                owner = f"palaestra.envs.{spec.family}"
                refs.append(Ref(owner, target, f"registered env {spec.id}: {value!r}"))
    for name, (source, _) in sorted(tasks._SUITES.items()):
        target = _target(source) if isinstance(source, str) else None
        if target is not None:
            owners = [f"palaestra.envs.{f.name}" for f in fams.values() if name in _suites(f)]
            owner = owners[0] if owners else "palaestra.tasks"
            refs.append(Ref(owner, target, f"registered suite {name}: {source!r}"))
    return refs


def bench_catalog() -> list[Ref]:
    """The bench layer's catalog: each benchmark's ``"module:function"`` (in
    ``bench/catalog.yaml``, which the code scan does not read); a name that resolves to no
    module fails too."""
    from palaestra.bench.catalog import BENCHES

    refs = []
    for bench in BENCHES:
        target = _target(bench.target)
        assert target is not None, f"bench {bench.name}: {bench.target!r} names no module"
        refs.append(Ref("palaestra.bench.catalog", target, f"bench {bench.name}: {bench.target}"))
    return refs


def _suites(fam: Family) -> set[str]:
    return {suite.name for suite in fam.suites}


SOURCES = {
    "code": strings_in_code,
    "entry points": entry_points,
    "family descriptors": family_descriptors,
    "registries": registered_targets,
    "bench catalog": bench_catalog,
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_string_named_targets_point_down(source: str) -> None:
    layers = Layers.read()
    refs = SOURCES[source]()
    assert refs, f"no string-named targets found in {source}: the scan is broken"
    bad = sorted(
        f"{ref.owner} -> {ref.target}: {why} ({ref.where})"
        for ref in refs
        if (why := layers.violation(ref.owner, ref.target)) is not None
    )
    assert not bad, f"{len(bad)} string(s) name a module above their owner:\n" + "\n".join(bad)


def test_the_check_sees_an_upward_string() -> None:
    """The rule itself: a family naming the bench or the server, a kernel module naming the
    client through the forbidden contract, two families naming each other."""
    layers = Layers.read()
    assert layers.violation("palaestra.envs.cad", "palaestra.bench.cad")
    assert layers.violation("palaestra.verifiers.validation", "palaestra.envs.web")
    assert layers.violation("palaestra.registry", "palaestra.client")
    assert layers.violation("palaestra.envs.web", "palaestra.envs.mobile")
    assert layers.violation("palaestra.envs.web", "palaestra.verifiers.web") is None
    assert layers.violation("palaestra.cli", "palaestra.bench.fixtures") is None


def test_lint_imports_from_the_root_sees_every_layer() -> None:
    """``scripts/lint_imports.py`` (what ``scripts/lint.sh imports`` runs from the root) builds
    a graph holding modules of every layer of the contract: without its folder map, grimp would
    see palaestra/ alone and every family, the server and the bench would go unchecked."""
    import grimp
    from grimp.application.config import settings

    spec = importlib.util.spec_from_file_location("lint_imports", ROOT / "scripts/lint_imports.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    folders = script.package_folders()
    before = (settings.PACKAGE_FINDER, settings.MODULE_FINDER)
    settings.configure(
        PACKAGE_FINDER=script._MappedPackages(folders), MODULE_FINDER=script._MappedModules(folders)
    )
    try:
        graph = grimp.build_graph("palaestra", cache_dir=None)
    finally:
        settings.configure(PACKAGE_FINDER=before[0], MODULE_FINDER=before[1])
    missing = [
        name
        for layer in Layers.read().layers
        for name in layer
        if not any(_within(module, name) for module in graph.modules)
    ]
    assert not missing, f"the import graph from the root lacks {missing}"
    assert "palaestra.envs.web.env" in graph.modules


def test_a_process_that_asks_for_no_fixtures_imports_no_bench_nor_client() -> None:
    """What a worker does (every family installed, every spec listed, a suite loaded) imports
    neither the bench layer (the fixtures come only through PALAESTRA_PLUGINS) nor the HTTP
    client (the registry knows nothing of it)."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, palaestra; from palaestra import tasks; palaestra.specs();"
        "tasks.get_suite('miniwob');"
        "print(sorted({m for m in sys.modules if m.startswith(('palaestra.bench', "
        "'palaestra.client', 'palaestra.cli', 'palaestra.server'))}))"
    )
    env = {**os.environ, "PALAESTRA_PLUGINS": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
