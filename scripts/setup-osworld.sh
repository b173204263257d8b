#!/usr/bin/env bash
# Builds .venv-osworld: OSWorld's own office metrics (desktop-env on PyPI, Apache-2.0) with only
# the libraries those metrics import, in a virtualenv of its own, only if missing or at other
# versions. tests/verifiers/test_office_osworld.py runs OSWorld's compare_table,
# compare_docx_files, compare_pptx_files and check_include_exclude there, beside our kinds of
# the same names (verifiers/office_osworld.py), over the same documents, and asserts the same
# verdicts (formulas: compare_table's style rule evaluates conditional formats with it).
# desktop-env is installed with --no-deps: its pins (torch, transformers, playwright,
# cloud SDKs...) serve its VM runner, not these metrics; the test loads the metric modules by
# file path (the package's __init__ imports the runner). The versions are the ones the check
# was run with.
set -euo pipefail

PACKAGES="desktop-env==1.0.2 openpyxl==3.1.5 pandas==2.2.3 numpy==1.26.4 python-docx==1.2.0
python-pptx==1.0.2 odfpy==1.4.1 lxml==6.0.2 cssselect==1.3.0 rapidfuzz==3.14.3 xmltodict==1.0.2
pillow==11.0.0 PyYAML==6.0.3 formulas==1.3.4"

source "$(dirname "$0")/pinned-venv.sh"
pinned_venv .venv-osworld "$PACKAGES" "OSWorld's office metrics"
# shellcheck disable=SC2086
"$PY" -m pip install -q --no-deps $(echo $PACKAGES | tr ' ' '\n' | grep '^desktop-env')
# shellcheck disable=SC2086
"$PY" -m pip install -q $(echo $PACKAGES | tr ' ' '\n' | grep -v '^desktop-env')
"$PY" -c "import desktop_env, openpyxl, pandas, docx, pptx, odf, lxml, cssselect, rapidfuzz, xmltodict, formulas"
pinned_venv_done
