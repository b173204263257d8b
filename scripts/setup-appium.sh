#!/usr/bin/env bash
# Installs Appium and its fake driver into .appium/ (APPIUM_HOME) inside the repo, only if
# missing; nothing global is touched. The Appium tests (pytest -m appium) start this server.
# Real devices need a real driver too: APPIUM_HOME=.appium .appium/node_modules/.bin/appium
# driver install uiautomator2 (or xcuitest).
set -euo pipefail

APPIUM_VERSION=3.8.0       # Appium 3 needs node ^20.19, ^22.12 or >=24
FAKE_DRIVER_VERSION=6.2.4  # @appium/fake-driver 6 is the one for Appium 3

cd "$(dirname "$0")/.."
export APPIUM_HOME="$PWD/.appium"
BIN="$APPIUM_HOME/node_modules/.bin/appium"

installed() {  # the package.json version of an installed npm package, or nothing
    node -p "require('$APPIUM_HOME/node_modules/$1/package.json').version" 2>/dev/null || true
}

if [ "$(installed appium)" = "$APPIUM_VERSION" ] \
    && [ "$(installed @appium/fake-driver)" = "$FAKE_DRIVER_VERSION" ]; then
    exit 0
fi
if { ! command -v npm || ! command -v node; } >/dev/null && [ "$(id -u)" -eq 0 ] \
    && command -v apt-get >/dev/null; then
    echo "setup-appium: installing Debian's nodejs and npm"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
fi
# the Appium tests never skip: without a node Appium 3 runs on, setup fails here, loudly
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "setup-appium: node and npm are needed (node ^20.19, ^22.12 or >=24) and missing" >&2
    exit 1
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
    process.exit(a >= 24 || (a === 22 && b >= 12) || (a === 20 && b >= 19) ? 0 : 1)'; then
    echo "setup-appium: node $(node --version) is too old for Appium 3" \
        "(needs ^20.19, ^22.12 or >=24): install a newer Node.js" >&2
    exit 1
fi
echo "installing appium@$APPIUM_VERSION and @appium/fake-driver@$FAKE_DRIVER_VERSION into .appium/"
mkdir -p "$APPIUM_HOME"
# an npm project in APPIUM_HOME: Appium finds the drivers among its dependencies
npm install --prefix "$APPIUM_HOME" --no-audit --no-fund --loglevel=error \
    "appium@$APPIUM_VERSION" "@appium/fake-driver@$FAKE_DRIVER_VERSION" >/dev/null
"$BIN" driver list --installed 2>&1 | grep -q "fake@$FAKE_DRIVER_VERSION" \
    || { echo "setup-appium: Appium does not list the fake driver" >&2; exit 1; }
