#!/usr/bin/env bash
# Installs what the VS Code tests need, idempotently: Debian's chromium (the browser the web
# workbench runs in), libkrb5-dev (for code-server's native `kerberos` build), and one code-server
# from the npm registry into its own folder OUTSIDE the repo. Proven recipe:
# ../shared/recipes/vscode-e2e/.
#
#   code-server-setup.sh [VERSION]     VERSION: 4.100.3 (default) or 4.139.1
#
#   4.100.3  = VS Code 1.100.3, runs on the machine's Node 20. Needs Debian's ripgrep seeded into
#              @vscode/ripgrep's download cache (its postinstall would fetch rg from GitHub).
#   4.139.1  = VS Code 1.139.1, the current one, needs Node 24 (engines: node 24; its native
#              modules must be built for ABI 137). Node 24 comes from scripts/ci/node24-setup.sh.
#              rg ships inside @vscode/ripgrep-universal's npm tarball: no seeding.
#
#   DEERFLOW_CI_CACHE   cache root (default /var/tmp/deerflow-ci)
#   CODE_SERVER_DIR     install folder (default $DEERFLOW_CI_CACHE/code-server-VERSION)
#
# Prints the install folder on the last line of stdout (callers read it). Everything else goes
# to stderr. A second run with everything present takes well under a second.
set -euo pipefail

CS_VERSION=${1:-4.100.3}
case "$CS_VERSION" in
  4.100.3 | 4.139.1) ;;
  *) printf '[code-server-setup] unsupported version %s (4.100.3 or 4.139.1)\n' "$CS_VERSION" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=npm-env.sh
. "$HERE/npm-env.sh" # no npm_config_* inherited from an `npm start` / `npm test` that runs us
CACHE=${DEERFLOW_CI_CACHE:-/var/tmp/deerflow-ci}
CS_DIR=${CODE_SERVER_DIR:-$CACHE/code-server-$CS_VERSION}
VSCODE=$CS_DIR/node_modules/code-server/lib/vscode
log() { printf '[code-server-setup %s] %s\n' "$CS_VERSION" "$*" >&2; }

# Where each version's ripgrep ends up (the workbench's search and file finder run it).
if [ "$CS_VERSION" = 4.100.3 ]; then
  RG=$VSCODE/node_modules/@vscode/ripgrep/bin/rg
else
  RG=$VSCODE/node_modules/@vscode/ripgrep-universal/bin/linux-x64/rg
fi

# 1) Debian packages. kerberos's prebuilt comes from GitHub (unreachable): it compiles and needs
#    gssapi headers. ripgrep stands in for 4.100.3's @vscode/ripgrep GitHub download.
need=()
pkgs=(libkrb5-dev chromium)
[ "$CS_VERSION" = 4.100.3 ] && pkgs+=(ripgrep)
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ "${#need[@]}" -gt 0 ]; then
  log "apt-get install ${need[*]} (about 45 s)"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  # apt's progress goes to stdout (dropped: our stdout is the install path); errors to stderr.
  if ! $SUDO apt-get install -y -qq "${need[@]}" >/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

installed_version() {
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch { }' \
    "$CS_DIR/node_modules/code-server/package.json"
}

# 4.139.1's npm and node-gyp must run on Node 24 (first on PATH), and compile against its headers:
# npm_config_nodedir overrides ~/.npmrc's nodedir=/usr (Node 20's headers, ABI 115). What its
# install does here (checked on 2 cores; 617 MB, 9,479 files, about 2.5 min of CPU):
#   - code-server's postinstall.sh reads the Node major from npm's user agent and refuses anything
#     but 24, so npm itself must run on Node 24; it then runs `npm install --omit=dev` in
#     lib/vscode and lib/vscode/extensions;
#   - node-gyp builds kerberos (needs libkrb5-dev), @vscode/spdlog, @vscode/sqlite3,
#     @vscode/native-watchdog, @vscode/deviceid (and two Windows-only modules as empty stubs)
#     against Node 24's headers: all load in Node 24 (ABI 137);
#   - node-pty (N-API), @parcel/watcher and @github/copilot-sdk use prebuilds from their npm
#     tarballs; @vscode/ripgrep-universal carries rg 15 for every platform. Nothing is fetched
#     from GitHub.
if [ "$CS_VERSION" = 4.139.1 ]; then
  NODE24=$(bash "$HERE/node24-setup.sh" | tail -n1)
  export PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24"
fi

if [ "$(installed_version)" = "$CS_VERSION" ] &&
   [ -f "$CS_DIR/node_modules/code-server/out/node/entry.js" ] &&
   [ -x "$RG" ] &&
   [ -f "$CS_DIR/.install-complete" ]; then
  log "already installed in $CS_DIR"
  echo "$CS_DIR"
  exit 0
fi

# 2) 4.100.3 only: seed @vscode/ripgrep@1.15.11's download cache with Debian's rg 13.0.0 (the
#    version of the v13.0.0-10 prebuilt it wants); its postinstall then "uses the cached download".
#    The cache path is fixed by @vscode/ripgrep: $TMPDIR/vscode-ripgrep-cache-<version>/<asset>.
if [ "$CS_VERSION" = 4.100.3 ]; then
  RG_CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  RG_TGZ="$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [ ! -s "$RG_TGZ" ]; then
    stage=$(mktemp -d)
    cp /usr/bin/rg "$stage/rg"
    mkdir -p "$RG_CACHE"
    tar czf "$RG_TGZ.tmp" -C "$stage" rg && mv "$RG_TGZ.tmp" "$RG_TGZ"
    rm -rf "$stage"
  fi
fi

# 3) npm install into its own folder (~300 MB, 80-90 s either version). A half-finished install
#    (no marker) is wiped first. As root, code-server's postinstall.sh insists on
#    npm_config_unsafe_perm=true (npm 11 calls it unknown but exports it); npm_config_yes=true lets
#    node-pty's postinstall run `npx node-gyp` (this machine's ~/.npmrc has yes=false).
log "npm i code-server@$CS_VERSION into $CS_DIR on node $(node --version) (about 90 s)"
rm -rf "$CS_DIR"
mkdir -p "$CS_DIR"
printf '{ "name": "deerflow-ci-code-server", "private": true }\n' > "$CS_DIR/package.json"
(
  cd "$CS_DIR"
  npm_config_unsafe_perm=true npm_config_yes=true \
    npm i --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >&2
)
[ "$(installed_version)" = "$CS_VERSION" ] || { log "install failed: no code-server $CS_VERSION in $CS_DIR"; exit 1; }
[ -x "$RG" ] || { log "install failed: no ripgrep at $RG"; exit 1; }
"$RG" --version >/dev/null || { log "install failed: $RG does not run"; exit 1; }
touch "$CS_DIR/.install-complete"
# (not `code-server --version`: without --config it writes ~/.config/code-server/config.yaml)
log "code-server $(installed_version), Code $(node -p "require('$VSCODE/package.json').version"), $("$RG" --version | head -n1)"
echo "$CS_DIR"
