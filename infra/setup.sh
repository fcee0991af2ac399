#!/usr/bin/env bash
# Prepares a machine that has only Node.js >= 20 and npm: installs what is
# missing (redis-server, pnpm) and the workspace's exact dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=10.34.9

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
APT_UPDATED=""

# install_missing WHY APT_PACKAGES BREW_ARGS MISSING_HINT: installs with apt-get
# (the package index refreshed once per run), else Homebrew (BREW_ARGS empty:
# none there), else says what is missing and what does without it.
install_missing() {
  local why="$1" apt_packages="$2" brew_args="$3" hint="$4"
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${apt_packages##-* } with apt-get (${why})"
    if [ -z "$APT_UPDATED" ]; then
      $SUDO apt-get update -qq
      APT_UPDATED=1
    fi
    # shellcheck disable=SC2086 # several packages or options, word-split on purpose
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ${apt_packages} >/dev/null
  elif [ -n "$brew_args" ] && command -v brew >/dev/null 2>&1; then
    echo "setup: installing ${brew_args} with Homebrew (${why})"
    # shellcheck disable=SC2086
    brew install ${brew_args}
  else
    echo "setup: ${hint}" >&2
  fi
}

if ! command -v redis-server >/dev/null 2>&1; then
  install_missing "the crawl's private Redis and the tests'" redis-server redis \
    "redis-server is missing. Install Redis >= 6.2 yourself, or set REDIS_URL=redis://host:6379"
fi

# Rendering (--render) and the dashboard's browser test drive the system
# Chromium through playwright-core; no browser build is ever downloaded.
if [ ! -x /usr/bin/chromium ] && [ ! -x /Applications/Chromium.app/Contents/MacOS/Chromium ]; then
  install_missing "for --render and the browser tests" chromium "--cask chromium" "no Chromium found; --render needs one (set --chromium-path)"
fi

# The terminal test (test/terminal-progress.test.ts) runs `crawlq crawl` in a
# tmux pane, a real terminal, and reads its screen.
if ! command -v tmux >/dev/null 2>&1; then
  install_missing "for the terminal test" tmux tmux "tmux is missing; the terminal test is skipped without it"
fi

# The PostgreSQL sink's tests start a private server from Debian's binaries
# (initdb, pg_ctl under /usr/lib/postgresql/<version>/bin); the machine's own
# cluster is never used.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null 2>&1; then
  install_missing "for the PostgreSQL sink tests" postgresql postgresql "PostgreSQL server binaries are missing (initdb, pg_ctl); the PostgreSQL sink tests need them"
fi

# The pacing end-to-end test and `pnpm bench nginx` judge politeness with a real
# nginx `limit_req` (nginx-light has the module).
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  install_missing "for the rate-limit pacing test" nginx-light "" "nginx is missing; the nginx pacing test needs it"
fi

# The metrics test checks /metrics with Prometheus's own parser and linter
# (promtool, from Debian's prometheus package).
if ! command -v promtool >/dev/null 2>&1; then
  install_missing "promtool, for the metrics test" "--no-install-recommends prometheus" "" "promtool is missing; the metrics test needs it"
fi

# The Lua the packages run inside Redis is checked by luacheck (Debian's lua-check) in `pnpm test`.
if ! command -v luacheck >/dev/null 2>&1; then
  install_missing "for the Lua lint test" lua-check luacheck "luacheck is missing; the Lua lint test fails without it"
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
