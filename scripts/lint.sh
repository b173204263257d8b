#!/usr/bin/env bash
# Every static check `make lint`, CI and pre-commit run: style (ruff), the layer contracts
# (import-linter) and the type check (mypy). palaestra.envs & co. live in the product card's
# top-level folders (mapped by setup.py): import-linter runs from the root through
# scripts/lint_imports.py, which shows grimp those folders as setup.py maps them; mypy runs on
# .lint/, a copy of the Python files laid out as installed. `scripts/lint.sh imports` or
# `scripts/lint.sh types` runs one part.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/.venv/bin
part=${1:-all}

tree() {
    rm -rf .lint && mkdir -p .lint/palaestra
    copy() { mkdir -p "$2" && tar -C "$1" --exclude=__pycache__ -cf - . |
        tar -C "$2" -xf - --wildcards --no-anchored '*.py' 'py.typed'; }
    copy palaestra .lint/palaestra
    for pkg in envs verifiers synth_apps server bench; do copy "$pkg" ".lint/palaestra/$pkg"; done
}

if [[ $part == all || $part == style ]]; then
    "$bin/ruff" check .
    "$bin/ruff" format --check .
fi
if [[ $part == all || $part == imports ]]; then
    "$bin/python" scripts/lint_imports.py --no-cache pyproject.toml
fi
if [[ $part == all || $part == types ]]; then
    tree
    # every package is type-checked (pyproject: [tool.mypy]): the kernel, its services, the
    # families and runtimes, verifiers, synth_apps, the gateway and the benches; the cache
    # lives outside the copy, so a run re-checks only what changed
    (cd .lint && "$bin/mypy" --config-file ../pyproject.toml --cache-dir ../.mypy_cache/lint \
        -p palaestra)
fi
