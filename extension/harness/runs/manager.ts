/**
 * The run manager (DeerFlow RunManager): atomic admission, multitask strategy, cancel with typed
 * outcomes, and recovery of runs whose owner died.
 *
 * Everything it decides is recorded in SQLite first, so another process (a second CLI, the panel's
 * harness after a reload) sees the same truth. A run is never left `running` without a live owner:
 * recovery marks it `interrupted` at once when its owner process is provably gone, and at the
 * latest when its lease expires.
 */
import { watch } from "node:fs";
import { dirname } from "node:path";
import type { RunRecord, RunStore, MultitaskStrategy, NewRun } from "../store/runs.js";
import { ACTIVE_STATUSES, FINAL_STATUSES } from "../store/runs.js";
import type { FinalRunStatus } from "../../protocol/events.js";
import type { Journal } from "./journal.js";
import type { FileChangeStore } from "../store/fileChanges.js";
import { isOwnerGone } from "./owner.js";
import { RunAbort } from "./runTurn.js";
import { endRun } from "./ending.js";

export const DEFAULT_LEASE_TTL_MS = 30_000;

export type CancelOutcome = "cancelled" | "already_finished" | "not_found";

export interface AdmitRequest extends Omit<NewRun, "multitask_strategy"> {
  multitask_strategy?: MultitaskStrategy;
}

export interface Admission {
  run: RunRecord;
  /** The idempotency key matched an earlier run: nothing new was admitted. */
  existing: boolean;
  /** The run this admission interrupted (strategy "interrupt"); the worker waits for its end. */
  interrupted?: string;
}

export interface RunManagerOptions {
  runs: RunStore;
  journal: Journal;
  /** The files runs change through the file tools (changes/tracker.ts); each `end` lists them. */
  changes?: FileChangeStore;
  /** This process's owner id (owner.ts). */
  owner: string;
  leaseTtlMs?: number;
  /**
   * DeerFlow's `run_ownership.grace_seconds`: how long past its lease's expiry another process's
   * run is still left alone (the clock-skew budget between workers). A provably gone owner (same
   * host, dead pid) is settled at once.
   */
  graceMs?: number;
  /** The database file: its directory is watched to learn that another process wrote. */
  dbFile?: string;
  /** Postgres: told of every event any process journals (LISTEN/NOTIFY), instead of the file watch. */
  watchEvents?: (listener: (threadId: string) => void) => () => void;
  clock?: () => number;
}

export class RunManager {
  readonly runs: RunStore;
  readonly journal: Journal;
  readonly changes: FileChangeStore | undefined;
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly graceMs: number;
  private readonly clock: () => number;
  private readonly dbFile: string | undefined;
  private readonly watchEvents: RunManagerOptions["watchEvents"];
  /** Runs executing in this process, for an immediate local cancel. */
  private readonly local = new Map<string, AbortController>();
  /** Runs executing in this process under any manager (one owner id per process): see recover(). */
  private static readonly executing = new Set<string>();

  constructor(o: RunManagerOptions) {
    this.runs = o.runs;
    this.journal = o.journal;
    this.changes = o.changes;
    this.owner = o.owner;
    this.leaseTtlMs = o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.graceMs = o.graceMs ?? 0;
    this.clock = o.clock ?? Date.now;
    this.dbFile = o.dbFile;
    this.watchEvents = o.watchEvents;
  }

  /**
   * Mark dead runs `interrupted` and journal their `end`. A running run is dead when its owner is
   * provably gone or its lease expired; a pending one when it was never started within a lease
   * (its admitting process died before its worker took it). Runs of this process are left alone.
   */
  recover(threadId?: string): RunRecord[] {
    const now = this.clock();
    const recovered: RunRecord[] = [];
    for (const run of this.runs.listActive()) {
      if (threadId && run.thread_id !== threadId) continue;
      if (this.local.has(run.run_id)) continue;
      let reason: string | undefined;
      if (run.status === "running" && run.lease_owner && run.lease_owner !== this.owner && isOwnerGone(run.lease_owner)) {
        reason = "The harness process running this run stopped before it finished.";
      } else if (run.status === "running" && run.lease_owner === this.owner && !RunManager.executing.has(run.run_id)) {
        // Ours, yet not executing here (checked above): its worker gave up, e.g. when the database
        // went away under it and its end could not be written. Nobody else will end it.
        reason = "The run stopped when its worker lost the database.";
      } else if (run.status === "running" && run.lease_expires_at !== null && run.lease_expires_at + this.graceMs < now && run.lease_owner !== this.owner) {
        reason = "The run's lease expired: its harness process stopped renewing it.";
      } else if (run.status === "pending" && run.created_at + this.leaseTtlMs < now) {
        reason = "The run was admitted but never started.";
      }
      if (reason && this.finishAndEnd(run, ACTIVE_STATUSES, "interrupted", reason)) recovered.push(run);
    }
    return recovered;
  }

  /** Atomic admission: idempotency key, then the thread's multitask strategy, then `pending`. */
  admit(req: AdmitRequest): Admission {
    this.recover(req.thread_id);
    return this.runs.transaction(() => {
      if (req.idempotency_key) {
        const prior = this.runs.byIdempotencyKey(req.thread_id, req.idempotency_key);
        if (prior) return { run: prior, existing: true };
      }
      const strategy = req.multitask_strategy ?? "reject";
      let interrupted: string | undefined;
      const active = this.runs.active(req.thread_id);
      if (active && strategy === "interrupt") {
        if (this.runs.finish(active.run_id, ACTIVE_STATUSES, "interrupted", { error: "Interrupted by a newer run on the thread (multitask strategy \"interrupt\")." })) {
          interrupted = active.run_id;
          this.local.get(active.run_id)?.abort(new RunAbort("interrupted", "Interrupted by a newer run on the thread."));
        }
      }
      // With "reject" and an active run, the unique index refuses the insert with thread_busy.
      const run = this.runs.insertPending({ ...req, multitask_strategy: strategy });
      return { run, existing: false, ...(interrupted ? { interrupted } : {}) };
    });
  }

  /** Idempotent cancel with a typed outcome. A local run is aborted at once; a run of another
   * process notices at its next lease renewal (about a second) and stops there. */
  cancel(runId: string): { outcome: CancelOutcome; run?: RunRecord } {
    const run = this.runs.get(runId);
    if (!run) return { outcome: "not_found" };
    if (run.status === "interrupted") return { outcome: "cancelled", run };
    if ((FINAL_STATUSES as readonly string[]).includes(run.status)) return { outcome: "already_finished", run };
    const changed = this.runs.finish(runId, ACTIVE_STATUSES, "interrupted", { error: "Cancelled by the user." });
    const now = this.runs.get(runId)!;
    if (!changed) return { outcome: now.status === "interrupted" ? "cancelled" : "already_finished", run: now };
    const local = this.local.get(runId);
    if (local) {
      local.abort(new RunAbort("interrupted", "Cancelled by the user."));
    } else if (run.status === "pending" || !run.lease_owner || isOwnerGone(run.lease_owner)) {
      // No live worker will journal this run's end: do it here.
      this.journalEnd(now, "interrupted", "Cancelled by the user.");
    }
    return { outcome: "cancelled", run: now };
  }

  /**
   * Keeps a local run's lease (every lease/3, at most every second): `lost` is called once when
   * the run was ended by someone else (a cancel, a sweep) or this process could not confirm the
   * lease before it expired (the database was unreachable that long; DeerFlow's ownership fence).
   * A renewal that throws inside the lease is retried on the next tick: an outage never ends the
   * process. Returns the stop function.
   */
  startHeartbeat(runId: string, lost: (reason: string) => void): () => void {
    let deadline = this.clock() + this.leaseTtlMs;
    let done = false;
    const stop = (): void => {
      done = true;
      clearInterval(timer);
    };
    const timer = setInterval(() => {
      if (done) return;
      try {
        if (this.runs.renewLease(runId, this.owner, this.leaseTtlMs)) {
          deadline = this.clock() + this.leaseTtlMs;
          return;
        }
        let why = "Cancelled.";
        try {
          why = this.runs.get(runId)?.error ?? why;
        } catch {
          /* the reason is a nicety */
        }
        stop();
        lost(why);
      } catch {
        if (this.clock() < deadline) return;
        stop();
        lost("The run stopped: this worker could not reach the database to keep its lease.");
      }
    }, Math.max(200, Math.min(1000, Math.floor(this.leaseTtlMs / 3))));
    return stop;
  }

  /** Registers a run executing in this process (the worker calls this). */
  registerLocal(runId: string, controller: AbortController): () => void {
    this.local.set(runId, controller);
    RunManager.executing.add(runId);
    return () => {
      this.local.delete(runId);
      RunManager.executing.delete(runId);
    };
  }

  /**
   * Resolves when the run's `end` is journaled. Woken by the in-process journal and by writes of
   * other processes (a watch on the database directory); a dead owner's run is recovered on the
   * way, so this never waits on a corpse longer than its lease.
   */
  async waitForEnd(run: RunRecord, opts: { signal?: AbortSignal; onWake?: () => void } = {}): Promise<RunRecord> {
    const { signal, onWake } = opts;
    const check = (): RunRecord | undefined => {
      const cur = this.runs.get(run.run_id);
      if (!cur || cur.ended_at !== null) return cur ?? run;
      if (!this.local.has(run.run_id) && cur.lease_owner && isOwnerGone(cur.lease_owner)) {
        this.finishAndEnd(cur, ["running", "interrupted"], "interrupted", "The harness process running this run stopped before it finished.");
        return this.runs.get(run.run_id);
      }
      if (cur.lease_expires_at !== null && cur.lease_expires_at + this.graceMs < this.clock() && !this.local.has(run.run_id)) {
        this.finishAndEnd(cur, ["running", "interrupted"], "interrupted", "The run's lease expired: its harness process stopped renewing it.");
        return this.runs.get(run.run_id);
      }
      return undefined;
    };
    onWake?.();
    const done = check();
    if (done) {
      onWake?.();
      return done;
    }
    return new Promise<RunRecord>((resolve, reject) => {
      const cleanups: Array<() => void> = [];
      const finish = (r: RunRecord) => {
        for (const c of cleanups) c();
        onWake?.();
        resolve(r);
      };
      const recheck = () => {
        onWake?.();
        const r = check();
        if (r) finish(r);
      };
      cleanups.push(this.journal.subscribe(run.thread_id, this.journal.events.lastSeq(run.thread_id), (e) => {
        if (e.run_id === run.run_id && e.event === "end") recheck();
      }));
      if (this.dbFile) {
        const w = watch(dirname(this.dbFile), () => recheck());
        cleanups.push(() => w.close());
      }
      if (this.watchEvents) cleanups.push(this.watchEvents((threadId) => threadId === run.thread_id && recheck()));
      // The lease bounds the wait even if no write ever wakes us (the owner died silently).
      const t = setInterval(recheck, Math.max(250, Math.min(this.leaseTtlMs / 3, 2000)));
      cleanups.push(() => clearInterval(t));
      if (signal) {
        const onAbort = () => {
          for (const c of cleanups) c();
          reject(signal.reason as Error);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener("abort", onAbort));
      }
    });
  }

  /** Move a run to a final status and record its end (ending.ts: receipt, `end`, in one transaction). */
  finishAndEnd(run: RunRecord, from: readonly string[], status: FinalRunStatus, error: string): boolean {
    return endRun(this, { runId: run.run_id, from: from as RunRecord["status"][], status, error })?.recorded === true;
  }

  /** Record the end of a run already in a final status (once). Kept for callers of the old seam. */
  journalEnd(run: RunRecord, status: FinalRunStatus, error?: string | null, usage?: Record<string, unknown> | null, extra: Record<string, unknown> = {}): void {
    endRun(this, { runId: run.run_id, from: ACTIVE_STATUSES, status, error: error ?? null, usage: usage ?? null, extra });
  }
}
