/**
 * The event journal's storage: one row per run event, `seq` thread-global and gap-free.
 *
 * Synchronous on purpose (both SQLite drivers are): the journal appends and fans out in one synchronous
 * step, so an in-process subscriber that replays then follows can never see a gap or a duplicate
 * at the seam (nothing can interleave between its read and its registration). A second backend
 * must keep that contract; test/unit/runs/storeConformance.ts pins it.
 */
import type { Db } from "./sqlite/types.js";
import type { RunEventName } from "../../protocol/events.js";

export interface StoredEvent {
  thread_id: string;
  seq: number;
  run_id: string;
  event: RunEventName;
  data: unknown;
  created_at: number;
}

export interface EventListOptions {
  /** Only events with seq > afterSeq (default 0: from the start). */
  afterSeq?: number;
  runId?: string;
  limit?: number;
}

export interface EventStore {
  /** Appends one event and returns it with its seq (MAX(seq)+1 inside the write transaction). */
  append(threadId: string, runId: string, event: RunEventName, data: unknown, now?: number): StoredEvent;
  list(threadId: string, options?: EventListOptions): StoredEvent[];
  lastSeq(threadId: string): number;
  /** The run's `end` event, if it was journaled. */
  endOf(runId: string): StoredEvent | undefined;
}

interface EventRow {
  thread_id: string;
  seq: number;
  run_id: string;
  event: RunEventName;
  data: string;
  created_at: number;
}

const toEvent = (r: EventRow): StoredEvent => ({ ...r, data: JSON.parse(r.data) as unknown });

export function createEventStore(db: Db, clock: () => number = Date.now): EventStore {
  // Conflict policy: (thread_id, seq) is the primary key and seq comes from MAX(seq)+1 in the same
  // statement, so a duplicate is impossible; if it ever happened, ABORT (never overwrite history).
  const insert = db.prepare<[string, string, string, string, string, number], EventRow>(
    `INSERT INTO events (thread_id, seq, run_id, event, data, created_at)
     VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE thread_id = ?), ?, ?, ?, ?)
     RETURNING thread_id, seq, run_id, event, data, created_at`,
  );
  const after = db.prepare<[string, number, number | null], EventRow>(
    "SELECT * FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  const afterForRun = db.prepare<[string, number, string, number | null], EventRow>(
    "SELECT * FROM events WHERE thread_id = ? AND seq > ? AND run_id = ? ORDER BY seq LIMIT ?",
  );
  const last = db.prepare<[string], { s: number | null }>("SELECT MAX(seq) AS s FROM events WHERE thread_id = ?");
  const end = db.prepare<[string], EventRow>("SELECT * FROM events WHERE run_id = ? AND event = 'end' ORDER BY seq LIMIT 1");
  return {
    append(threadId, runId, event, data, now = clock()) {
      const row = insert.get(threadId, threadId, runId, event, JSON.stringify(data ?? null), now);
      if (!row) throw new Error("event insert returned no row");
      return { ...row, data };
    },
    list(threadId, o = {}) {
      // No limit: SQLite's is a negative LIMIT, Postgres' a NULL one.
      const limit = o.limit ?? (db.dialect === "postgres" ? null : -1);
      const rows = o.runId ? afterForRun.all(threadId, o.afterSeq ?? 0, o.runId, limit) : after.all(threadId, o.afterSeq ?? 0, limit);
      return rows.map(toEvent);
    },
    lastSeq(threadId) {
      return last.get(threadId)?.s ?? 0;
    },
    endOf(runId) {
      const row = end.get(runId);
      return row ? toEvent(row) : undefined;
    },
  };
}
