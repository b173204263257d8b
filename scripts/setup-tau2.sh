#!/usr/bin/env bash
# Builds .venv-tau2: the third-party packages tau2-bench's own code imports, in a virtualenv of
# its own, only if missing or at other versions. tests/envs/tau2/test_crosscheck.py runs
# tau2's source (../shared/tau2/src, never copied here) in it, beside our port, to compare tools,
# worlds and rewards on every task. It is separate because tau2 pulls litellm, pandas and their
# pins, which palaestra does not need. The versions are the ones the check was run with
# (litellm at tau2's own pin).
set -euo pipefail

PACKAGES="pydantic==2.14.4 loguru==0.7.3 pandas==3.1.1 toml==0.10.2 PyYAML==6.0.4 addict==2.4.0
deepdiff==9.1.0 python-dotenv==1.2.4 docstring-parser==0.18.0 httpx==0.28.1 litellm==1.82.6
rich==15.0.0"

source "$(dirname "$0")/pinned-venv.sh"
pinned_venv .venv-tau2 "$PACKAGES" "tau2-bench's dependencies"
# shellcheck disable=SC2086
"$PY" -m pip install -q $PACKAGES
LITELLM_LOCAL_MODEL_COST_MAP=True "$PY" -c "import pydantic, loguru, pandas, toml, yaml, addict, deepdiff, dotenv, docstring_parser, httpx, litellm, rich"
pinned_venv_done
