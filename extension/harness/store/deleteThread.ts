/**
 * Deleting a thread, the one way every entry point does it (`deerflow delete`, the panel's
 * `threads/delete`): afterwards no table of either database holds the thread id — the
 * workspace's and the user's memory database (`<dataDir>/memory/memory.db`: its queued
 * extractions and its watermark, memory/queue.ts) — and its `.deerflow/threads/<id>` folder is
 * gone. test/integration/deleteThread.test.ts checks every table of both files, listed from
 * sqlite_master, so a table added later cannot be forgotten here.
 *
 * 0. The memory rows first: if that database cannot be written, nothing is deleted yet and the
 *    delete can simply be tried again. (The facts memory.json learnt from the thread stay: they
 *    are the user's memory, not the thread's, as in DeerFlow; Open Memory shows and forgets them.)
 *    They are removed again after the transaction below, for a run that ended in between.
 *
 * 1. One IMMEDIATE transaction removes the thread row, its runs, its journal events, its
 *    checkpoints with their message log, values and writes (the checkpointer's own delete
 *    statements, so a checkpoint table added there is covered here too), its runs' file changes,
 *    and the blobs no other thread refers to: the images it viewed and the content files had
 *    before its runs changed them (`run_file_changes.before_sha256`). It is refused (`thread_busy`) while a run of the
 *    thread has not ended: that run's worker would write checkpoints and events again. The check
 *    and the deletes share the write lock, so no run can be admitted in between (and a run
 *    admitted after it fails: runs reference threads).
 * 2. Then the thread's memory rows once more (see 0), and the folder, never through a link: see
 *    removeThreadFolder.
 *
 * Blobs are content-addressed and shared: two threads that view the same bytes share one row.
 * Thread state keeps only `{mime_type, size, sha256}` per viewed image (blobs.ts), in the
 * `viewed_images` channel value (`checkpoint_values`) and in the view_image tool's pending write
 * (`checkpoint_writes`); both hold the hash as JSON text. So a blob is this thread's when its hash
 * occurs in this thread's values or writes, and another thread still needs it when the hash
 * occurs in that thread's. (Inline values in the checkpoint rows, which are deflated, are ≤ 96
 * bytes: a viewed-image entry, with its 64-character hash, never fits.) While values are stored
 * as they are serialized, a byte search can only err towards keeping a blob; were they ever
 * compressed, this must change (test/integration/deleteThread.test.ts, where another thread keeps
 * a shared image, fails first). One case it cannot see: a run in flight on another thread may
 * have just stored the same bytes (a no-op put on the existing row) without a checkpoint that
 * refers to them yet; so while another thread has a run that has not ended, this thread's blobs
 * are kept. That can leave an unreferenced blob behind, never lose one a thread needs.
 */
import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import { HarnessError } from "../errors.js";
import { isOwnerGone } from "../runs/owner.js";
import { THREAD_DATA_DIR_NAME } from "../sandbox/paths.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { prepareCheckpointStatements } from "./checkpointSql.js";
import { deleteThreadMemory } from "../memory/queue.js";
import type { WorkspaceStore } from "./db.js";
import type { Db } from "./sqlite/types.js";

export interface DeletedThread {
  threadId: string;
  /** Blobs removed (viewed images, before-contents of changed files): the thread referred to them and no other thread does. */
  blobsRemoved: number;
  /**
   * The thread's folder `.deerflow/threads/<id>`: `removed`; `absent` (never created, or already
   * gone); `not_followed` when `.deerflow` or `threads` is a link or a file, so `<id>` under it
   * is not this workspace's folder and is left alone.
   */
  folder: "removed" | "absent" | "not_followed";
}

interface UnendedRun {
  run_id: string;
  status: string;
  lease_owner: string | null;
}

/**
 * A run not yet ended may still write: its worker is running, stopping (cancelled, about to
 * journal its end), or about to take it (pending). Only a run whose owner process is provably
 * gone writes nothing more (callers run `RunManager.recover()` first, which settles the others
 * a dead process left behind).
 */
const mayStillWrite = (r: UnendedRun): boolean => !(r.lease_owner && isOwnerGone(r.lease_owner));

function statements(db: Db) {
  // A hash occurs in a value: a byte search (CAST … AS BLOB), since values are JSON bytes (BLOB)
  // or, for message-range writes, JSON text.
  // On Postgres the values are BYTEA: position() of the hash's UTF-8 bytes.
  const contains =
    db.dialect === "postgres" ? "position(convert_to(b.sha256, 'UTF8') in x.value) > 0" : "instr(CAST(x.value AS BLOB), CAST(b.sha256 AS BLOB)) > 0";
  const occursIn = (table: string, threadClause: string) =>
    `EXISTS (SELECT 1 FROM ${table} x WHERE x.thread_id ${threadClause} AND ${contains})`;
  return {
    thread: db.prepare<[string, string], { one: number }>("SELECT 1 AS one FROM threads WHERE thread_id = ? AND workspace_folder = ?"),
    unended: db.prepare<[string], UnendedRun>("SELECT run_id, status, lease_owner FROM runs WHERE thread_id = ? AND ended_at IS NULL"),
    unendedElsewhere: db.prepare<[string], UnendedRun>("SELECT run_id, status, lease_owner FROM runs WHERE thread_id <> ? AND ended_at IS NULL"),
    threadBlobs: db.prepare<[string, string], { sha256: string }>(
      `SELECT b.sha256 FROM blobs b WHERE ${occursIn("checkpoint_values", "= ?")} OR ${occursIn("checkpoint_writes", "= ?")}`,
    ),
    // The content files had before this thread's runs changed them (store/fileChanges.ts).
    changeBlobs: db.prepare<[string], { sha256: string }>(
      "SELECT DISTINCT before_sha256 AS sha256 FROM run_file_changes WHERE thread_id = ? AND before_sha256 IS NOT NULL",
    ),
    usedElsewhere: db.prepare<[string, string, string, string], { one: number }>(
      `SELECT 1 AS one FROM blobs b WHERE b.sha256 = ? AND (${occursIn("checkpoint_values", "<> ?")} OR ${occursIn("checkpoint_writes", "<> ?")}
       OR EXISTS (SELECT 1 FROM run_file_changes f WHERE f.before_sha256 = b.sha256 AND f.thread_id <> ?))`,
    ),
    deleteChanges: db.prepare<[string]>("DELETE FROM run_file_changes WHERE thread_id = ?"),
    deleteBlob: db.prepare<[string]>("DELETE FROM blobs WHERE sha256 = ?"),
    deleteEvents: db.prepare<[string]>("DELETE FROM events WHERE thread_id = ?"),
    deleteRuns: db.prepare<[string]>("DELETE FROM runs WHERE thread_id = ?"),
    deleteThread: db.prepare<[string, string]>("DELETE FROM threads WHERE thread_id = ? AND workspace_folder = ?"),
  };
}

/**
 * Deletes the thread's rows and unshared blobs (one transaction), then its folder. Throws
 * HarnessError `thread_not_found` when the folder has no such thread, `thread_busy` while one of
 * its runs may still write; in both cases nothing is changed.
 *
 * The database part runs synchronously before the first await: a caller that checked something
 * in the same tick (the server's `clearing` set) still holds when the transaction runs.
 */
export async function deleteThread(store: WorkspaceStore, threadId: string): Promise<DeletedThread> {
  validateThreadId(threadId);
  const { db, workspaceFolder } = store;
  // Refused (not found, busy) before anything changes, the memory rows included.
  checkDeletable(statements(db), workspaceFolder, threadId);
  deleteThreadMemory(store, threadId);
  // Gone from the file's bytes too: every connection runs with secure_delete on (db.ts), which
  // zeroes the deleted cells, but SQLite's page rebalancing can leave copies of a moved cell in a
  // page's unused area (seen once a thread's events spanned many pages). VACUUM rewrites the
  // file from the live rows only; it costs one pass over the file, for an action the user asked
  // for. Best effort: the rows are gone whatever it says (another process reading the file at
  // this moment makes it busy; the next delete vacuums again).
  const blobsRemoved = deleteRows(db, workspaceFolder, threadId);
  if (db.dialect === "sqlite") {
    try {
      db.exec("VACUUM");
      // In WAL mode the rewritten pages land in the -wal file and the main file keeps the old
      // images until a checkpoint: fold them in now, not when the last connection closes.
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // see above
    }
  }
  deleteThreadMemory(store, threadId);
  // The saver's in-memory cache of this thread needs no eviction: the thread's epoch row is gone,
  // so its next read or write sees a new epoch and starts cold (checkpointer.ts, epochMatches).
  const folder = await removeThreadFolder(workspaceFolder, threadId);
  return { threadId, blobsRemoved, folder };
}

/** `thread_not_found` / `thread_busy` (see deleteThread), or nothing. */
function checkDeletable(sql: ReturnType<typeof statements>, workspaceFolder: string, threadId: string): void {
  if (!sql.thread.get(threadId, workspaceFolder)) {
    throw new HarnessError("thread_not_found", `Thread ${threadId} does not exist in ${workspaceFolder}.`);
  }
  const busy = sql.unended.all(threadId).find(mayStillWrite);
  if (busy) {
    const doing = busy.status === "pending" || busy.status === "running" ? `is ${busy.status}` : "is stopping";
    throw new HarnessError(
      "thread_busy",
      `Thread ${threadId} is busy: run ${busy.run_id} ${doing}. Cancel it or wait for it to end, then delete the thread.`,
    );
  }
}

/** The workspace database part, one IMMEDIATE transaction; returns how many blobs it removed. */
function deleteRows(db: Db, workspaceFolder: string, threadId: string): number {
  const sql = statements(db);
  const checkpointDeletes = prepareCheckpointStatements(db).deleteThread;
  return db.transaction("immediate", () => {
    // Again inside the write lock: a run may have been admitted since the first check.
    checkDeletable(sql, workspaceFolder, threadId);
    // Before the checkpoint rows go: they are how the thread's blobs are found.
    const candidates = [
      ...new Set([...sql.threadBlobs.all(threadId, threadId), ...sql.changeBlobs.all(threadId)].map((r) => r.sha256)),
    ];
    for (const del of checkpointDeletes) del.run(threadId);
    sql.deleteChanges.run(threadId);
    sql.deleteEvents.run(threadId);
    sql.deleteRuns.run(threadId);
    sql.deleteThread.run(threadId, workspaceFolder);
    if (candidates.length === 0 || sql.unendedElsewhere.all(threadId).some(mayStillWrite)) return 0;
    let removed = 0;
    for (const hash of candidates) {
      if (sql.usedElsewhere.get(hash, threadId, threadId, threadId)) continue;
      removed += sql.deleteBlob.run(hash).changes;
    }
    return removed;
  });
}

type Kind = "missing" | "folder" | "other";

async function kindOf(path: string): Promise<Kind> {
  try {
    return (await lstat(path)).isDirectory() ? "folder" : "other";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw err;
  }
}

/**
 * Removes `<workspace>/.deerflow/threads/<id>` without following a link. The sandbox can write
 * in the workspace and may have planted links (trust/threadFolders.ts):
 * - `.deerflow` or `threads` a link: `<link>/<id>` is a folder somewhere else; left alone.
 * - `<id>` a link: `rm` lstat's the path it is given, so the link itself is removed, never its
 *   target; links inside the folder are removed as links too.
 * The workspace folder is the store's real path (the user's choice, resolved once).
 * A link swapped in between these checks and the `rm` is not caught (Node has no unlinkat); the
 * thread has no run at this point, so only another thread's sandbox could race it.
 */
export async function removeThreadFolder(workspaceFolder: string, threadId: string): Promise<DeletedThread["folder"]> {
  validateThreadId(threadId);
  const data = join(workspaceFolder, THREAD_DATA_DIR_NAME);
  const threads = join(data, "threads");
  for (const dir of [data, threads]) {
    const kind = await kindOf(dir);
    if (kind === "missing") return "absent";
    if (kind === "other") return "not_followed";
  }
  const own = join(threads, threadId);
  if ((await kindOf(own)) === "missing") return "absent";
  await rm(own, { recursive: true, force: true });
  return "removed";
}
