#!/bin/sh
# Set up what tests/e2e/test_browser.py needs, idempotently (safe to run on every `make test`):
#  - Debian's Chromium at /usr/bin/chromium (apt-get; never a Playwright browser download);
#  - the standalone widget renderer @jupyter-widgets/html-manager from the npm registry, into build/browser
#    (gitignored, never committed).
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
BUILD="$ROOT/build/browser"

if [ ! -x /usr/bin/chromium ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    echo "setup-browser-tests: installing Debian's chromium with apt-get" >&2
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
fi

if [ ! -f "$BUILD/node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js" ]; then
    echo "setup-browser-tests: installing @jupyter-widgets/html-manager into $BUILD" >&2
    mkdir -p "$BUILD"
    npm install --silent --no-audit --no-fund --prefix "$BUILD" @jupyter-widgets/html-manager
fi
