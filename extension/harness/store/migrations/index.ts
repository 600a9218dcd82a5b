/**
 * The schema, as an ordered list of migrations. Each runs once, in its own transaction, and
 * bumps `PRAGMA user_version` to its index + 1 (see db.ts). Never edit a shipped migration:
 * append a new one. Every statement uses IF NOT EXISTS so a half-known database is harmless.
 */
import { checkpointTablesSql } from "./checkpointTables.js";
import { runsEventsSql } from "./runsEvents.js";

export interface Migration {
  /** short name, for errors and the `schema_migrations` audit table */
  readonly name: string;
  readonly sql: string;
}

export const migrations: readonly Migration[] = [
  {
    name: "threads",
    // One row per conversation. `workspace_folder` is the real path of the folder the thread
    // belongs to (the database is already per folder; the column keeps rows self-describing
    // and lets startRun check ownership). Times are epoch milliseconds.
    sql: `
CREATE TABLE IF NOT EXISTS threads (
  thread_id        TEXT PRIMARY KEY,
  workspace_folder TEXT NOT NULL,
  title            TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  metadata         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
);
CREATE INDEX IF NOT EXISTS threads_by_folder ON threads (workspace_folder, updated_at DESC);`,
  },
  { name: "checkpoints", sql: checkpointTablesSql },
  {
    name: "blobs",
    // Content-addressed bytes (viewed images). The key is the sha256 of `bytes`, so a row never
    // changes once written and two puts of the same image share one row. A rowid table: large
    // rows in a WITHOUT ROWID table each waste most of an overflow page.
    sql: `
CREATE TABLE IF NOT EXISTS blobs (
  sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  mime_type  TEXT NOT NULL,
  size       INTEGER NOT NULL,
  bytes      BLOB NOT NULL,
  created_at INTEGER NOT NULL
);`,
  },
  { name: "runs and events", sql: runsEventsSql },
  // Append new migrations here; never reorder or edit a shipped one.
];
