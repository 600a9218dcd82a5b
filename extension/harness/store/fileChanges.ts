/**
 * The files each run changed through the agent's file tools (table `run_file_changes`, see
 * migrations/runFileChanges.ts), with the content they had before the run in the blob store.
 * Written by changes/tracker.ts while the run writes; read by `deerflow changes`, the panel's
 * `changes/*` requests and the run's `end` event; revert (changes/revert.ts) marks rows reverted.
 *
 * Conflict policy: the first write of a run to a path inserts its row (INSERT OR IGNORE, so the
 * "before" of a later write never replaces the first one); after-states are plain UPDATEs, the
 * latest observation wins.
 */
import type { Db } from "./sqlite/types.js";
import type { BlobStore } from "./blobs.js";
import type { ChangedFile, ChangeStatus } from "../../protocol/changes.js";

export type { ChangedFile, ChangeStatus } from "../../protocol/changes.js";

export interface ChangeKey {
  threadId: string;
  runId: string;
  /** The virtual path the tool wrote, normalized (`/mnt/user-data/...`). */
  path: string;
}

export interface FileChangeRecord {
  thread_id: string;
  run_id: string;
  path: string;
  before_sha256: string | null;
  after_state: "unknown" | "present" | "absent";
  after_sha256: string | null;
  protected_rule: string | null;
  reverted_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A file's state: its sha256, or null when it does not exist. */
export type FileState = string | null;

/** The mime type of a file's bytes kept for a revert (the blob store also holds viewed images). */
export const FILE_BLOB_MIME = "application/octet-stream";

export interface FileChangeStore {
  /**
   * The run's first write to the path is about to happen: keeps `before` (bytes, or null for
   * "absent") and inserts the row, in one transaction. False when the row exists already.
   */
  recordBefore(key: ChangeKey, before: Uint8Array | null, protectedRule: string | null, now?: number): boolean;
  has(key: ChangeKey): boolean;
  recordAfter(key: ChangeKey, after: FileState, now?: number): void;
  markReverted(key: ChangeKey, now?: number): void;
  get(key: ChangeKey): FileChangeRecord | undefined;
  /** The run's rows, by path. */
  listRun(runId: string): FileChangeRecord[];
}

/**
 * What the row says the run did, or undefined when it changed nothing in the end (written back to
 * the same content, or created and removed again). A row whose after-state was never recorded (the
 * process died in the middle of the write) counts as a change of the kind its before-state allows.
 */
export function changeStatus(r: Pick<FileChangeRecord, "before_sha256" | "after_state" | "after_sha256">): ChangeStatus | undefined {
  if (r.after_state === "unknown") return r.before_sha256 === null ? "added" : "modified";
  const after = r.after_state === "present" ? r.after_sha256 : null;
  if (after === r.before_sha256) return undefined;
  if (r.before_sha256 === null) return "added";
  return after === null ? "deleted" : "modified";
}

export function createFileChangeStore(db: Db, blobs: BlobStore): FileChangeStore {
  const insert = db.prepare<[string, string, string, string | null, string | null, number, number]>(
    `INSERT OR IGNORE INTO run_file_changes (thread_id, run_id, path, before_sha256, protected_rule, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const select = db.prepare<[string, string, string], FileChangeRecord>(
    "SELECT * FROM run_file_changes WHERE thread_id = ? AND run_id = ? AND path = ?",
  );
  const after = db.prepare<[string, string | null, number, string, string, string]>(
    "UPDATE run_file_changes SET after_state = ?, after_sha256 = ?, updated_at = ? WHERE thread_id = ? AND run_id = ? AND path = ?",
  );
  const reverted = db.prepare<[number, number, string, string, string]>(
    "UPDATE run_file_changes SET reverted_at = ?, updated_at = ? WHERE thread_id = ? AND run_id = ? AND path = ?",
  );
  const byRun = db.prepare<[string], FileChangeRecord>("SELECT * FROM run_file_changes WHERE run_id = ? ORDER BY path");
  return {
    recordBefore(key, before, protectedRule, now = Date.now()) {
      return db.transaction("immediate", () => {
        if (select.get(key.threadId, key.runId, key.path)) return false;
        const hash = before === null ? null : blobs.put(before, FILE_BLOB_MIME);
        return insert.run(key.threadId, key.runId, key.path, hash, protectedRule, now, now).changes > 0;
      });
    },
    has: (key) => select.get(key.threadId, key.runId, key.path) !== undefined,
    recordAfter(key, state, now = Date.now()) {
      after.run(state === null ? "absent" : "present", state, now, key.threadId, key.runId, key.path);
    },
    markReverted(key, now = Date.now()) {
      reverted.run(now, now, key.threadId, key.runId, key.path);
    },
    get: (key) => select.get(key.threadId, key.runId, key.path),
    listRun: (runId) => byRun.all(runId),
  };
}

/** The run's files that it changed in the end (rows with no net change left out). */
export function changedFiles(store: FileChangeStore, runId: string): ChangedFile[] {
  return store.listRun(runId).flatMap((r) => {
    const status = changeStatus(r);
    return status ? [{ path: r.path, status }] : [];
  });
}
