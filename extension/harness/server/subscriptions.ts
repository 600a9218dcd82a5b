/**
 * `events/subscribe`: replay a thread's journal after `afterSeq`, then follow it live, as
 * `events/event` notifications. The journal guarantees no gap and no duplicate at the seam
 * (runs/journal.ts); this adds batching: events produced in one tick of the event loop (a replay,
 * a burst of stream items) go out as one notification, so a long stream costs the host one
 * message per tick rather than one per token.
 *
 * Subscriptions belong to the connection: all of them end when it closes.
 */
import { randomUUID } from "node:crypto";
import type { HarnessToHost, JournalEvent } from "../../protocol/rpc.js";
import type { RunEvent } from "../../protocol/events.js";
import type { StoredEvent } from "../store/events.js";
import type { OpenWorkspace } from "./workspaces.js";

/** Upper bound per notification: a replay of a long thread is split, never one giant message. */
const MAX_BATCH = 500;

type Send = (params: HarnessToHost["events/event"]) => void;

export function toJournalEvent(e: StoredEvent): JournalEvent {
  return { seq: e.seq, run_id: e.run_id, thread_id: e.thread_id, event: e.event, data: e.data } as RunEvent & { seq: number };
}

interface Subscription {
  stop(): void;
}

export class Subscriptions {
  private readonly subs = new Map<string, Subscription>();

  constructor(private readonly send: Send) {}

  subscribe(ws: OpenWorkspace, threadId: string, afterSeq: number): string {
    const id = randomUUID();
    let buffer: JournalEvent[] = [];
    let scheduled: NodeJS.Immediate | undefined;
    const flush = () => {
      scheduled = undefined;
      const events = buffer;
      buffer = [];
      for (let i = 0; i < events.length; i += MAX_BATCH) this.send({ subscriptionId: id, events: events.slice(i, i + MAX_BATCH) });
    };
    // Registered before the replay runs (it runs inside journal.subscribe), and flushed on a later
    // tick: the request's response, carrying the id, is written before the first notification.
    const sub: Subscription = {
      stop: () => {
        if (scheduled) clearImmediate(scheduled);
        buffer = [];
        unsubscribe();
      },
    };
    this.subs.set(id, sub);
    const unsubscribe = ws.manager.journal.subscribe(threadId, afterSeq, (e) => {
      buffer.push(toJournalEvent(e));
      scheduled ??= setImmediate(flush);
    });
    return id;
  }

  /** Idempotent: false when the id is unknown (already ended). */
  unsubscribe(id: string): boolean {
    const sub = this.subs.get(id);
    if (!sub) return false;
    this.subs.delete(id);
    sub.stop();
    return true;
  }

  /** The connection closed (or the process stops): every subscription ends. */
  unsubscribeAll(): void {
    for (const id of [...this.subs.keys()]) this.unsubscribe(id);
  }
}
