#!/usr/bin/env bash
# A real Postgres for the tests and benches (issue 26), from Debian's packages, without a system
# service: a cluster of its own in a temp dir, owned by the postgres user, on a free loopback port.
#
#   scripts/ci/postgres-setup.sh [start]   idempotent: install, initdb once, start if not running;
#                                          prints the server's URL on the last line of stdout
#   scripts/ci/postgres-setup.sh url       prints the URL of the running server (exit 1 if none)
#   scripts/ci/postgres-setup.sh stop      stops the server THIS script started (pg_ctl -D, our dir)
#   scripts/ci/postgres-setup.sh status    exit 0 when our server answers
#
#   DEERFLOW_PG_DIR   where the cluster lives (default /var/tmp/deerflow-pg)
#
# Loopback only (listen_addresses=127.0.0.1, the socket in our dir) and `trust` authentication:
# it is a throwaway test server reachable from this machine alone. synchronous_commit=off is the
# durability SQLite's WAL + synchronous=NORMAL has in the harness (a crash may lose the last
# commits, never corrupt), so the benches compare like with like. Runs as root (CI does).
set -euo pipefail

DIR=${DEERFLOW_PG_DIR:-/var/tmp/deerflow-pg}
DATA=$DIR/data
SOCK=$DIR/sock
PORT_FILE=$DIR/port
LOG=$DIR/server.log
log() { printf '[postgres-setup] %s\n' "$*" >&2; }

bin_dir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

install_server() {
  if [ -n "$(bin_dir)" ]; then return; fi
  log "installing Debian's postgresql"
  # No main cluster on port 5432 and no service: we run a cluster of our own.
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/deerflow-ci.conf
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  [ -n "$(bin_dir)" ] || { log "postgresql installed but no pg_ctl under /usr/lib/postgresql/*/bin"; exit 1; }
}

as_pg() { runuser -u postgres -- "$@"; }

url() { echo "postgres://postgres@127.0.0.1:$(cat "$PORT_FILE")/postgres"; }

answers() {
  local bin
  bin=$(bin_dir) || return 1
  [ -f "$PORT_FILE" ] && "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$PORT_FILE")" -t 2
}

free_port() {
  # Ask the kernel for a free loopback port (bound, read, released).
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
    || node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

port_free() {
  # SO_REUSEADDR as Postgres binds: the stopped server's closed connections may sit in TIME_WAIT.
  python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(sys.argv[1]))); s.close()' "$1" 2>/dev/null
}

start() {
  install_server
  local bin
  bin=$(bin_dir)
  if answers; then
    log "server already answers on port $(cat "$PORT_FILE")"
    url
    return
  fi
  mkdir -p "$DIR" "$SOCK"
  chown postgres: "$DIR" "$SOCK"
  chmod 0700 "$DIR"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    rm -rf "$DATA"
    log "initdb $DATA"
    as_pg "$bin/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
      || as_pg "$bin/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 \
      || { tail -n 20 "$DIR/initdb.log" >&2; exit 1; }
  fi
  # A server killed without cleanup leaves postmaster.pid; pg_ctl start copes when its PID is dead.
  # A restart keeps its port when it is still free (clients reconnect to the same URL: the outage
  # test stops and starts the server under a running serve); else a fresh one.
  local port=""
  if [ -f "$PORT_FILE" ] && port_free "$(cat "$PORT_FILE")"; then port=$(cat "$PORT_FILE"); fi
  [ -n "$port" ] || port=$(free_port)
  echo "$port" >"$PORT_FILE"
  log "starting postgres on 127.0.0.1:$port (log: $LOG)"
  touch "$LOG" && chown postgres: "$LOG"
  as_pg "$bin/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-p $port -k $SOCK -c listen_addresses=127.0.0.1 -c synchronous_commit=off -c max_connections=200" start >/dev/null \
    || { tail -n 20 "$LOG" >&2; exit 1; }
  answers || { log "postgres started but does not answer"; tail -n 20 "$LOG" >&2; exit 1; }
  url
}

stop() {
  local bin
  bin=$(bin_dir) || { log "no postgresql installed; nothing to stop"; return; }
  if [ -f "$DATA/postmaster.pid" ]; then
    log "stopping the server of $DATA"
    as_pg "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null || true
  else
    log "no server of ours is running"
  fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  url) answers && url ;;
  status) answers ;;
  *) echo "usage: $0 [start|url|stop|status]" >&2; exit 2 ;;
esac
