/**
 * The durable memory update queue (DeerFlow's debounced `MemoryUpdateQueue`, on SQLite so a CLI
 * that exits or a harness that restarts loses nothing): `<dataDir>/memory/memory.db`.
 *
 * Conflict policy: an entry's `key` is unique; enqueueing a thread's conversation again replaces
 * its waiting entry (the newer one holds everything the older one did, DeerFlow's per-thread
 * de-duplication) and pushes its debounce back; attempts start over, since it is new content.
 * Only the holder of the `memory_processor` lease takes entries out (service.ts).
 *
 * Where it lives: `<dataDir>/memory/memory.db` (SQLite), or with a Postgres URL (`deerflow serve
 * --database`) the memory tables of that database (store/postgres/memoryMigrations.ts), through
 * the same synchronous Db seam as every other store: the statements below are written once, in
 * the SQL both speak; only the processor lease's liveness differs (see `acquire`).
 *
 * The watermark (`memory_watermarks`, DeerFlow's per-thread watermark made durable): the keys of
 * a thread's messages that were already extracted. An entry holds the thread's conversation so
 * far; what is sent to the model is only the part after the watermark (service.ts), so nothing is
 * re-sent on every run and a fact the user deleted is not re-learnt from the same old turns. A
 * set of keys rather than one position: a compaction flush carries an older slice, and a
 * summarized thread no longer holds its first messages; a key is missing only when it fell out of
 * the bounded list, and then the message is sent again (over-extraction, never loss).
 */
import { join } from "node:path";
import { existsSync, mkdirSync } from "node:fs";
import { migrate, openDatabase } from "../store/db.js";
import type { Db } from "../store/sqlite/types.js";
import { memoryMigrations } from "../store/migrations/memoryQueue.js";
import { MEMORY_LEDGER, postgresMemoryMigrations } from "../store/postgres/memoryMigrations.js";
import { migratePostgres } from "../store/postgres/migrate.js";
import { isPostgresUrl } from "../store/postgres/url.js";
import { memoryDir } from "./store.js";

export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
  /** Which message of the thread it is (conversation.ts messageKey), for the watermark; absent in rows from before it. */
  key?: string;
}

/** How many extracted message keys a thread's watermark keeps (newest): well beyond the 40 messages an entry holds. */
export const WATERMARK_KEYS = 400;

export interface QueueEntry {
  id: number;
  key: string;
  thread_id: string;
  /** The workspace folder (real path) the thread belongs to: where what is learnt is scoped. */
  workspace: string;
  kind: "conversation" | "flush";
  model: string;
  base_url: string | null;
  messages: ConversationMessage[];
  attempts: number;
  last_error: string | null;
  due_at: number;
  /** Changes whenever the entry is re-queued: complete/fail act only on the version they read. */
  updated_at: number;
}

interface Row extends Omit<QueueEntry, "messages"> {
  messages: string;
}

export interface EnqueueRequest {
  threadId: string;
  workspace: string;
  kind: "conversation" | "flush";
  /** The model of the run whose conversation it is (the extraction's model unless `memory.model_name`). */
  model: string;
  /** An ad-hoc endpoint's URL (CLI `--base-url`): it has no configured name to be found by. */
  baseURL?: string;
  messages: ConversationMessage[];
  dueAt: number;
}

export function memoryDbFile(dataDir: string): string {
  return join(memoryDir(dataDir), "memory.db");
}

/** Opens the memory tables of a Postgres database (`postgres://…`), migrated. */
export function openMemoryDatabase(url: string): Db {
  return openDatabase(url, { migrations: postgresMemoryMigrations, ledger: MEMORY_LEDGER });
}

/**
 * A deleted thread's rows in the user's memory queue (store/deleteThread.ts): its queued
 * conversations and its watermark, in the data directory's memory database (nothing to do when it
 * was never created) and, when the workspace store is on Postgres, in that database's memory
 * tables (where `deerflow serve --database` keeps them). Returns the rows removed.
 */
export function deleteThreadMemory(store: { dataDir: string; db: Db }, threadId: string): number {
  let removed = 0;
  if (store.db.dialect === "postgres") removed += MemoryQueue.attach(store.db).deleteThread(threadId);
  if (!existsSync(memoryDbFile(store.dataDir))) return removed;
  const queue = MemoryQueue.open(store.dataDir);
  try {
    return removed + queue.deleteThread(threadId);
  } finally {
    queue.close();
  }
}

export class MemoryQueue {
  private constructor(
    readonly db: Db,
    /** Whether close() closes the connection: not when it is borrowed (attach). */
    private readonly owned: boolean,
  ) {}

  /** The data directory's queue, or with `database` (a Postgres URL) that database's. */
  static open(dataDir: string, database?: string): MemoryQueue {
    if (database !== undefined && isPostgresUrl(database)) return new MemoryQueue(openMemoryDatabase(database), true);
    mkdirSync(memoryDir(dataDir), { recursive: true, mode: 0o700 });
    return new MemoryQueue(openDatabase(memoryDbFile(dataDir), { migrations: memoryMigrations }), true);
  }

  /** The queue on a connection another owner opened and closes (the memory document's, a workspace store's on Postgres); its schema brought up to date. */
  static attach(db: Db): MemoryQueue {
    if (db.dialect === "postgres") migratePostgres(db, postgresMemoryMigrations, { ledger: MEMORY_LEDGER });
    else migrate(db, memoryMigrations);
    return new MemoryQueue(db, false);
  }

  enqueue(req: EnqueueRequest, now = Date.now()): void {
    // A flush is a slice of history that is about to leave the model's view: never merged.
    const key = req.kind === "conversation" ? `conversation:${req.threadId}` : `flush:${req.threadId}:${now}:${Math.random().toString(36).slice(2)}`;
    this.db
      .prepare(
        `INSERT INTO memory_queue (key, thread_id, workspace, kind, model, base_url, messages, attempts, last_error, due_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET workspace = excluded.workspace, model = excluded.model, base_url = excluded.base_url, messages = excluded.messages,
           attempts = 0, last_error = NULL, due_at = excluded.due_at, updated_at = excluded.updated_at`,
      )
      .run(key, req.threadId, req.workspace, req.kind, req.model, req.baseURL ?? null, JSON.stringify(req.messages), req.dueAt, now, now);
  }

  /**
   * Entries due by `now` (all of them when `now` is undefined), below the attempt bound: flushes
   * first, then oldest first. A flush is an older slice of its thread than the thread's
   * conversation entry, so a thread's turns are extracted in order, and with the watermark the
   * conversation then sends only what comes after the flushed part.
   */
  due(maxAttempts: number, now?: number): QueueEntry[] {
    const order = "ORDER BY CASE kind WHEN 'flush' THEN 0 ELSE 1 END, id";
    const rows =
      now === undefined
        ? this.db.prepare<[number], Row>(`SELECT * FROM memory_queue WHERE attempts < ? ${order}`).all(maxAttempts)
        : this.db.prepare<[number, number], Row>(`SELECT * FROM memory_queue WHERE attempts < ? AND due_at <= ? ${order}`).all(maxAttempts, now);
    return rows.map((r) => ({ ...r, messages: JSON.parse(r.messages) as ConversationMessage[] }));
  }

  /** The earliest time an entry becomes due (for the server's timer); undefined when none waits. */
  nextDue(maxAttempts: number): number | undefined {
    const row = this.db.prepare<[number], { t: number | null }>("SELECT MIN(due_at) AS t FROM memory_queue WHERE attempts < ?").get(maxAttempts);
    return row?.t ?? undefined;
  }

  count(): number {
    return this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM memory_queue").get()?.n ?? 0;
  }

  /**
   * Done with an entry: removed, unless it was re-queued since it was read (a newer conversation
   * of the same thread replaced it; that one still waits).
   */
  complete(entry: QueueEntry): void {
    this.db.prepare("DELETE FROM memory_queue WHERE id = ? AND updated_at = ?").run(entry.id, entry.updated_at);
  }

  /** A failed extraction: counted, and due again after `retryAt`. Past the bound it stays, inert, until cleared. */
  fail(entry: QueueEntry, error: string, retryAt: number): void {
    // updated_at is left alone: a re-queue (new content) is the only thing that changes it.
    this.db.prepare("UPDATE memory_queue SET attempts = attempts + 1, last_error = ?, due_at = ? WHERE id = ? AND updated_at = ?").run(error.slice(0, 500), retryAt, entry.id, entry.updated_at);
  }

  /** The entry is still queued (in any version): false once `clear` dropped it. */
  holds(entry: QueueEntry): boolean {
    return this.db.prepare<[number], { id: number }>("SELECT id FROM memory_queue WHERE id = ?").get(entry.id) !== undefined;
  }

  /**
   * Forget everything waiting (memory clear). The dropped entries' messages join their threads'
   * watermarks as if extracted: "forget" must not mean "send those turns again at the thread's
   * next run". Watermarks stay for the same reason.
   */
  clear(now = Date.now()): number {
    return this.db.transaction("immediate", () => {
      for (const entry of this.due(Number.MAX_SAFE_INTEGER)) this.advanceWatermark(entry, now);
      return this.db.prepare("DELETE FROM memory_queue").run().changes;
    });
  }

  /** A thread deleted (store/deleteThread.ts): its queued conversations and its watermark go. Returns the rows removed. */
  deleteThread(threadId: string): number {
    return this.db.transaction("immediate", () => {
      const queued = this.db.prepare("DELETE FROM memory_queue WHERE thread_id = ?").run(threadId).changes;
      return queued + this.db.prepare("DELETE FROM memory_watermarks WHERE thread_id = ?").run(threadId).changes;
    });
  }

  /** The keys of the thread's messages already extracted. */
  extracted(threadId: string): Set<string> {
    const row = this.db.prepare<[string], { extracted: string }>("SELECT extracted FROM memory_watermarks WHERE thread_id = ?").get(threadId);
    return new Set(row ? (JSON.parse(row.extracted) as string[]) : []);
  }

  /**
   * After a successful extraction of `entry`: its messages' keys join the thread's watermark —
   * unless the entry is gone meanwhile (a clear, the thread deleted), which must leave no row
   * behind. One transaction: a delete in another process lands before or after, never between.
   */
  advanceWatermark(entry: QueueEntry, now = Date.now()): void {
    const keys = entry.messages.map((m) => m.key).filter((k): k is string => typeof k === "string");
    if (keys.length === 0) return;
    this.db.transaction("immediate", () => {
      if (!this.holds(entry)) return;
      const merged = [...this.extracted(entry.thread_id)].filter((k) => !keys.includes(k)).concat(keys).slice(-WATERMARK_KEYS);
      this.db
        .prepare("INSERT INTO memory_watermarks (thread_id, extracted, updated_at) VALUES (?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET extracted = excluded.extracted, updated_at = excluded.updated_at")
        .run(entry.thread_id, JSON.stringify(merged), now);
    });
  }

  /**
   * The processor lease: only its holder reads-modifies-writes the memory document. Taken when
   * free, expired, already ours, or held by a process that no longer exists; held for `ttlMs`.
   * Owners are `<pid>:<uuid>`. One IMMEDIATE transaction (on Postgres the database-wide write
   * lock, store/postgres/syncPg.ts): of two processes asking at once, exactly one gets it.
   *
   * "No longer exists": on SQLite, a process of this machine that is gone (a CLI killed
   * mid-extraction: the data directory is this user's, on this machine). On Postgres the holder
   * may run on another machine, so its pid says nothing here: the row records the holder's
   * connection (`pg_backend_pid()`), and a holder whose connection is gone from pg_stat_activity
   * (its process was killed, the server dropped it) is not waited for. A holder whose driver
   * reconnected meanwhile looks gone too: it loses the lease, and its next `acquire` (the renewal
   * before every entry, and the check before its write, service.ts) says so.
   */
  acquire(owner: string, ttlMs: number, now = Date.now()): boolean {
    return this.db.transaction("immediate", () => {
      const row = this.holder();
      if (row && row.owner !== owner && row.expires_at > now) return false;
      if (this.db.dialect === "postgres") {
        this.db
          .prepare(
            `INSERT INTO memory_processor (id, owner, expires_at, backend_pid) VALUES (1, ?, ?, pg_backend_pid())
             ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, backend_pid = excluded.backend_pid`,
          )
          .run(owner, now + ttlMs);
      } else {
        this.db.prepare("INSERT INTO memory_processor (id, owner, expires_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at").run(owner, now + ttlMs);
      }
      return true;
    });
  }

  /** Who holds the processor lease, and until when; undefined when nobody, or a process that no longer exists. */
  holder(): { owner: string; expires_at: number } | undefined {
    if (this.db.dialect === "postgres") {
      return this.db
        .prepare<[], { owner: string; expires_at: number }>(
          "SELECT owner, expires_at FROM memory_processor p WHERE id = 1 AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.backend_pid)",
        )
        .get();
    }
    const row = this.db.prepare<[], { owner: string; expires_at: number }>("SELECT owner, expires_at FROM memory_processor WHERE id = 1").get();
    return row && processAlive(row.owner) ? row : undefined;
  }

  release(owner: string): void {
    this.db.prepare("DELETE FROM memory_processor WHERE id = 1 AND owner = ?").run(owner);
  }

  close(): void {
    if (this.owned) this.db.close();
  }
}

/** Whether the process named by a lease owner (`<pid>:…`) still runs on this machine. */
function processAlive(owner: string): boolean {
  const pid = Number(owner.split(":")[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
