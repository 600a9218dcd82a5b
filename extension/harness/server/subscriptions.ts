/**
 * `events/subscribe`: replay a thread's journal after `afterSeq`, then follow it live, as
 * `events/event` notifications. The journal guarantees no gap and no duplicate at the seam for
 * this process's own appends (runs/journal.ts). Events another process writes to the same
 * database (a second VS Code window on the folder, the CLI) are followed too: a watch on the
 * database directory wakes a read of what is new, and `seq` keeps the two paths from ever
 * delivering an event twice.
 *
 * Batching: events produced in one tick of the event loop (a replay, a burst of stream items) go
 * out as one notification, so a long stream costs the host one message per tick, not per token.
 * Subscriptions belong to the connection: all of them end when it closes.
 */
import { randomUUID } from "node:crypto";
import { watch } from "node:fs";
import { dirname } from "node:path";
import type { HarnessToHost, JournalEvent } from "../../protocol/rpc.js";
import type { RunEvent } from "../../protocol/events.js";
import type { StoredEvent } from "../store/events.js";
import type { OpenWorkspace } from "./workspaces.js";

/** Upper bound per notification: a replay of a long thread is split, never one giant message. */
const MAX_BATCH = 500;

type Send = (params: HarnessToHost["events/event"]) => void;
/** An event another process journaled (seen by the database watch, not by this journal). */
type OnForeign = (ws: OpenWorkspace, event: StoredEvent) => void;

export function toJournalEvent(e: StoredEvent): JournalEvent {
  return { seq: e.seq, run_id: e.run_id, thread_id: e.thread_id, event: e.event, data: e.data } as RunEvent & { seq: number };
}

interface Subscription {
  ws: OpenWorkspace;
  threadId: string;
  /** Reads events stored by other processes since the last delivered seq. */
  catchUp(): void;
  stop(): void;
}

/** One watch per workspace database (its folder, or Postgres's NOTIFY), shared by its subscriptions. */
interface DbWatch {
  close: () => void;
  /** Threads named by notifications since the last read ("all": a change that names none). */
  threads: Set<string> | "all" | undefined;
  subs: Set<Subscription>;
  pending: NodeJS.Immediate | undefined;
}

export class Subscriptions {
  private readonly subs = new Map<string, Subscription>();
  private readonly watches = new Map<string, DbWatch>();

  constructor(
    private readonly send: Send,
    private readonly onForeign: OnForeign = () => undefined,
  ) {}

  subscribe(ws: OpenWorkspace, threadId: string, afterSeq: number): string {
    const id = randomUUID();
    const events = ws.manager.journal.events;
    let last = afterSeq;
    let buffer: JournalEvent[] = [];
    let scheduled: NodeJS.Immediate | undefined;
    const flush = () => {
      scheduled = undefined;
      const out = buffer;
      buffer = [];
      for (let i = 0; i < out.length; i += MAX_BATCH) this.send({ subscriptionId: id, events: out.slice(i, i + MAX_BATCH) });
    };
    const deliver = (e: StoredEvent): boolean => {
      if (e.seq <= last) return false;
      last = e.seq;
      buffer.push(toJournalEvent(e));
      scheduled ??= setImmediate(flush);
      return true;
    };
    const sub: Subscription = {
      ws,
      threadId,
      catchUp: () => {
        for (const e of events.list(threadId, { afterSeq: last })) if (deliver(e)) this.onForeign(ws, e);
      },
      stop: () => {
        if (scheduled) clearImmediate(scheduled);
        buffer = [];
        unsubscribe();
        this.unwatch(sub);
      },
    };
    this.subs.set(id, sub);
    // The replay runs inside journal.subscribe; the flush comes on a later tick, so the request's
    // response (carrying the id) is written before the first notification.
    const unsubscribe = ws.manager.journal.subscribe(threadId, afterSeq, (e) => void deliver(e));
    this.watch(sub);
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

  private watch(sub: Subscription): void {
    const file = sub.ws.store.file;
    let w = this.watches.get(file);
    if (!w) {
      const entry: DbWatch = { close: () => undefined, subs: new Set(), pending: undefined, threads: undefined };
      // Every write touches the WAL file (or raises a NOTIFY): coalesce a burst into one read per
      // tick. A NOTIFY names its thread: only that thread's subscriptions read (one database holds
      // every workspace's threads, so waking them all would be a query per subscription per event).
      const changed = (threadId?: string) => {
        if (threadId === undefined) entry.threads = "all";
        else if (entry.threads === undefined) entry.threads = new Set([threadId]);
        else if (entry.threads !== "all") entry.threads.add(threadId);
        entry.pending ??= setImmediate(() => {
          const threads = entry.threads;
          entry.pending = undefined;
          entry.threads = undefined;
          for (const s of entry.subs) if (threads === "all" || threads?.has(s.threadId)) s.catchUp();
        });
      };
      const db = sub.ws.store.db;
      if (db.watchEvents) {
        // Postgres (several `deerflow serve` workers): every journaled event is a NOTIFY; there is no folder to watch.
        // An empty payload (a notification without its thread) wakes every subscription.
        entry.close = db.watchEvents((threadId) => changed(threadId === "" ? undefined : threadId));
      } else {
        const watcher = watch(dirname(file));
        watcher.on("change", () => changed());
        watcher.on("error", () => undefined);
        entry.close = () => watcher.close();
      }
      this.watches.set(file, (w = entry));
    }
    w.subs.add(sub);
  }

  private unwatch(sub: Subscription): void {
    const file = sub.ws.store.file;
    const w = this.watches.get(file);
    if (!w) return;
    w.subs.delete(sub);
    if (w.subs.size > 0) return;
    if (w.pending) clearImmediate(w.pending);
    w.close();
    this.watches.delete(file);
  }
}
