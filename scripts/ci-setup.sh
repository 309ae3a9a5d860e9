#!/bin/sh
# CI machine setup for livefeed's tests, called from .ci/run before `npm test`. Installs the Debian
# packages the tests drive where they are missing:
# - chromium for the browser test (test/browser/graphiql.test.ts); playwright-core drives it via
#   executablePath /usr/bin/chromium (no browser download: that fails here);
# - postgresql (initdb, pg_ctl, postgres, psql) for the PostgreSQL tests (test/support/postgres.ts
#   starts a throw-away cluster; as root it runs as the postgres system user the package creates).
set -eu

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
fi

UPDATED=""
# apt_install NAME PACKAGE...: installs the packages, or says why it cannot (the tests then skip and say so).
apt_install() {
  name="$1"
  shift
  if [ "$SUDO" = "none" ]; then
    echo "ci-setup: not root and no sudo: cannot install $name; its tests will be skipped" >&2
    return 0
  fi
  echo "ci-setup: installing Debian $*"
  if [ -z "$UPDATED" ]; then
    $SUDO apt-get update -qq
    UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if [ -x /usr/bin/chromium ]; then
  echo "ci-setup: chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
else
  apt_install chromium chromium
  echo "ci-setup: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium installed')"
fi

# Debian keeps initdb off PATH (/usr/lib/postgresql/N/bin); the tests look there too.
initdb_path() {
  command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1
}
if [ -n "$(initdb_path)" ]; then
  echo "ci-setup: PostgreSQL present: $("$(initdb_path)" --version)"
else
  apt_install PostgreSQL postgresql postgresql-contrib
  if [ -n "$(initdb_path)" ]; then echo "ci-setup: $("$(initdb_path)" --version)"; fi
fi
