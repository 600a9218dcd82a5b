/**
 * The journal: every stream item of a run becomes an event with a thread-global, gap-free `seq`,
 * stored in SQLite BEFORE any subscriber sees it; then it is fanned out in-process.
 *
 * `subscribe(thread, afterSeq, fn)` replays stored events after `afterSeq` and then follows live.
 * Both halves run in one synchronous step (better-sqlite3 is synchronous and `append` stores and
 * fans out synchronously), so no event can land between the replay and the registration: no gap,
 * no duplicate at the seam.
 *
 * Fan-out happens only after COMMIT: an event appended inside a transaction is held until the
 * outermost transaction ends (`transaction()` here, or — for one opened elsewhere — a microtask,
 * which runs after the synchronous COMMIT), and dropped if it rolled back. A subscriber that reads
 * the run row when it receives `end` therefore sees the final status, never the pre-commit state.
 */
import type { RunEvent } from "../../protocol/events.js";
import type { EventStore, StoredEvent } from "../store/events.js";

export type JournalListener = (event: StoredEvent) => void;

export class Journal {
  private readonly listeners = new Map<string, Set<JournalListener>>();
  /** Events stored but not yet fanned out: appends made by a listener wait their turn, so every
   * listener sees every thread's events in seq order. */
  private readonly pending: StoredEvent[] = [];
  private delivering = false;

  /** Depth of `transaction()` calls in progress: fan-out waits for the outermost to commit. */
  private depth = 0;
  private flushQueued = false;
  private readonly inTransaction: () => boolean;

  /** `inTransaction`: the database's own flag (Db.inTransaction), for transactions opened elsewhere. */
  constructor(readonly events: EventStore, opts: { inTransaction?: () => boolean } = {}) {
    this.inTransaction = opts.inTransaction ?? (() => false);
  }

  append(event: RunEvent): StoredEvent {
    const stored = this.events.append(event.thread_id, event.run_id, event.event, event.data);
    this.pending.push(stored);
    if (this.depth > 0) return stored; // transaction() delivers after its COMMIT
    if (this.inTransaction()) {
      // Someone else's transaction: it is synchronous, so it has committed by the next microtask.
      if (!this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(() => {
          this.flushQueued = false;
          this.flush();
        });
      }
      return stored;
    }
    if (!this.delivering) this.deliver();
    return stored;
  }

  /**
   * Runs `fn` in the store's transaction (`tx`); events it appends reach listeners after the
   * outermost COMMIT, and never if their part rolled back.
   */
  transaction<T>(tx: (fn: () => T) => T, fn: () => T): T {
    const mark = this.pending.length;
    this.depth++;
    let result: T;
    try {
      result = tx(fn);
    } catch (err) {
      // Rolled back (the savepoint, or all of it): those rows do not exist.
      this.pending.splice(mark);
      throw err;
    } finally {
      this.depth--;
    }
    this.flush();
    return result;
  }

  private flush(): void {
    if (this.depth === 0 && !this.delivering && !this.inTransaction() && this.pending.length > 0) this.deliver();
  }

  private deliver(): void {
    this.delivering = true;
    try {
      for (let e = this.pending.shift(); e; e = this.pending.shift()) {
        for (const fn of [...(this.listeners.get(e.thread_id) ?? [])]) {
          // A listener that throws must not keep the event from the others (nor fail the run).
          try {
            fn(e);
          } catch {
            /* the subscriber's own problem */
          }
        }
      }
    } finally {
      this.delivering = false;
    }
  }

  /**
   * Replay events with seq > afterSeq, then follow live. Returns the unsubscribe function.
   * Replay repeats until it has caught up (a listener may append while replaying), and the live
   * listener skips anything replay already delivered: no gap, no duplicate.
   */
  subscribe(threadId: string, afterSeq: number, listener: JournalListener): () => void {
    let last = afterSeq;
    const once = (e: StoredEvent) => {
      if (e.seq <= last) return;
      last = e.seq;
      listener(e);
    };
    let subs = this.listeners.get(threadId);
    if (!subs) this.listeners.set(threadId, (subs = new Set()));
    // Registered first, so an append during replay is queued for it rather than lost; `once`
    // drops what replay delivers itself.
    subs.add(once);
    // Hold live delivery while replaying: an append made by the listener during replay is queued
    // and delivered after the replayed events, in seq order.
    const outer = this.delivering;
    this.delivering = true;
    // (Subscribing inside a transaction would replay uncommitted rows: callers subscribe outside.)
    try {
      for (let batch = this.events.list(threadId, { afterSeq: last }); batch.length > 0; batch = this.events.list(threadId, { afterSeq: last })) {
        for (const e of batch) once(e);
      }
    } finally {
      this.delivering = outer;
    }
    if (!outer) this.flush();
    return () => {
      subs.delete(once);
      if (subs.size === 0) this.listeners.delete(threadId);
    };
  }
}
