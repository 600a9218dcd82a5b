#!/usr/bin/env bash
# Runs a command with Node 24 first on PATH: `bash scripts/ci/with-node24.sh node scripts/test.mjs unit`.
# The current VS Code (code-server 4.139.1) runs extensions, and so the harness, on Node 24, while
# this machine's own node is 20; the tiers that do not need a workbench run a second time on 24.
# Node 24 is installed on demand outside the repo (scripts/ci/node24-setup.sh, a no-op when there).
#
# npm_config_nodedir points node-gyp at Node 24's headers: ~/.npmrc says nodedir=/usr (Node 20's),
# which would build native modules for the wrong ABI if the command compiles any.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
NODE24=$(bash "$(dirname "$0")/node24-setup.sh" | tail -n1)
export PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24"
echo "[with-node24] $(node --version): $*" >&2
exec "$@"
