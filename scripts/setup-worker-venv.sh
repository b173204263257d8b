#!/usr/bin/env bash
# Builds .venv-worker: palaestra (its core, no extras) on Debian's own Python, which every
# account can read. A root gateway drops its local workers to an unprivileged account
# (the worker_user setting); when the gateway's own Python lives where that account cannot read
# (a pyenv under /root, as on this machine), the workers need an interpreter of their own
# (worker_python). tests/security/test_api_hygiene.py serves a session from such a worker.
set -euo pipefail

cd "$(dirname "$0")/.."
VENV="$PWD/.venv-worker"
PY="$VENV/bin/python"
SYSTEM_PYTHON=/usr/bin/python3

if [ ! -x "$SYSTEM_PYTHON" ]; then
    echo "setup-worker-venv: $SYSTEM_PYTHON is missing (Debian's python3 package)" >&2
    exit 1
fi
if [ -x "$PY" ] && "$PY" -c "import palaestra.workers.host" 2>/dev/null; then
    exit 0
fi
echo "building .venv-worker/ (palaestra on $SYSTEM_PYTHON, for unprivileged workers)"
rm -rf "$VENV"
"$SYSTEM_PYTHON" -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q -e .
"$PY" -c "import palaestra.workers.host"
chmod -R a+rX "$VENV"
