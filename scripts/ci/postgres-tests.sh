#!/usr/bin/env bash
# The Postgres tier (issue 26), once, on the Node that runs it (CI: Node 20): the store tests, the
# run/lease/journal conformance suite, LangGraph's checkpoint-validation suite and long-term
# memory's queue and document (test/unit/memory/storage.test.ts), the SAME files
# the SQLite tiers run, against a real Postgres server (scripts/ci/postgres-setup.sh: Debian's
# package, a cluster of its own on a free loopback port), plus `deerflow serve` on Postgres: the
# SDK-driven API test, two serve processes sharing a run system, and worker processes sharing
# one memory (test/postgres/, which only this tier runs). The serve tests and memoryWorkers' CLI
# test use dist/cli.js: CI runs this after `npm test` has built it.
# DEERFLOW_TEST_POSTGRES_URL makes each test open a fresh schema there (test/fixtures/testDatabase.ts).
# Lean on purpose (CI time is a hard limit): not the whole suite again.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf '[postgres-tests] %s\n' "$*"; }

started_here=0
scripts/ci/postgres-setup.sh status || started_here=1
url=$(scripts/ci/postgres-setup.sh start | tail -n 1)
# Stop only a server this run started (a developer's running one stays up).
if [ "$started_here" = 1 ]; then trap 'scripts/ci/postgres-setup.sh stop || true' EXIT; fi
export DEERFLOW_TEST_POSTGRES_URL="$url"

t0=$(date +%s)
status=0
node --import tsx --test --test-concurrency=2 \
  test/unit/runs/sqliteRunStores.test.ts \
  test/unit/store/blobsThreads.test.ts \
  test/unit/store/deleteThread.test.ts \
  test/unit/store/checkpointer.conformance.test.ts \
  test/unit/memory/storage.test.ts \
  test/integration/serve.test.ts \
  test/integration/serveRpc.test.ts \
  test/integration/serveValues.test.ts \
  test/postgres/serveWorkers.test.ts \
  test/postgres/serveOutage.test.ts \
  test/postgres/syncPg.test.ts \
  test/postgres/memoryWorkers.test.ts \
  || status=1
node node_modules/vitest/vitest.mjs run --config test/conformance/vitest.config.ts || status=1
log "$(( $(date +%s) - t0 )) s"
exit "$status"
