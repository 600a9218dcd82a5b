/**
 * The workspace schema on Postgres (issue 26): the same tables, columns and constraints the
 * SQLite migrations (../migrations/) end with, in Postgres' types: INTEGER (epoch milliseconds,
 * counts) is BIGINT, BLOB is BYTEA. One database holds every workspace's threads (the SQLite
 * layout is a file per folder; here `threads.workspace_folder`, which every thread query already
 * filters on, keeps folders apart, and the other tables are keyed by globally unique thread ids).
 *
 * Its own ordered list, versioned in `schema_migrations` (Postgres has no user_version): SQLite's
 * history (tables rebuilt as rowid / WITHOUT ROWID) means nothing here. Same rules: each runs once
 * in its own transaction under the write lock, never edited once shipped, append new ones.
 *
 * JSON columns are TEXT, as on SQLite (the stores read and write JSON text); SQLite's
 * json_valid CHECKs have no Postgres 15 counterpart that does not raise on bad input, and every
 * writer is ours and writes JSON.stringify output.
 */
import type { Migration } from "../migrations/index.js";

export const postgresMigrations: readonly Migration[] = [
  {
    name: "workspace schema",
    sql: `
CREATE TABLE IF NOT EXISTS threads (
  thread_id        TEXT PRIMARY KEY,
  workspace_folder TEXT NOT NULL,
  title            TEXT,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  metadata         TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS threads_by_folder ON threads (workspace_folder, updated_at DESC);

CREATE TABLE IF NOT EXISTS checkpoint_threads (
  thread_id TEXT PRIMARY KEY,
  epoch     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
  thread_id            TEXT NOT NULL,
  checkpoint_ns        TEXT NOT NULL DEFAULT '',
  checkpoint_id        TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type                 TEXT NOT NULL,
  checkpoint           BYTEA NOT NULL,
  channel_refs         TEXT NOT NULL,
  metadata             TEXT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS checkpoint_messages (
  thread_id  TEXT NOT NULL,
  seq        BIGINT NOT NULL,
  message_id TEXT NOT NULL,
  hash       TEXT NOT NULL,
  type       TEXT NOT NULL,
  value      BYTEA NOT NULL,
  PRIMARY KEY (thread_id, seq)
);
CREATE INDEX IF NOT EXISTS checkpoint_messages_by_content ON checkpoint_messages (thread_id, message_id, hash);
CREATE TABLE IF NOT EXISTS checkpoint_values (
  thread_id TEXT NOT NULL,
  hash      TEXT NOT NULL,
  type      TEXT NOT NULL,
  value     BYTEA NOT NULL,
  PRIMARY KEY (thread_id, hash)
);
CREATE TABLE IF NOT EXISTS checkpoint_writes (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id       TEXT NOT NULL,
  idx           BIGINT NOT NULL,
  channel       TEXT NOT NULL,
  task_path     TEXT NOT NULL DEFAULT '',
  type          TEXT NOT NULL,
  value         BYTEA,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

CREATE TABLE IF NOT EXISTS blobs (
  sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  mime_type  TEXT NOT NULL,
  size       BIGINT NOT NULL,
  bytes      BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS runs (
  run_id              TEXT PRIMARY KEY,
  thread_id           TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  status              TEXT NOT NULL CHECK (status IN ('pending','running','success','error','timeout','interrupted')),
  multitask_strategy  TEXT NOT NULL DEFAULT 'reject' CHECK (multitask_strategy IN ('reject','interrupt')),
  idempotency_key     TEXT,
  model               TEXT NOT NULL,
  input               TEXT NOT NULL DEFAULT '{}',
  context             TEXT NOT NULL DEFAULT '{}',
  lease_owner         TEXT,
  lease_expires_at    BIGINT,
  error               TEXT,
  usage               TEXT,
  created_at          BIGINT NOT NULL,
  started_at          BIGINT,
  ended_at            BIGINT,
  updated_at          BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, created_at DESC);
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_active ON runs (thread_id) WHERE status IN ('pending','running');
CREATE UNIQUE INDEX IF NOT EXISTS runs_idempotency ON runs (thread_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_running ON runs (status) WHERE status IN ('pending','running');

CREATE TABLE IF NOT EXISTS events (
  thread_id  TEXT NOT NULL,
  seq        BIGINT NOT NULL CHECK (seq > 0),
  run_id     TEXT NOT NULL,
  event      TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_by_thread ON events (thread_id, seq);
CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq);

CREATE TABLE IF NOT EXISTS run_file_changes (
  thread_id      TEXT NOT NULL,
  run_id         TEXT NOT NULL,
  path           TEXT NOT NULL,
  before_sha256  TEXT CHECK (before_sha256 IS NULL OR length(before_sha256) = 64),
  after_state    TEXT NOT NULL DEFAULT 'unknown' CHECK (after_state IN ('unknown','present','absent')),
  after_sha256   TEXT CHECK ((after_state = 'present') = (after_sha256 IS NOT NULL)),
  protected_rule TEXT,
  reverted_at    BIGINT,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  PRIMARY KEY (thread_id, run_id, path)
);
CREATE INDEX IF NOT EXISTS run_file_changes_by_run ON run_file_changes (run_id);
CREATE INDEX IF NOT EXISTS run_file_changes_by_before ON run_file_changes (before_sha256) WHERE before_sha256 IS NOT NULL;`,
  },
  {
    name: "events notify",
    // Cross-process fan-out (postgres/notify.ts): each journaled event NOTIFYs its thread id,
    // delivered at COMMIT. A trigger, so every writer does it.
    sql: `
CREATE OR REPLACE FUNCTION deerflow_notify_event() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('deerflow_events', NEW.thread_id);
  RETURN NULL;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION deerflow_notify_event();`,
  },
  // Append new migrations here; never reorder or edit a shipped one.
];
