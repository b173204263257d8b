#!/usr/bin/env bash
# Builds palaestra's images from this checkout, offline but for the OS and PyPI mirrors:
#   palaestra/debian:bookworm   the base: debian:bookworm-slim, or debootstrap + docker import
#                               when no registry can be reached
#   palaestra/core              Python, palaestra (usersim, bench fixture) and the gateway
#   palaestra/web               + Chromium (web and mobile families)
#   palaestra/computer          + Xvfb, openbox, desktop apps, bubblewrap
#   palaestra/cad               + build123d / OpenCascade
# Usage: docker/build.sh [core|web|computer|cad|all]   (default all). DOCKER_HOST is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("${@:-all}")
[ "${targets[0]}" = all ] && targets=(core web computer cad)
PY=${PY:-.venv/bin/python}
BASE=palaestra/debian:bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
    if docker pull debian:bookworm-slim >/dev/null 2>&1; then
        docker tag debian:bookworm-slim "$BASE"
    else
        echo "no registry reachable: building $BASE with debootstrap (about a minute)"
        root=$(mktemp -d)
        trap 'rm -rf "$root"' EXIT
        debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        tar -C "$root" -c . | docker import - "$BASE" >/dev/null
    fi
fi

# wheels of palaestra and everything it needs, built here from PyPI, installed offline
wheels=docker/.wheels
extras=synth,usersim  # core hosts usersim (its reader parses dates, numbers, money)
for t in "${targets[@]}"; do
    case $t in web) extras+=,web,mobile ;; cad) extras+=,cad ;; computer) extras+=,computer ;; esac
done
mkdir -p "$wheels"
rm -rf build  # setuptools' staging folder: stale files in it would end up in the wheel
"$PY" -m pip wheel -q --wheel-dir "$wheels" ".[$extras]" 2> >(grep -v "^WARNING: Location" >&2)
rm -rf build

for t in "${targets[@]}"; do
    echo "building palaestra/$t"
    # PALAESTRA_SOURCE (set by palaestra.workers.docker.ensure_image): the sources' digest
    docker build -q --network host -f "docker/$t.Dockerfile" -t "palaestra/$t" \
        ${PALAESTRA_SOURCE:+--label "palaestra.source=$PALAESTRA_SOURCE"} . >/dev/null
    docker image ls "palaestra/$t" --format '  {{.Repository}}: {{.Size}}'
done
