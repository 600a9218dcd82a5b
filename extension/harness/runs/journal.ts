/**
 * The journal: every stream item of a run becomes an event with a thread-global, gap-free `seq`,
 * stored in SQLite BEFORE any subscriber sees it; then it is fanned out in-process.
 *
 * `subscribe(thread, afterSeq, fn)` replays stored events after `afterSeq` and then follows live.
 * Both halves run in one synchronous step (better-sqlite3 is synchronous and `append` stores and
 * fans out synchronously), so no event can land between the replay and the registration: no gap,
 * no duplicate at the seam.
 */
import type { RunEvent } from "../../protocol/events.js";
import type { EventStore, StoredEvent } from "../store/events.js";

export type JournalListener = (event: StoredEvent) => void;

export class Journal {
  private readonly listeners = new Map<string, Set<JournalListener>>();

  constructor(readonly events: EventStore) {}

  append(event: RunEvent): StoredEvent {
    const stored = this.events.append(event.thread_id, event.run_id, event.event, event.data);
    const subs = this.listeners.get(event.thread_id);
    if (subs) {
      // A listener that throws must not keep the event from the others (nor fail the run).
      for (const fn of [...subs]) {
        try {
          fn(stored);
        } catch {
          /* the subscriber's own problem */
        }
      }
    }
    return stored;
  }

  /** Replay events with seq > afterSeq, then follow live. Returns the unsubscribe function. */
  subscribe(threadId: string, afterSeq: number, listener: JournalListener): () => void {
    for (const e of this.events.list(threadId, { afterSeq })) listener(e);
    let subs = this.listeners.get(threadId);
    if (!subs) this.listeners.set(threadId, (subs = new Set()));
    subs.add(listener);
    return () => {
      subs.delete(listener);
      if (subs.size === 0) this.listeners.delete(threadId);
    };
  }
}
