/**
 * The schema of the per-user memory database, `<dataDir>/memory/memory.db` (memory/queue.ts):
 * its own file, not a workspace's, because memory is the user's across every folder, and a
 * workspace database is deleted with its folder's history. Same rules as the workspace schema:
 * an ordered list, each applied once (db.ts `migrate`), never edited once shipped.
 */
import type { Migration } from "./index.js";

export const memoryMigrations: readonly Migration[] = [
  {
    name: "memory update queue",
    // One row per conversation waiting for fact extraction (DeerFlow's debounced memory queue,
    // made durable: a one-shot CLI that exits, or a harness that restarts, loses nothing).
    // - `key`: what a newer entry replaces. A thread's conversation is re-queued after each run
    //   with everything so far, so an unclaimed older entry of the same thread is superseded
    //   (ON CONFLICT(key) DO UPDATE); a compaction flush has a key of its own and is never merged.
    // - `messages`: JSON [{role, content}], user messages and final answers only, already scrubbed.
    // - `due_at`: the debounce; `attempts`/`last_error`: bounded retries after a failed extraction.
    // `memory_processor`: a lease row; only its holder reads-modifies-writes memory.json, so two
    // processes (the panel's harness and a CLI) never interleave updates and lose one.
    // Times are epoch milliseconds.
    sql: `
CREATE TABLE IF NOT EXISTS memory_queue (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  key           TEXT NOT NULL UNIQUE,
  thread_id     TEXT NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('conversation','flush')),
  model         TEXT NOT NULL,
  base_url      TEXT,
  messages      TEXT NOT NULL CHECK (json_valid(messages)),
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  due_at        INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_queue_by_due ON memory_queue (due_at);
CREATE TABLE IF NOT EXISTS memory_processor (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  owner      TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);`,
  },
];
