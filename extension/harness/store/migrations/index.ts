/**
 * The schema, as an ordered list of migrations. Each runs once, in its own transaction, and
 * bumps `PRAGMA user_version` to its index + 1 (see db.ts). Never edit a shipped migration:
 * append a new one. Every statement uses IF NOT EXISTS so a half-known database is harmless.
 */
import { checkpointTablesSql } from "./checkpointTables.js";
import { runsEventsSql } from "./runsEvents.js";
import { runFileChangesSql } from "./runFileChanges.js";

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
  {
    name: "events as a rowid table",
    // The journal's large rows (a finished answer in `updates`, a batch of token chunks) are one
    // to a few KB. In a WITHOUT ROWID table a row over ~1 KB spills into an overflow page and
    // wastes most of it (38% of the events pages at 60 turns); a rowid table keeps rows up to
    // ~4 KB in place. (thread_id, seq) stays unique through its own index: a duplicate seq still
    // ABORTs the insert, so history is never overwritten.
    sql: `
CREATE TABLE events_rowid (
  thread_id  TEXT NOT NULL,
  seq        INTEGER NOT NULL CHECK (seq > 0),
  run_id     TEXT NOT NULL,
  event      TEXT NOT NULL,
  data       TEXT NOT NULL CHECK (json_valid(data)),
  created_at INTEGER NOT NULL
);
INSERT INTO events_rowid (thread_id, seq, run_id, event, data, created_at)
  SELECT thread_id, seq, run_id, event, data, created_at FROM events ORDER BY thread_id, seq;
DROP TABLE events;
ALTER TABLE events_rowid RENAME TO events;
CREATE UNIQUE INDEX events_by_thread ON events (thread_id, seq);
CREATE INDEX events_by_run ON events (run_id, seq);`,
  },
  {
    name: "checkpoint_writes without rowid",
    // Every superstep writes a few small control-flow rows (`branch:to:<next node>`, ~250 bytes);
    // as a rowid table each also had a copy of its primary key in an automatic index, a third of
    // the table's size again. WITHOUT ROWID stores the row in the key's b-tree, once. Message-
    // valued writes point into the message log, so rows stay far below the ~1 KB a WITHOUT ROWID
    // row holds in place (the rare large value, e.g. a long todo list, takes an overflow page).
    sql: `
CREATE TABLE checkpoint_writes_compact (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id       TEXT NOT NULL,
  idx           INTEGER NOT NULL,
  channel       TEXT NOT NULL,
  task_path     TEXT NOT NULL DEFAULT '',
  type          TEXT NOT NULL,
  value         BLOB,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
INSERT INTO checkpoint_writes_compact SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, type, value FROM checkpoint_writes;
DROP TABLE checkpoint_writes;
ALTER TABLE checkpoint_writes_compact RENAME TO checkpoint_writes;`,
  },
  {
    name: "run file changes",
    // What each run did to the files it wrote through the agent's file tools (store/fileChanges.ts).
    sql: runFileChangesSql,
  },
  // Append new migrations here; never reorder or edit a shipped one.
];
