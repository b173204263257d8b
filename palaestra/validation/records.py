"""What a validation record's verdicts depend on, so a stale record fails the tests.

A shipped :class:`~palaestra.verifiers.validation.ValidationRecord` keeps, beside each task's
key, :func:`code_digest` of the code that decided its verdicts: the family's own modules (what
its descriptor names and what they import, found on disk) and this service's runner.
:func:`stale` says why a record no longer stands (the code moved on, a task changed or went),
naming the command that records a new run. Here, not beside the record format: the digest
covers the service, and a lower layer must not name what lies above it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from palaestra.verifiers.validation import ValidationRecord

#: files beside the code that decide behaviour too (scripts injected in pages, templates, app
#: specs); data files (.json) are task data, which task keys cover
_ASSET_SUFFIXES = (".js", ".html", ".yaml", ".yml", ".j2")
#: where imports are followed: the layers that play and score an episode
_FOLLOWED = (
    "palaestra.envs.",
    "palaestra.verifiers.",
    "palaestra.synth_apps.",
    "palaestra.validation.",
)
#: the validation service (this package): its runner decides verdicts as much as a family's code
_RUNNER = ("palaestra.validation",)


def code_sources(family: str) -> dict[str, Path]:
    """The files whose code decides ``family``'s verdicts, by installed name: every module its
    descriptor names (envs, suites, policies and adversaries, check kinds, validation), what
    they import from the families, runtimes, verifiers and app-synthesis layers (static
    imports, followed transitively; families never import each other, so no other family's
    code is in), the episode loop and the validation service's runner (:data:`_RUNNER`),
    plus the non-Python files beside those modules (page scripts, templates, app specs).
    Found on disk, never imported: a worker must not pay for a B-rep kernel to know what its
    code is."""
    import ast
    import importlib.util

    from palaestra.family import family as family_of

    fam = family_of(family)
    roots = [
        *(spec.entry_point for spec in fam.envs),
        *(s.source for s in fam.suites if isinstance(s.source, str)),
        fam.policies,
        *fam.checks,
        fam.validation,
        "palaestra.policies",
        "palaestra.verifiers.validation",
        *_RUNNER,
    ]
    folders: dict[str, Path] = {}  # top-level packages -> their folder (setup.py maps them)
    for top in ("palaestra", *(f.rstrip(".") for f in _FOLLOWED)):
        spec = importlib.util.find_spec(top)
        assert spec is not None and spec.origin, top
        folders[top] = Path(spec.origin).parent

    def locate(name: str) -> Path | None:
        top = max((t for t in folders if name == t or name.startswith(t + ".")), key=len)
        base = (
            folders[top].joinpath(*name[len(top) + 1 :].split(".")) if name != top else folders[top]
        )
        for path in (base / "__init__.py", base.with_suffix(".py")):
            if path.is_file():
                return path
        return None

    seen: dict[str, Path] = {}
    todo = [r.partition(":")[0] for r in roots if r]
    while todo:
        name = todo.pop()
        path = None if name in seen else locate(name)
        if path is None:
            continue
        seen[name] = path
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_bytes())):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                found = [base, *(f"{base}.{a.name}" for a in node.names)]
            todo += [m for m in found if m.startswith(_FOLLOWED) and m not in seen]
    files = {
        name.replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py"): path
        for name, path in seen.items()
    }
    packages = {n if p.name == "__init__.py" else n.rpartition(".")[0] for n, p in seen.items()}
    for package in packages:
        init = locate(package)
        if init is None or init.name != "__init__.py":
            continue
        folder, prefix = init.parent, package.replace(".", "/")
        files[f"{prefix}/__init__.py"] = init
        assets = [p for p in folder.iterdir() if p.is_file() and p.suffix in _ASSET_SUFFIXES]
        for sub in folder.iterdir():  # data folders (templates, app specs) are not packages
            if sub.is_dir() and not (sub / "__init__.py").exists():
                assets += [p for p in sub.rglob("*") if p.suffix in _ASSET_SUFFIXES]
        files.update({f"{prefix}/{p.relative_to(folder)}": p for p in assets})
    return dict(sorted(files.items()))


def code_digest(family: str) -> str:
    """A digest of :func:`code_sources`: each file's name (as installed, so the same in a
    checkout and a wheel) and content."""
    key = hashlib.sha256()
    for name, path in code_sources(family).items():
        key.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return key.hexdigest()[:20]


def stale(record: ValidationRecord) -> list[str]:
    """Why ``record`` no longer stands for today's tasks and code (empty: it does)."""
    data = record.load()
    reports = data.get("tasks", {})
    problems = []
    if data.get("code") != code_digest(record.family):
        problems.append(f"the code that decides {record.family} verdicts changed")
    tasks = record.tasks()
    changed = [t.id for t in tasks if reports.get(t.id, {}).get("key") != record.key(t)]
    if changed:
        problems.append(f"{len(changed)} tasks changed or unrecorded: {changed[:5]}")
    gone = sorted(set(reports) - {t.id for t in tasks})
    if gone:
        problems.append(f"{len(gone)} recorded tasks no longer exist: {gone[:5]}")
    return problems
