#!/usr/bin/env bash
# A real Docker engine and a local base image for the dev container tests, without any registry
# (see the shared recipe devcontainer-ci.md: Debian's docker.io, vfs storage, no bridge network,
# a debootstrap rootfs imported as local/debian-minbase:bookworm).
#
#   scripts/ci/docker-setup.sh [start]   idempotent: install, start the engine if none answers (restart our own idle
#                                        one that predates its TCP listener), build the image
#   scripts/ci/docker-setup.sh stop      stop the dockerd THIS script started (by its PID), nothing else
#   scripts/ci/docker-setup.sh status    exit 0 when the engine answers (socket and TCP) and the image exists
#
# An engine that already answers is used as is and never stopped by us (unless it is our own, idle,
# and predates the TCP listener). Runs as root (CI does).
#
# The engine we start also listens on loopback TCP (DOCKER_TCP, no TLS: 127.0.0.1 only, on a CI
# machine), so the tests can name it by DOCKER_HOST=tcp://… as a remote engine would be named.
set -euo pipefail

DOCKER=/usr/bin/docker                      # Debian's 20.10 client: matches the engine's API
IMAGE=local/debian-minbase:bookworm
CACHE_DIR=${DEERFLOW_CI_CACHE:-/var/cache/deerflow-ci}
ROOTFS_TAR="$CACHE_DIR/debian-minbase-bookworm.tar"
STATE_DIR=${DEERFLOW_CI_STATE:-/run/deerflow-ci}
OWNED_PID="$STATE_DIR/dockerd.pid"          # present only while a dockerd we started runs
DOCKERD_LOG=${DEERFLOW_DOCKERD_LOG:-/tmp/deerflow-dockerd.log}
DOCKER_TCP=tcp://127.0.0.1:23750            # test/devcontainer/helpers/engine.ts ENGINE_TCP
# The Debian mirror apt is already configured with on this machine (deb822 or one-line sources).
apt_mirror() {
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'
  } | grep -v -- '-security' | grep '/debian$' | head -n 1 || true
}
MIRROR=${DEBIAN_MIRROR:-$(apt_mirror)}
if [ -z "$MIRROR" ] && [ "${1:-start}" = start ]; then
  log "no Debian mirror found in apt's sources: set DEBIAN_MIRROR"
fi

log() { printf '[docker-setup] %s\n' "$*" >&2; }

engine_answers() { [ -x "$DOCKER" ] && "$DOCKER" info >/dev/null 2>&1; }
tcp_answers() { [ -x "$DOCKER" ] && DOCKER_HOST=$DOCKER_TCP "$DOCKER" version >/dev/null 2>&1; }

apt_install() {
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Alive and not a zombie: a killed dockerd that nobody reaped yet still answers kill -0.
pid_alive() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}
# The PID we recorded is ours only while it is still a dockerd (a dead one's PID may be reused).
our_dockerd() { pid_alive "$1" && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = dockerd ]; }

start_engine() {
  # A record of a dockerd that is gone (a session ended and took it along) is not ours any more.
  if [ -f "$OWNED_PID" ] && ! our_dockerd "$(cat "$OWNED_PID" 2>/dev/null || true)"; then
    rm -f "$OWNED_PID"
  fi
  if engine_answers; then
    if tcp_answers; then
      log "engine already answers; using it"
      return
    fi
    # Ours, from before it listened on TCP, and idle: restarting it costs nobody a container.
    if [ -f "$OWNED_PID" ] && [ -z "$("$DOCKER" ps -q)" ]; then
      log "our engine does not listen on $DOCKER_TCP; restarting it"
      stop_engine
    else
      log "engine already answers (not on $DOCKER_TCP: the DOCKER_HOST tests will fail); using it"
      return
    fi
  fi
  if ! command -v dockerd >/dev/null 2>&1 || [ ! -x "$DOCKER" ]; then
    apt_install docker.io
  fi
  # A dockerd killed without cleanup leaves its pid file and the next start refuses
  # ("pid file found, ensure docker is not running"): drop it when its PID is dead.
  if [ -f /var/run/docker.pid ] && ! pid_alive "$(cat /var/run/docker.pid 2>/dev/null || true)"; then
    log "removing stale /var/run/docker.pid"
    rm -f /var/run/docker.pid
  fi
  if [ -f /var/run/docker.pid ]; then
    log "a dockerd is running (pid $(cat /var/run/docker.pid)) but does not answer; waiting for it"
  else
    mkdir -p "$STATE_DIR"
    log "starting dockerd (log: $DOCKERD_LOG)"
    # setsid: the engine outlives this script and the test process that ran it.
    setsid dockerd --iptables=false --ip-masq=false --bridge=none --storage-driver=vfs \
      -H unix:///var/run/docker.sock -H "$DOCKER_TCP" \
      >"$DOCKERD_LOG" 2>&1 </dev/null &
    echo $! >"$OWNED_PID"
  fi
  for _ in $(seq 1 120); do
    if engine_answers; then log "engine ready"; return; fi
    if [ -f "$OWNED_PID" ] && ! pid_alive "$(cat "$OWNED_PID")"; then
      rm -f "$OWNED_PID"
      log "dockerd exited during start-up; last log lines:"
      tail -n 20 "$DOCKERD_LOG" >&2 || true
      exit 1
    fi
    sleep 0.5
  done
  log "engine did not answer within 60 s"; tail -n 20 "$DOCKERD_LOG" >&2 || true
  exit 1
}

build_image() {
  if "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
    log "image $IMAGE present"
    return
  fi
  if [ ! -s "$ROOTFS_TAR" ]; then
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    local rootfs
    rootfs=$(mktemp -d /tmp/deerflow-rootfs.XXXXXX)
    log "debootstrap minbase bookworm (about 30 s)"
    debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >/tmp/deerflow-debootstrap.log 2>&1 \
      || { tail -n 20 /tmp/deerflow-debootstrap.log >&2; rm -rf "$rootfs"; exit 1; }
    # mktemp made the root 0700: as the image's "/" it would lock every non-root user out.
    chmod 0755 "$rootfs"
    mkdir -p "$CACHE_DIR"
    tar -C "$rootfs" -cf "$ROOTFS_TAR.part" .
    mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
    rm -rf "$rootfs"
  fi
  log "importing $IMAGE"
  "$DOCKER" import - "$IMAGE" <"$ROOTFS_TAR" >/dev/null
}

stop_engine() {
  if [ ! -f "$OWNED_PID" ]; then
    log "no dockerd started by this script; nothing to stop"
    return
  fi
  local pid
  pid=$(cat "$OWNED_PID")
  if our_dockerd "$pid"; then
    log "stopping dockerd $pid"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do pid_alive "$pid" || break; sleep 0.5; done
    pid_alive "$pid" && kill -KILL "$pid"
  fi
  rm -f "$OWNED_PID"
}

case "${1:-start}" in
  start) start_engine; build_image ;;
  stop) stop_engine ;;
  status) engine_answers && tcp_answers && "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1 ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
