#!/usr/bin/env bash
# Installs what the VS Code tests need, idempotently: Debian's chromium (the browser the web
# workbench runs in), ripgrep and libkrb5-dev (for code-server's native install), and
# code-server 4.100.3 (= VS Code 1.100.3, runs on the machine's Node 20) from the npm registry,
# into a folder OUTSIDE the repo. Proven recipe: ../shared/recipes/vscode-e2e/.
#
#   DEERFLOW_CI_CACHE   cache root (default /var/tmp/deerflow-ci)
#   CODE_SERVER_DIR     install folder (default $DEERFLOW_CI_CACHE/code-server-4.100.3)
#
# Prints the install folder on the last line of stdout (callers read it). Everything else goes
# to stderr. A second run with everything present takes well under a second.
set -euo pipefail

CS_VERSION=4.100.3
CACHE=${DEERFLOW_CI_CACHE:-/var/tmp/deerflow-ci}
CS_DIR=${CODE_SERVER_DIR:-$CACHE/code-server-$CS_VERSION}
log() { printf '[code-server-setup] %s\n' "$*" >&2; }

# 1) Debian packages. kerberos@2.1.1's prebuilt comes from GitHub (unreachable): it compiles and
#    needs gssapi headers. ripgrep stands in for @vscode/ripgrep's GitHub download.
need=()
for p in libkrb5-dev ripgrep chromium; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
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

if [ "$(installed_version)" = "$CS_VERSION" ] &&
   [ -f "$CS_DIR/node_modules/code-server/out/node/entry.js" ] &&
   [ -x "$CS_DIR/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] &&
   [ -f "$CS_DIR/.install-complete" ]; then
  log "code-server $CS_VERSION already installed in $CS_DIR"
  echo "$CS_DIR"
  exit 0
fi

# 2) Seed @vscode/ripgrep@1.15.11's download cache with Debian's rg 13.0.0 (the version of the
#    v13.0.0-10 prebuilt it wants); its postinstall then "uses the cached download". The cache
#    path is fixed by @vscode/ripgrep: $TMPDIR/vscode-ripgrep-cache-<version>/<asset>.
RG_CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
RG_TGZ="$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$RG_TGZ" ]; then
  stage=$(mktemp -d)
  cp /usr/bin/rg "$stage/rg"
  mkdir -p "$RG_CACHE"
  tar czf "$RG_TGZ.tmp" -C "$stage" rg && mv "$RG_TGZ.tmp" "$RG_TGZ"
  rm -rf "$stage"
fi

# 3) npm install into its own folder (302 MB, ~80 s). A half-finished install (no marker) is
#    wiped first. As root, code-server's postinstall.sh insists on npm_config_unsafe_perm=true
#    (npm 11 calls it unknown but exports it); npm_config_yes=true lets node-pty's postinstall
#    run `npx node-gyp` (this machine's ~/.npmrc has yes=false).
log "npm i code-server@$CS_VERSION into $CS_DIR (about 80 s)"
rm -rf "$CS_DIR"
mkdir -p "$CS_DIR"
printf '{ "name": "deerflow-ci-code-server", "private": true }\n' > "$CS_DIR/package.json"
(
  cd "$CS_DIR"
  npm_config_unsafe_perm=true npm_config_yes=true \
    npm i --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >&2
)
[ "$(installed_version)" = "$CS_VERSION" ] || { log "install failed: no code-server $CS_VERSION in $CS_DIR"; exit 1; }
[ -x "$CS_DIR/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] ||
  { log "install failed: @vscode/ripgrep has no bin/rg (ripgrep cache seed?)"; exit 1; }
touch "$CS_DIR/.install-complete"
# (not `code-server --version`: without --config it writes ~/.config/code-server/config.yaml)
log "code-server $(installed_version), Code $(node -p "require('$CS_DIR/node_modules/code-server/lib/vscode/package.json').version")"
echo "$CS_DIR"
