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
  {
    name: "memory scopes and the extraction watermark",
    // Issue 21/22. `workspace`: the real path of the folder whose thread the conversation is; what
    // is extracted from it is scoped there (memory/scope.ts). Rows queued before scopes existed
    // name no folder, so nothing learnt from them could be scoped: they are dropped (at most one
    // debounce's worth of conversation per thread; the threads themselves are untouched).
    // `memory_watermarks`: per thread, the keys of the messages already extracted (a JSON array,
    // newest last, bounded by memory/queue.ts): only messages after them are sent again, so a
    // fact the user deleted does not come back from the same old turns (DeerFlow's watermark,
    // kept on disk because a CLI run is one process). Deleting a thread deletes its rows in both
    // tables (store/deleteThread.ts).
    sql: `
DELETE FROM memory_queue;
ALTER TABLE memory_queue ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS memory_queue_by_thread ON memory_queue (thread_id);
CREATE TABLE IF NOT EXISTS memory_watermarks (
  thread_id  TEXT PRIMARY KEY,
  extracted  TEXT NOT NULL CHECK (json_valid(extracted)),
  updated_at INTEGER NOT NULL
);`,
  },
];
