/**
 * One thread's journal, followed for the panel: `events/subscribe` from a seq, then the harness's
 * `events/event` notifications, de-duplicated by seq and batched (at most one postMessage per
 * FLUSH_MS, or per MAX_BATCH events) so a burst of tokens costs the webview one update.
 *
 * The harness may start replaying before the subscribe response arrives, so notifications for
 * a subscription id we do not know yet are held until the response names it.
 */
import type * as vscode from "vscode";
import type { HarnessClient } from "../harnessClient.js";
import type { JournalEvent } from "../../protocol/rpc.js";

const FLUSH_MS = 16;
const MAX_BATCH = 500;

export class EventFeed implements vscode.Disposable {
  private sub: { id: string; threadId: string } | undefined;
  private early = new Map<string, JournalEvent[]>();
  private subscribing = 0;
  private seq = 0;
  private queue: JournalEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly listener: vscode.Disposable;

  constructor(
    private readonly harness: HarnessClient,
    /** A batch, in seq order, all of `threadId`. */
    private readonly deliver: (threadId: string, events: JournalEvent[]) => void,
    /** Each new event as it arrives (run status tracking). */
    private readonly observe: (event: JournalEvent) => void,
  ) {
    this.listener = harness.onNotification("events/event", (p) => this.onEvents(p.subscriptionId, p.events));
  }

  /** The last seq delivered or queued: where a new subscription continues without a gap. */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Follows `threadId` after `afterSeq`, replacing the current subscription. `wanted` is asked
   * again once the harness answers: if the panel moved on meanwhile, the subscription is dropped.
   */
  async follow(workspaceFolder: string, threadId: string, afterSeq: number, wanted: () => boolean): Promise<void> {
    await this.stop();
    this.seq = afterSeq;
    this.subscribing += 1;
    try {
      const { subscriptionId } = await this.harness.request("events/subscribe", { workspaceFolder, threadId, afterSeq });
      if (!wanted()) {
        void this.harness.request("events/unsubscribe", { subscriptionId }).catch(() => undefined);
        return;
      }
      this.sub = { id: subscriptionId, threadId };
      const early = this.early.get(subscriptionId);
      if (early) this.enqueue(early);
    } finally {
      this.subscribing -= 1;
      if (this.subscribing === 0) this.early.clear();
    }
  }

  /** Delivers what is queued, then unsubscribes. */
  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    this.flush();
    if (sub) await this.harness.request("events/unsubscribe", { subscriptionId: sub.id }).catch(() => undefined);
  }

  /** The webview is gone: drop what is queued (it replays on `ready`) and unsubscribe. */
  async drop(): Promise<void> {
    this.queue = [];
    await this.stop();
  }

  /** The harness restarted: the subscription died with the old process; nothing to unsubscribe. */
  forget(): void {
    this.sub = undefined;
  }

  private onEvents(subscriptionId: string, events: JournalEvent[]): void {
    if (this.sub?.id === subscriptionId) {
      this.enqueue(events);
    } else if (this.subscribing > 0) {
      const held = this.early.get(subscriptionId) ?? [];
      held.push(...events);
      this.early.set(subscriptionId, held);
    }
  }

  private enqueue(events: JournalEvent[]): void {
    for (const e of events) {
      if (e.seq <= this.seq) continue;
      this.seq = e.seq;
      this.queue.push(e);
      this.observe(e);
    }
    if (this.queue.length >= MAX_BATCH) this.flush();
    else if (this.queue.length > 0 && !this.timer) this.timer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const events = this.queue;
    this.queue = [];
    const threadId = events[0]?.thread_id;
    if (threadId !== undefined) this.deliver(threadId, events);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.listener.dispose();
  }
}
