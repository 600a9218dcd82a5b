/**
 * Thread rows: the long-lived conversations of one workspace folder. A thread's LangGraph state
 * lives in the checkpointer under the same thread_id, its runs and journal beside it; deleting a
 * thread removes all of them at once, in deleteThread.ts (not here, so there is one way to do it).
 */
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { HarnessError } from "../errors.js";
import type { Db } from "./sqlite/types.js";

export interface ThreadRecord {
  threadId: string;
  workspaceFolder: string;
  title: string | null;
  createdAt: number;
  updatedAt: number;
  metadata: Record<string, unknown>;
}

interface ThreadRow {
  thread_id: string;
  workspace_folder: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  metadata: string;
}

/** The threads of one workspace folder (the database is per folder; rows of another folder are invisible). */
export interface ThreadStore {
  readonly workspaceFolder: string;
  /** `workspaceFolder`, when given, must be this store's folder (any path that resolves to it). */
  create(input?: { threadId?: string; title?: string | null; metadata?: Record<string, unknown>; workspaceFolder?: string }): ThreadRecord;
  get(threadId: string): ThreadRecord | undefined;
  /** newest activity first */
  list(options?: { limit?: number }): ThreadRecord[];
  rename(threadId: string, title: string | null): ThreadRecord;
  /** bumps updated_at (a run started or ended on the thread) */
  touch(threadId: string, at?: number): void;
  /**
   * Sets (or, with undefined, removes) one key of the thread's metadata. Used for what a caller
   * must know without reading the checkpoint, mirrored from it by the worker (pending approvals).
   */
  setMetadata(threadId: string, key: string, value: unknown): void;
}

function toRecord(row: ThreadRow): ThreadRecord {
  return {
    threadId: row.thread_id,
    workspaceFolder: row.workspace_folder,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

export function createThreadStore(db: Db, opts: { workspaceFolder: string; now?: () => number }): ThreadStore {
  // The few statements Postgres spells differently (the rest is SQL both speak).
  const pg = db.dialect === "postgres";
  const { workspaceFolder: folder, now = Date.now } = opts;
  // Conflict policy: a duplicate thread_id is an error (ABORT), never a silent overwrite.
  const insert = db.prepare(
    "INSERT INTO threads (thread_id, workspace_folder, title, created_at, updated_at, metadata) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const select = db.prepare<[string, string], ThreadRow>("SELECT * FROM threads WHERE thread_id = ? AND workspace_folder = ?");
  const byFolder = db.prepare<[string, number | null], ThreadRow>(
    "SELECT * FROM threads WHERE workspace_folder = ? ORDER BY updated_at DESC, thread_id LIMIT ?",
  );
  const setTitle = db.prepare("UPDATE threads SET title = ?, updated_at = ? WHERE thread_id = ? AND workspace_folder = ?");
  // max(): touch never moves updated_at backwards (two runs ending out of order).
  const bump = db.prepare(
    pg
      ? "UPDATE threads SET updated_at = GREATEST(updated_at, ?) WHERE thread_id = ? AND workspace_folder = ?"
      : "UPDATE threads SET updated_at = max(updated_at, ?) WHERE thread_id = ? AND workspace_folder = ?",
  );

  // Postgres spells JSON editing as jsonb operators on the TEXT column (postgres/migrations.ts).
  const metaSet = db.prepare(
    pg
      ? "UPDATE threads SET metadata = jsonb_set(metadata::jsonb, ARRAY[?::text], ?::jsonb)::text WHERE thread_id = ? AND workspace_folder = ?"
      : "UPDATE threads SET metadata = json_set(metadata, '$.' || ?, json(?)) WHERE thread_id = ? AND workspace_folder = ?",
  );
  const metaRemove = db.prepare(
    pg
      ? "UPDATE threads SET metadata = (metadata::jsonb - ?::text)::text WHERE thread_id = ? AND workspace_folder = ?"
      : "UPDATE threads SET metadata = json_remove(metadata, '$.' || ?) WHERE thread_id = ? AND workspace_folder = ?",
  );

  const must = (threadId: string): ThreadRecord => {
    const row = select.get(threadId, folder);
    if (!row) throw new HarnessError("thread_not_found", `Thread ${threadId} does not exist.`);
    return toRecord(row);
  };

  return {
    workspaceFolder: folder,
    create({ threadId = randomUUID(), title = null, metadata = {}, workspaceFolder } = {}) {
      if (workspaceFolder !== undefined && !samePath(workspaceFolder, folder)) {
        throw new HarnessError("workspace_mismatch", `Thread ${threadId} cannot be created for ${workspaceFolder}: this store belongs to ${folder}.`);
      }
      const t = now();
      try {
        insert.run(threadId, folder, title, t, t, JSON.stringify(metadata));
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
          throw new HarnessError("storage", `Thread ${threadId} already exists.`, { cause: err });
        }
        throw err;
      }
      return must(threadId);
    },
    get: (threadId) => {
      const row = select.get(threadId, folder);
      return row ? toRecord(row) : undefined;
    },
    list: (options = {}) => byFolder.all(folder, options.limit ?? (pg ? null : -1)).map(toRecord), // no limit: -1 / NULL
    rename(threadId, title) {
      if (setTitle.run(title, now(), threadId, folder).changes === 0) must(threadId);
      return must(threadId);
    },
    touch(threadId, at = now()) {
      if (bump.run(at, threadId, folder).changes === 0) must(threadId);
    },
    setMetadata(threadId, key, value) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new HarnessError("usage", `Bad metadata key ${key}.`);
      // Most runs leave the mirrored keys as they were: no write (and no WAL page) for those.
      const current = must(threadId).metadata[key];
      if (JSON.stringify(current) === JSON.stringify(value)) return;
      if (value === undefined) metaRemove.run(key, threadId, folder);
      else metaSet.run(key, JSON.stringify(value), threadId, folder);
    },
  };
}
