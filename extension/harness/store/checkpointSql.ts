/** Prepared statements of checkpointer.ts (tables: migrations/checkpointTables.ts). */
import type { Db } from "./sqlite/types.js";

export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Buffer;
  channel_refs: string;
  metadata: string;
}

export interface WriteRow {
  task_id: string;
  idx: number;
  channel: string;
  task_path: string;
  type: string;
  value: Buffer | string | null;
}

const CHECKPOINT_COLUMNS =
  "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, channel_refs, metadata";
const WRITE_COLUMNS = "task_id, idx, channel, task_path, type, value";

export function prepareCheckpointStatements(db: Db) {
  const writeSql = (verb: string) =>
    `${verb} INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, type, value)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  return {
    selectEpoch: db.prepare<[string], { epoch: string }>("SELECT epoch FROM checkpoint_threads WHERE thread_id = ?"),
    insertEpoch: db.prepare("INSERT INTO checkpoint_threads (thread_id, epoch) VALUES (?, ?)"),
    // Conflict policy: REPLACE. LangGraph re-puts the same checkpoint id on exit (durability
    // "exit"), and the last put of an id is the state it means.
    upsertCheckpoint: db.prepare(`INSERT OR REPLACE INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    // Conflict policy: IGNORE. The key is the hash of (type, bytes): an existing row is identical.
    insertValue: db.prepare("INSERT OR IGNORE INTO checkpoint_values (thread_id, hash, type, value) VALUES (?, ?, ?, ?)"),
    insertWrite: db.prepare(writeSql("INSERT OR IGNORE")),
    replaceWrite: db.prepare(writeSql("INSERT OR REPLACE")),
    selectCheckpoint: db.prepare<[string, string, string], CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
    ),
    // checkpoint ids are uuid6: time-ordered, so the greatest is the latest (as every LangGraph saver assumes)
    selectLatest: db.prepare<[string, string], CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1`,
    ),
    // The latest row of the thread in any namespace: which dictionary its rows are deflated with.
    selectLatestType: db.prepare<[string], { type: string }>(
      "SELECT type FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
    ),
    selectValue: db.prepare<[string, string], { type: string; value: Buffer }>(
      "SELECT type, value FROM checkpoint_values WHERE thread_id = ? AND hash = ?",
    ),
    selectWrites: db.prepare<[string, string, string], WriteRow>(
      `SELECT ${WRITE_COLUMNS} FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
    ),
    selectSends: db.prepare<[string, string, string, string], WriteRow>(
      `SELECT ${WRITE_COLUMNS} FROM checkpoint_writes
       WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND channel = ?
       ORDER BY task_path, task_id, idx`,
    ),
    // A finished run's compaction (LinearSqliteSaver.compactRun): root namespace only.
    selectLatestRootId: db.prepare<[string], { checkpoint_id: string }>(
      "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
    ),
    deleteRootWritesBetween: db.prepare<[string, string, string]>(
      "DELETE FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id > ? AND checkpoint_id < ?",
    ),
    deleteRootCheckpointsBetween: db.prepare<[string, string, string]>(
      "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id > ? AND checkpoint_id < ?",
    ),
    reparent: db.prepare<[string | null, string, string]>(
      "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
    ),
    deleteThread: [
      "DELETE FROM checkpoints WHERE thread_id = ?",
      "DELETE FROM checkpoint_writes WHERE thread_id = ?",
      "DELETE FROM checkpoint_values WHERE thread_id = ?",
      "DELETE FROM checkpoint_messages WHERE thread_id = ?",
      "DELETE FROM checkpoint_threads WHERE thread_id = ?",
    ].map((sql) => db.prepare<[string]>(sql)),
  };
}

export type CheckpointStatements = ReturnType<typeof prepareCheckpointStatements>;
