#!/usr/bin/env bash
# Installs the Debian packages palaestra needs, only those missing, and only as root with apt.
# Families add their packages to PACKAGES as they land (chromium, xvfb, ...).
set -euo pipefail

PACKAGES=(
    python3 python3-venv chromium chromium-headless-shell fonts-dejavu-core  # web, mobile
    xvfb xdotool bubblewrap openbox xterm mousepad gnumeric wmctrl x11-utils  # computer
    libxres1 dbus-daemon dconf-service gsettings-desktop-schemas libglib2.0-bin  # computer:
    # the X server's own record of a window's process (XRes), a session bus and dconf (gsettings)
    at-spi2-core  # computer: the accessibility bus and registry (the a11y_tree observation)
    libseccomp2  # the agent-code sandbox (computer, cad): seccomp filters through pyseccomp
    libreoffice-calc libreoffice-writer libreoffice-impress libreoffice-gtk3  # computer: office
    # apps (gtk3: their accessibility bridge); UNO and the file libraries for the code oracles
    python3-uno python3-openpyxl python3-docx python3-odf
    fonts-liberation2 fonts-crosextra-carlito fonts-crosextra-caladea  # metric-compatible
    # stand-ins for Arial/Times/Courier, Calibri and Cambria, which OOXML documents name
    docker.io debootstrap  # the Docker backend's engine, and its base image without a registry
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
# python3-venv: Debian's own Python makes .venv-worker (scripts/setup-worker-venv.sh) even
# where the project's venv comes from another Python (pyenv)
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "please install: ${missing[*]} (needs root and apt-get)" >&2
    exit 1
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
