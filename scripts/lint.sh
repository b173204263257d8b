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
    # the kernel (its packages client and cli too), the verifiers and the gateway are
    # type-checked (pyproject: [tool.mypy])
    kernel=$(cd palaestra && ls ./*.py | sed 's|^\./||; s|\.py$||' | grep -vx '__init__' |
        sed 's/^/-m palaestra./' | tr '\n' ' ')
    # shellcheck disable=SC2086
    (cd .lint && "$bin/mypy" --config-file ../pyproject.toml $kernel -p palaestra.workers \
        -p palaestra.client -p palaestra.cli -p palaestra.verifiers -p palaestra.server)
fi
