/**
 * Long-term memory's schema on Postgres (issue 26): the same tables the SQLite memory database
 * ends with (../migrations/memoryQueue.ts), plus the memory document, which on SQLite is a file
 * beside that database (memory/store.ts) and here is a row, so that every `deerflow serve` on the
 * database reads and writes one document under one lock (memory/pgDocument.ts).
 *
 * Versioned in its own ledger, MEMORY_LEDGER, not in the workspace schema's `schema_migrations`:
 * the two lists grow independently, as the two SQLite databases do (a workspace file per folder,
 * a memory file per user), and a database that holds only one of them is not half-migrated.
 * Same rules as postgres/migrations.ts: applied once, in one transaction under the write lock,
 * never edited once shipped, new ones appended. INTEGER is BIGINT, JSON columns are TEXT.
 */
import type { Migration } from "../migrations/index.js";

export const MEMORY_LEDGER = "memory_schema_migrations";

export const postgresMemoryMigrations: readonly Migration[] = [
  {
    name: "memory queue, watermarks, processor lease and document",
    // memory_queue / memory_watermarks: as on SQLite (conflict policy in memory/queue.ts).
    // memory_processor: the lease row; `backend_pid` is the holder's Postgres connection, so a
    //   holder whose process died (its connection gone from pg_stat_activity) is not waited for,
    //   whichever machine it ran on; SQLite's rule (a dead pid of this machine) cannot see another
    //   machine's processes.
    // memory_document: the one document (DeerFlow's memory.json shape, validated and scrubbed by
    //   memory/store.ts before it is written). `version` only grows: it is the editor's mtime, so a
    //   save over a newer version is a conflict. `generation` changes on an explicit user change only
    //   (memory/store.ts). Times are epoch milliseconds.
    sql: `
CREATE TABLE IF NOT EXISTS memory_queue (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key         TEXT NOT NULL UNIQUE,
  thread_id   TEXT NOT NULL,
  workspace   TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('conversation','flush')),
  model       TEXT NOT NULL,
  base_url    TEXT,
  messages    TEXT NOT NULL,
  attempts    BIGINT NOT NULL DEFAULT 0,
  last_error  TEXT,
  due_at      BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_queue_by_due ON memory_queue (due_at);
CREATE INDEX IF NOT EXISTS memory_queue_by_thread ON memory_queue (thread_id);
CREATE TABLE IF NOT EXISTS memory_watermarks (
  thread_id  TEXT PRIMARY KEY,
  extracted  TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_processor (
  id          SMALLINT PRIMARY KEY CHECK (id = 1),
  owner       TEXT NOT NULL,
  expires_at  BIGINT NOT NULL,
  backend_pid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_document (
  id          SMALLINT PRIMARY KEY CHECK (id = 1),
  doc         TEXT NOT NULL,
  version     BIGINT NOT NULL,
  generation  TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);`,
  },
  // Append new migrations here; never reorder or edit a shipped one.
];
