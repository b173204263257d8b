# Sourced by the setup scripts of the side virtualenvs whose packages are pinned in a list
# (setup-osworld.sh, setup-tau2.sh): one place for the rule "build the venv only if missing or
# at other versions". The list itself is the stamp: it is written into the venv after a
# successful install, and a venv whose stamp differs from the script's list is rebuilt, so
# editing a pin in the script is enough to upgrade every checkout at its next `make setup`.

# pinned_venv DIR PACKAGES WHAT: from the repository root, set VENV and PY for DIR; exit the
# calling script when DIR already holds PACKAGES; otherwise say it installs WHAT, make the venv
# (with $PYTHON, python3 by default) if missing and bring pip up to date.
pinned_venv() {
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    VENV="$PWD/$1"
    PY="$VENV/bin/python"
    STAMP="$VENV/.packages"
    PINNED="$2"
    if [ -x "$PY" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$PINNED" ]; then
        exit 0
    fi
    echo "installing $3 into $1/"
    test -x "$PY" || "${PYTHON:-python3}" -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
}

# pinned_venv_done: record the installed list, once the calling script has checked the imports
pinned_venv_done() {
    printf '%s' "$PINNED" > "$STAMP"
}
