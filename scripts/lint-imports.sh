#!/usr/bin/env bash
# import-linter reads packages from disk, but palaestra.envs & co. live in top-level folders
# (the product card's layout, mapped by setup.py). Lay the same mapping out in .lint/ (a copy
# of the Python files: the graph builder does not follow links) and check pyproject's contracts.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=.lint/palaestra
rm -rf .lint && mkdir -p "$tree"
copy() { mkdir -p "$2" && tar -C "$1" --exclude=__pycache__ -cf - . | tar -C "$2" -xf - \
    --wildcards --no-anchored '*.py'; }
copy palaestra "$tree"
for pkg in envs verifiers synth_apps server bench; do copy "$pkg" "$tree/$pkg"; done
cd .lint  # lint-imports puts the working folder first on the path
exec ../.venv/bin/lint-imports ../pyproject.toml "$@"
