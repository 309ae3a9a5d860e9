#!/bin/sh
# CI machine setup for livefeed's tests, called from .ci/run before `npm test`.
# Installs Debian's chromium for the browser test (test/browser/graphiql.test.ts) when it is missing;
# playwright-core drives it via executablePath /usr/bin/chromium (no browser download: that fails here).
set -eu

if [ -x /usr/bin/chromium ]; then
  echo "ci-setup: chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ci-setup: not root and no sudo: cannot install chromium; the browser test will be skipped" >&2
    exit 0
  fi
fi

echo "ci-setup: installing Debian chromium"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
echo "ci-setup: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium installed')"
