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

# Rendering (--render) and the dashboard's browser test drive the system
# Chromium through playwright-core; no browser build is ever downloaded.
if [ ! -x /usr/bin/chromium ] && [ ! -x /Applications/Chromium.app/Contents/MacOS/Chromium ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing chromium with apt-get (for --render and the browser tests)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    echo "setup: installing Chromium with Homebrew (for --render)"
    brew install --cask chromium
  else
    echo "setup: no Chromium found; --render needs one (set --chromium-path)" >&2
  fi
fi

# The terminal test (test/terminal-progress.test.ts) runs `crawlq crawl` in a
# tmux pane, a real terminal, and reads its screen.
if ! command -v tmux >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing tmux with apt-get (for the terminal test)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tmux >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    echo "setup: installing tmux with Homebrew (for the terminal test)"
    brew install tmux
  else
    echo "setup: tmux is missing; the terminal test is skipped without it" >&2
  fi
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

# The Lua the packages run inside Redis is checked by luacheck (Debian's lua-check) in `pnpm test`.
if ! command -v luacheck >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing luacheck (Debian package lua-check) with apt-get"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq lua-check >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    echo "setup: installing luacheck with Homebrew"
    brew install luacheck
  else
    echo "setup: luacheck is missing; the Lua lint test fails without it" >&2
  fi
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "setup: installing pnpm@${PNPM_VERSION} with npm"
  npm install -g "pnpm@${PNPM_VERSION}" >/dev/null
fi

# playwright-core never downloads a browser on install; the variable makes sure no
# package's install script does either (rendering uses the system Chromium above).
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 pnpm install --frozen-lockfile

# `pnpm crawlq` runs the built JavaScript (a fraction of the start time of the
# sources through tsx); it falls back to the sources whenever they are newer
# than the build, so a later edit is never ignored. `pnpm build` rebuilds.
pnpm build --output-logs=errors-only
