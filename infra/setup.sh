#!/usr/bin/env bash
# Prepares a machine that has only Node.js >= 20 and npm: installs what is
# missing (redis-server, pnpm) and the workspace's exact dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=10.34.9

if ! command -v redis-server >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing redis-server with apt-get"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    echo "setup: installing redis with Homebrew"
    brew install redis
  else
    echo "setup: redis-server is missing. Install Redis >= 6.2 yourself, or set REDIS_URL=redis://host:6379" >&2
  fi
fi

# The dashboard's end-to-end test drives a real headless Chromium (never a
# downloaded browser build).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing chromium with apt-get (for the dashboard browser test)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The PostgreSQL sink's tests start a private server from Debian's binaries
# (initdb, pg_ctl under /usr/lib/postgresql/<version>/bin); the machine's own
# cluster is never used.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing postgresql with apt-get (for the PostgreSQL sink tests)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    echo "setup: installing postgresql with Homebrew"
    brew install postgresql
  else
    echo "setup: PostgreSQL server binaries are missing (initdb, pg_ctl); the PostgreSQL sink tests need them" >&2
  fi
fi

# The pacing end-to-end test and `pnpm bench nginx` judge politeness with a real
# nginx `limit_req` (nginx-light has the module).
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing nginx-light with apt-get (for the rate-limit pacing test)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light >/dev/null
fi

# The metrics test checks /metrics with Prometheus's own parser and linter
# (promtool, from Debian's prometheus package).
if ! command -v promtool >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing promtool (Debian package prometheus) with apt-get"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "setup: installing pnpm@${PNPM_VERSION} with npm"
  npm install -g "pnpm@${PNPM_VERSION}" >/dev/null
fi

pnpm install --frozen-lockfile

# `pnpm crawlq` runs the built JavaScript (a fraction of the start time of the
# sources through tsx); it falls back to the sources whenever they are newer
# than the build, so a later edit is never ignored. `pnpm build` rebuilds.
pnpm build --output-logs=errors-only
