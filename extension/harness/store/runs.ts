/**
 * Run records and their leases. Every status change is a conditional UPDATE (`WHERE status IN
 * (...)`): a transition that lost a race changes nothing and says so, so two processes can never
 * both move one run. Admission's one-active-run-per-thread rule is the `runs_one_active` index.
 */
import type { Db } from "./sqlite/types.js";
import type { FinalRunStatus, RunStatus } from "../../protocol/events.js";
import { HarnessError } from "../errors.js";

export type MultitaskStrategy = "reject" | "interrupt";

export interface RunRecord {
  run_id: string;
  thread_id: string;
  status: RunStatus;
  multitask_strategy: MultitaskStrategy;
  idempotency_key: string | null;
  model: string;
  input: Record<string, unknown>;
  context: Record<string, unknown>;
  lease_owner: string | null;
  lease_expires_at: number | null;
  error: string | null;
  usage: Record<string, unknown> | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
}

export interface NewRun {
  run_id: string;
  thread_id: string;
  multitask_strategy: MultitaskStrategy;
  idempotency_key?: string | null;
  model: string;
  input: Record<string, unknown>;
  context: Record<string, unknown>;
}

export const ACTIVE_STATUSES: readonly RunStatus[] = ["pending", "running"];
export const FINAL_STATUSES: readonly FinalRunStatus[] = ["success", "error", "timeout", "interrupted"];

export interface RunStore {
  /** Inserts a `pending` run; throws HarnessError("thread_busy") when the thread has an active run. */
  insertPending(run: NewRun, now?: number): RunRecord;
  get(runId: string): RunRecord | undefined;
  byIdempotencyKey(threadId: string, key: string): RunRecord | undefined;
  /** Newest first; ties broken by run_id for a stable order. */
  listByThread(threadId: string): RunRecord[];
  active(threadId: string): RunRecord | undefined;
  /** Every pending or running run of the database (recovery sweeps). */
  listActive(): RunRecord[];
  /** `pending → running` with a lease, only if still pending. */
  start(runId: string, owner: string, ttlMs: number, now?: number): boolean;
  /** Extends the lease, only while `owner` holds it and the run is running. */
  renewLease(runId: string, owner: string, ttlMs: number, now?: number): boolean;
  /** Conditional transition to a final status; false if the run was not in one of `from`. */
  finish(runId: string, from: readonly RunStatus[], to: FinalRunStatus, patch?: { error?: string | null; usage?: Record<string, unknown> | null }, now?: number): boolean;
  /** Records that the run's `end` event is journaled: the run is over for every observer. */
  markEnded(runId: string, now?: number): void;
  transaction<T>(fn: () => T): T;
}

interface RunRow extends Omit<RunRecord, "input" | "context" | "usage"> {
  input: string;
  context: string;
  usage: string | null;
}

const toRecord = (r: RunRow): RunRecord => ({
  ...r,
  input: JSON.parse(r.input) as Record<string, unknown>,
  context: JSON.parse(r.context) as Record<string, unknown>,
  usage: r.usage === null ? null : (JSON.parse(r.usage) as Record<string, unknown>),
});

const inList = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(",");

export function createRunStore(db: Db, clock: () => number = Date.now): RunStore {
  // Conflict policy: ABORT. A second active run violates runs_one_active (→ thread_busy); a reused
  // idempotency key violates runs_idempotency (callers look the key up first, in a transaction).
  const insert = db.prepare(
    `INSERT INTO runs (run_id, thread_id, status, multitask_strategy, idempotency_key, model, input, context, created_at, updated_at)
     VALUES (@run_id, @thread_id, 'pending', @multitask_strategy, @idempotency_key, @model, @input, @context, @now, @now)`,
  );
  const get = db.prepare<[string], RunRow>("SELECT * FROM runs WHERE run_id = ?");
  const byKey = db.prepare<[string, string], RunRow>("SELECT * FROM runs WHERE thread_id = ? AND idempotency_key = ?");
  const byThread = db.prepare<[string], RunRow>("SELECT * FROM runs WHERE thread_id = ? ORDER BY created_at DESC, run_id DESC");
  const active = db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE thread_id = ? AND status IN (${inList(ACTIVE_STATUSES)})`);
  const allActive = db.prepare<[], RunRow>(`SELECT * FROM runs WHERE status IN (${inList(ACTIVE_STATUSES)}) ORDER BY created_at`);
  const start = db.prepare(
    "UPDATE runs SET status = 'running', lease_owner = ?, lease_expires_at = ?, started_at = ?, updated_at = ? WHERE run_id = ? AND status = 'pending'",
  );
  const renew = db.prepare(
    "UPDATE runs SET lease_expires_at = ?, updated_at = ? WHERE run_id = ? AND lease_owner = ? AND status = 'running'",
  );
  const ended = db.prepare("UPDATE runs SET ended_at = ?, updated_at = ? WHERE run_id = ? AND ended_at IS NULL");

  return {
    insertPending(run, now = clock()) {
      try {
        insert.run({
          ...run,
          idempotency_key: run.idempotency_key ?? null,
          input: JSON.stringify(run.input),
          context: JSON.stringify(run.context),
          now,
        });
      } catch (err) {
        if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") {
          const busy = active.get(run.thread_id);
          throw new HarnessError(
            "thread_busy",
            busy
              ? `Thread ${run.thread_id} is busy: run ${busy.run_id} is ${busy.status}. Wait for it to finish, cancel it, or start with --multitask interrupt.`
              : `Run ${run.run_id} conflicts with an existing run on thread ${run.thread_id}.`,
            { cause: err },
          );
        }
        throw err;
      }
      return toRecord(get.get(run.run_id)!);
    },
    get: (id) => {
      const r = get.get(id);
      return r ? toRecord(r) : undefined;
    },
    byIdempotencyKey: (t, k) => {
      const r = byKey.get(t, k);
      return r ? toRecord(r) : undefined;
    },
    listByThread: (t) => byThread.all(t).map(toRecord),
    active: (t) => {
      const r = active.get(t);
      return r ? toRecord(r) : undefined;
    },
    listActive: () => allActive.all().map(toRecord),
    start: (id, owner, ttlMs, now = clock()) => start.run(owner, now + ttlMs, now, now, id).changes === 1,
    renewLease: (id, owner, ttlMs, now = clock()) => renew.run(now + ttlMs, now, id, owner).changes === 1,
    finish(id, from, to, patch = {}, now = clock()) {
      const sql = `UPDATE runs SET status = ?, error = COALESCE(?, error), usage = COALESCE(?, usage), lease_expires_at = NULL, updated_at = ?
                   WHERE run_id = ? AND status IN (${inList(from)})`;
      const usage = patch.usage ? JSON.stringify(patch.usage) : null;
      return db.prepare(sql).run(to, patch.error ?? null, usage, now, id).changes === 1;
    },
    markEnded(id, now = clock()) {
      ended.run(now, now, id);
    },
    transaction: (fn) => db.transaction("immediate", fn),
  };
}
