/**
 * The durable memory update queue (DeerFlow's debounced `MemoryUpdateQueue`, on SQLite so a CLI
 * that exits or a harness that restarts loses nothing): `<dataDir>/memory/memory.db`.
 *
 * Conflict policy: an entry's `key` is unique; enqueueing a thread's conversation again replaces
 * its waiting entry (the newer one holds everything the older one did, DeerFlow's per-thread
 * de-duplication) and pushes its debounce back; attempts start over, since it is new content.
 * Only the holder of the `memory_processor` lease takes entries out (processor.ts).
 */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { openDatabase } from "../store/db.js";
import type { Db } from "../store/sqlite/types.js";
import { memoryMigrations } from "../store/migrations/memoryQueue.js";
import { memoryDir } from "./store.js";

export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
}

export interface QueueEntry {
  id: number;
  key: string;
  thread_id: string;
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
  kind: "conversation" | "flush";
  /** The model of the run whose conversation it is (the extraction's model unless `memory.model_name`). */
  model: string;
  /** An ad-hoc endpoint's URL (CLI `--base-url`): it has no configured name to be found by. */
  baseURL?: string;
  messages: ConversationMessage[];
  dueAt: number;
}

export class MemoryQueue {
  private constructor(readonly db: Db) {}

  static open(dataDir: string): MemoryQueue {
    mkdirSync(memoryDir(dataDir), { recursive: true, mode: 0o700 });
    return new MemoryQueue(openDatabase(join(memoryDir(dataDir), "memory.db"), { migrations: memoryMigrations }));
  }

  enqueue(req: EnqueueRequest, now = Date.now()): void {
    // A flush is a slice of history that is about to leave the model's view: never merged.
    const key = req.kind === "conversation" ? `conversation:${req.threadId}` : `flush:${req.threadId}:${now}:${Math.random().toString(36).slice(2)}`;
    this.db
      .prepare(
        `INSERT INTO memory_queue (key, thread_id, kind, model, base_url, messages, attempts, last_error, due_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET model = excluded.model, base_url = excluded.base_url, messages = excluded.messages,
           attempts = 0, last_error = NULL, due_at = excluded.due_at, updated_at = excluded.updated_at`,
      )
      .run(key, req.threadId, req.kind, req.model, req.baseURL ?? null, JSON.stringify(req.messages), req.dueAt, now, now);
  }

  /** Entries due by `now` (all of them when `now` is undefined), oldest first, below the attempt bound. */
  due(maxAttempts: number, now?: number): QueueEntry[] {
    const rows =
      now === undefined
        ? this.db.prepare<[number], Row>("SELECT * FROM memory_queue WHERE attempts < ? ORDER BY id").all(maxAttempts)
        : this.db.prepare<[number, number], Row>("SELECT * FROM memory_queue WHERE attempts < ? AND due_at <= ? ORDER BY id").all(maxAttempts, now);
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

  clear(): number {
    return this.db.prepare("DELETE FROM memory_queue").run().changes;
  }

  /**
   * The processor lease: only its holder reads-modifies-writes memory.json. Taken when free,
   * expired, already ours, or held by a process of this machine that no longer exists (a CLI
   * killed mid-extraction: the data directory is this user's, on this machine); held for `ttlMs`.
   * Owners are `<pid>:<uuid>`.
   */
  acquire(owner: string, ttlMs: number, now = Date.now()): boolean {
    return this.db.transaction("immediate", () => {
      const row = this.holder();
      if (row && row.owner !== owner && row.expires_at > now) return false;
      this.db.prepare("INSERT INTO memory_processor (id, owner, expires_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at").run(owner, now + ttlMs);
      return true;
    });
  }

  /** Who holds the processor lease, and until when; undefined when nobody, or a process that no longer exists. */
  holder(): { owner: string; expires_at: number } | undefined {
    const row = this.db.prepare<[], { owner: string; expires_at: number }>("SELECT owner, expires_at FROM memory_processor WHERE id = 1").get();
    return row && processAlive(row.owner) ? row : undefined;
  }

  release(owner: string): void {
    this.db.prepare("DELETE FROM memory_processor WHERE id = 1 AND owner = ?").run(owner);
  }

  close(): void {
    this.db.close();
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
