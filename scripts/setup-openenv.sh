#!/usr/bin/env bash
# Builds .venv-openenv: the current OpenEnv release (openenv, which ships openenv.core) in a
# virtualenv of its own, only if missing or at another version. It is separate because openenv
# pins fastmcp<4 (palaestra's venv has fastmcp 4) and pulls gradio. tests/openenv drive the
# gateway with OpenEnv's own clients from this venv, and bench/http.py runs OpenEnv's own server
# with it.
set -euo pipefail

OPENENV_VERSION=0.10.0

cd "$(dirname "$0")/.."
VENV="$PWD/.venv-openenv"
PY="$VENV/bin/python"
PYTHON="${PYTHON:-python3}"

if [ -x "$PY" ] && "$PY" -c "import importlib.metadata as m, sys; \
sys.exit(m.version('openenv') != '$OPENENV_VERSION')" 2>/dev/null; then
    exit 0
fi
echo "installing openenv==$OPENENV_VERSION into .venv-openenv/"
test -x "$PY" || "$PYTHON" -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q "openenv==$OPENENV_VERSION" uvicorn
"$PY" -c "from openenv.core import GenericEnvClient; from openenv.core.mcp_client import MCPToolClient"
