/**
 * Tables of the LangGraph checkpointer (checkpointer.ts). Storage grows linearly with a thread:
 *
 * - `checkpoint_messages` is an append-only per-thread log of serialized messages. A message is
 *   stored once per distinct (id, content); `seq` is per thread and dense, so an appended
 *   conversation is one contiguous range.
 * - `checkpoints` rows are small: the checkpoint without its channel values, plus `channel_refs`,
 *   a JSON map channel -> reference: `{m:[[start,end),...]]}` into the message log,
 *   `{h:hash}` into `checkpoint_values`, or `{j:"json"}` inline for tiny values.
 * - `checkpoint_values` holds other channel values, content-addressed per thread (sha256 of the
 *   serialized bytes), so an unchanged `todos` list is stored once, not once per checkpoint.
 * - `checkpoint_writes` holds pending writes; message-valued writes also point into the log.
 *
 * - `checkpoint_threads` gives each incarnation of a thread a random epoch, so a saver's in-memory
 *   cache can tell that another process deleted (and maybe recreated) the thread under it.
 *
 * Everything is keyed by thread_id first so deleting a thread is a few range deletes. Tables whose
 * rows carry serialized values are ordinary rowid tables: in a WITHOUT ROWID table a row over a
 * few hundred bytes spills into its own overflow page, which multiplied the file size by ~5.
 */
export const checkpointTablesSql = `
CREATE TABLE IF NOT EXISTS checkpoint_threads (
  thread_id TEXT PRIMARY KEY,
  epoch     TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
  thread_id            TEXT NOT NULL,
  checkpoint_ns        TEXT NOT NULL DEFAULT '',
  checkpoint_id        TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type                 TEXT NOT NULL,
  checkpoint           BLOB NOT NULL,
  channel_refs         TEXT NOT NULL,
  metadata             TEXT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS checkpoint_messages (
  thread_id  TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  hash       TEXT NOT NULL,
  type       TEXT NOT NULL,
  value      BLOB NOT NULL,
  PRIMARY KEY (thread_id, seq)
);
CREATE INDEX IF NOT EXISTS checkpoint_messages_by_content ON checkpoint_messages (thread_id, message_id, hash);
CREATE TABLE IF NOT EXISTS checkpoint_values (
  thread_id TEXT NOT NULL,
  hash      TEXT NOT NULL,
  type      TEXT NOT NULL,
  value     BLOB NOT NULL,
  PRIMARY KEY (thread_id, hash)
);
CREATE TABLE IF NOT EXISTS checkpoint_writes (
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
);`;
