/**
 * Long-term memory for one data directory (one user): the document (store.ts), the durable
 * update queue (queue.ts), extraction (extract.ts) and what a thread's first request is given
 * (render.ts). One per process: the CLI opens it for a run, the harness server for its life.
 * Where the document and the queue live (the data directory, or a Postgres database that several
 * `deerflow serve` processes share) is storage.ts's choice, from `database`; nothing here differs.
 *
 * Who calls what:
 * - a run is lent the memory of its workspace (`forWorkspace`, WorkspaceMemory below): what it
 *   injects is the global part plus that workspace's own (scope.ts), and what it queues is
 *   extracted into that workspace's scope (a workspace the user does not trust gets no memory at
 *   all: server/memory.ts);
 * - MemoryMiddleware (after a run) and the summarization flush `enqueue` a conversation: only
 *   its messages after the thread's watermark (queue.ts), so an upload-only turn or a run that
 *   added nothing new queues nothing;
 * - the harness server calls `schedule()` after each enqueue and at start: a timer fires when the
 *   earliest entry's debounce (`memory.debounce_seconds`) has passed, and `process()` runs;
 * - a one-shot CLI `run` calls `process({ all: true })` before it exits (nothing waits for a
 *   debounce there), which also picks up what an earlier process left;
 * - DynamicContext asks `injection()` at a thread's first run.
 *
 * An extraction that fails (the model errs, answers nonsense, or the memory file is broken) is
 * logged, never fails a run, and the entry is retried later: after a back-off in the server, at
 * the next process in the CLI, at most MAX_ATTEMPTS times.
 *
 * One processor at a time, across processes: the processor lease (queue.ts). Its holder reads the
 * due entries after taking it (what another processor finished meanwhile is gone), renews it
 * while it works, and checks it once more in the same write as the document update, so a holder
 * that lost it while its model answered (paused past the lease, or on Postgres a replaced
 * connection) writes nothing: the new holder does the entry. Why a lease and not a row claim per
 * entry: every extraction rewrites the same document, a thread's entries must be extracted in
 * order (a flush before its conversation), and a model call cannot sit inside a transaction.
 */
import { randomUUID } from "node:crypto";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { createChatModel, resolveModel } from "../models/factory.js";
import type { ResolvedModel } from "../models/resolvedModel.js";
import { errorMessage } from "../errors.js";
import type { MemoryQueue, ConversationMessage, QueueEntry } from "./queue.js";
import type { MemoryDocumentStore } from "./store.js";
import { MemoryStorage } from "./storage.js";
import { applyUpdate, changedAnything, extractUpdate, type MemoryChange } from "./extract.js";
import { estimateTokens, memoryReminder, renderMemory, type TokenCounter } from "./render.js";
import { viewFor } from "./scope.js";
import type { MemoryConfig } from "./config.js";

export const MAX_ATTEMPTS = 5;
/**
 * The processor lease: renewed every LEASE_RENEW_MS while extraction runs, so it outlives a dead
 * holder by at most LEASE_MS (a holder on this machine that no longer exists is not waited for).
 */
const LEASE_MS = 60_000;
const LEASE_RENEW_MS = 15_000;
/** Re-arming after the queue could not be read: 30 s, doubling, at most 10 minutes. */
export const SCHEDULE_RETRY_MS = 30_000;
const SCHEDULE_RETRY_MAX_MS = 600_000;

export interface MemoryLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface MemoryServiceOptions {
  dataDir: string;
  /** A postgres:// URL (`deerflow serve --database`): the queue and the document live there (storage.ts); otherwise in `dataDir`. */
  database?: string;
  /** Read at each use: the server's settings may change. */
  config: () => HarnessConfig;
  /** The key for the extraction model, held by the entry point (the CLI's run key, the host's SecretStorage keys); undefined → environment. */
  apiKeyFor?: (model: ResolvedModel) => string | undefined;
  log: MemoryLog;
  counter?: TokenCounter;
  /** An extraction changed the memory (the server tells the host: the panel's memory line, the editor reloads). */
  onChanged?: (notice: MemoryChangeNotice) => void;
}

/** What an extraction changed, where, and from which thread. */
export interface MemoryChangeNotice extends MemoryChange {
  threadId: string;
  workspace: string;
  /** Facts the workspace's threads are given now (global and its own). */
  facts: number;
}

export interface ProcessResult {
  /** Entries extracted (a model call that succeeded). Entries with nothing new since the watermark are completed without one and not counted. */
  processed: number;
  failed: number;
  /** Facts stored after the last successful update. */
  facts: number;
  /** Entries still queued (waiting, or past their attempts). */
  remaining: number;
  /** Another process holds the lease: nothing was done here. */
  busy: boolean;
}

/** One entry's extraction: its update stored (and the facts its workspace now sees), nothing new to send, or the lease lost to another processor. */
type Extracted = { kind: "stored"; facts: number } | { kind: "nothing_new" } | { kind: "lease_lost" };

/** What a run gives its memory hooks: which model the conversation's run used. */
export interface MemoryRunModel {
  name: string;
  baseURL?: string;
}

export class MemoryService {
  private storageValue: MemoryStorage | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private scheduleFailures = 0;
  private closed = false;
  /** Aborts an extraction in flight when the process stops. */
  private readonly stopping = new AbortController();
  private readonly owner = `${process.pid}:${randomUUID()}`;

  constructor(private readonly o: MemoryServiceOptions) {}

  get dataDir(): string {
    return this.o.dataDir;
  }

  get settings(): MemoryConfig {
    return this.o.config().memory;
  }

  private get storage(): MemoryStorage {
    this.storageValue ??= new MemoryStorage({ dataDir: this.o.dataDir, ...(this.o.database !== undefined ? { database: this.o.database } : {}) });
    return this.storageValue;
  }

  private get queue(): MemoryQueue {
    return this.storage.queue;
  }

  /** The memory document (memory/get, memory/set, promote): the data directory's file or the database's row. */
  get document(): MemoryDocumentStore {
    return this.storage.document;
  }

  /** What one run in `workspace` (a real path) is lent: see WorkspaceMemory. */
  forWorkspace(workspace: string): WorkspaceMemory {
    return new WorkspaceMemory(this, workspace);
  }

  /**
   * The hidden `<memory>` reminder for a thread's first request in `workspace` (the global part and
   * that workspace's own; undefined: the global part only); "" when memory is empty or unreadable
   * (logged: a broken file never fails a run).
   */
  injection(workspace: string | undefined, counter?: TokenCounter): string {
    try {
      const body = renderMemory(viewFor(this.document.read(), workspace), this.settings.max_injection_tokens, counter ?? this.o.counter ?? estimateTokens);
      return body ? memoryReminder(body) : "";
    } catch (err) {
      this.o.log.warn(`memory: not injected: ${errorMessage(err)}`);
      return "";
    }
  }

  /** The memory's generation (store.ts): changes on an explicit user change only. */
  generation(): string {
    return this.document.generation();
  }

  /**
   * Queues a thread's conversation for extraction in `workspace`'s scope: only the messages the
   * thread's watermark has not seen. Returns how many were queued (0: nothing new, nothing queued).
   */
  enqueue(threadId: string, workspace: string, kind: "conversation" | "flush", messages: ConversationMessage[], model: MemoryRunModel): number {
    const fresh = this.afterWatermark(threadId, messages);
    if (fresh.length === 0) return 0;
    const now = Date.now();
    this.queue.enqueue({ threadId, workspace, kind, model: model.name, ...(model.baseURL ? { baseURL: model.baseURL } : {}), messages: fresh, dueAt: now + this.settings.debounce_seconds * 1000 }, now);
    return fresh.length;
  }

  /** The messages not yet extracted (by key; a message without one, from an older row, counts as new). */
  private afterWatermark(threadId: string, messages: ConversationMessage[]): ConversationMessage[] {
    if (messages.length === 0) return [];
    const seen = this.queue.extracted(threadId);
    return seen.size === 0 ? messages : messages.filter((m) => !m.key || !seen.has(m.key));
  }

  /** Server: (re)arm the timer for the earliest due entry. */
  schedule(): void {
    if (this.closed) return;
    const due = this.queue.nextDue(MAX_ATTEMPTS);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (due === undefined) return;
    // Another process is extracting: try again when its lease would end, never in a tight loop.
    const holder = this.queue.holder();
    const next = holder && holder.owner !== this.owner ? Math.max(due, holder.expires_at) : due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.process()
        .then(
          (r) => {
            if (r.processed > 0) this.o.log.info(`memory: updated (${r.facts} facts)`);
          },
          (err: unknown) => this.o.log.warn(`memory: not updated: ${errorMessage(err)}`),
        )
        .finally(() => this.rearm());
    }, Math.max(0, next - Date.now()));
    this.timer.unref?.();
  }

  /**
   * After a processing round: schedule again. A queue that cannot be read (a locked or broken
   * database) would otherwise leave no timer armed and extraction stalled until the next run:
   * logged, and tried again after a back-off (doubling, at most SCHEDULE_RETRY_MAX_MS).
   */
  private rearm(): void {
    try {
      this.schedule();
      this.scheduleFailures = 0;
    } catch (err) {
      if (this.closed) return;
      const delay = Math.min(SCHEDULE_RETRY_MS * 2 ** this.scheduleFailures, SCHEDULE_RETRY_MAX_MS);
      this.scheduleFailures++;
      this.o.log.warn(`memory: cannot read the update queue, trying again in ${Math.round(delay / 1000)} s: ${errorMessage(err)}`);
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.rearm();
      }, delay);
      this.timer.unref?.();
    }
  }

  /**
   * Extract what is due (`all`: everything queued, debounce or back-off regardless — a one-shot
   * CLI cannot wait). One call at a time per process; another process's lease → `busy`.
   */
  process(opts: { all?: boolean; signal?: AbortSignal } = {}): Promise<ProcessResult> {
    const next = (this.running ?? Promise.resolve()).then(() => this.processNow(opts));
    // Settles either way (the caller handles `next`'s failure); cleared once it is the last.
    const tracked: Promise<void> = next.then(
      () => undefined,
      () => undefined,
    );
    this.running = tracked;
    void tracked.then(() => {
      if (this.running === tracked) this.running = undefined;
    });
    return next;
  }

  private async processNow(opts: { all?: boolean; signal?: AbortSignal }): Promise<ProcessResult> {
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.stopping.signal]) : this.stopping.signal;
    const result: ProcessResult = { processed: 0, failed: 0, facts: 0, remaining: 0, busy: false };
    const queue = this.queue;
    const dueNow = () => queue.due(MAX_ATTEMPTS, opts.all ? undefined : Date.now());
    if (dueNow().length === 0) {
      result.remaining = queue.count();
      return result;
    }
    if (!queue.acquire(this.owner, LEASE_MS)) {
      result.busy = true;
      result.remaining = queue.count();
      return result;
    }
    // Read again under the lease: an entry the previous holder finished meanwhile is gone.
    const entries = dueNow();
    const renewLease = () => {
      try {
        queue.acquire(this.owner, LEASE_MS);
      } catch {
        /* the next entry's acquire says so */
      }
    };
    const renew = setInterval(renewLease, LEASE_RENEW_MS);
    renew.unref?.();
    try {
      for (const entry of entries) {
        if (signal.aborted || this.closed) break;
        if (!queue.acquire(this.owner, LEASE_MS)) {
          result.busy = true;
          break;
        }
        try {
          const done = await this.extract(entry, signal);
          if (done.kind === "lease_lost") {
            this.o.log.warn(`memory: another process took over the memory update; thread ${entry.thread_id}'s extraction is left to it`);
            result.busy = true;
            break;
          }
          if (done.kind === "stored") {
            result.processed++;
            result.facts = done.facts;
          }
        } catch (err) {
          result.failed++;
          const backoff = Math.max(30_000, this.settings.debounce_seconds * 1000) * 2 ** entry.attempts;
          queue.fail(entry, errorMessage(err), Date.now() + backoff);
          this.o.log.warn(`memory: extraction for thread ${entry.thread_id} failed (attempt ${entry.attempts + 1} of ${MAX_ATTEMPTS}), will retry: ${errorMessage(err)}`);
        }
      }
    } finally {
      clearInterval(renew);
      queue.release(this.owner);
    }
    result.remaining = queue.count();
    return result;
  }

  /**
   * One entry: the memory as its workspace sees it, the model's update for the messages after
   * the thread's watermark, the scrubbed result written, the watermark moved on and the entry
   * completed — the last three in one write (one transaction on Postgres), after checking the
   * lease is still this process's.
   */
  private async extract(entry: QueueEntry, signal?: AbortSignal): Promise<Extracted> {
    // The watermark may have moved since the entry was queued (an older entry of the thread was
    // extracted meanwhile): only what is still new is sent.
    const feed = this.afterWatermark(entry.thread_id, entry.messages);
    if (feed.length === 0) {
      this.queue.complete(entry);
      return { kind: "nothing_new" };
    }
    const config = this.o.config();
    const configured = this.settings.model_name;
    const resolved = configured
      ? resolveModel(config, { name: configured })
      : resolveModel(config, { name: entry.model, ...(entry.base_url ? { baseURL: entry.base_url } : {}) });
    const apiKey = this.o.apiKeyFor?.(resolved);
    const model = createChatModel(resolved, { ...(apiKey ? { apiKey } : {}), thinkingEnabled: false, timeoutMs: 120_000 });
    // A broken document throws here and stays as it is.
    const update = await extractUpdate(model, viewFor(this.document.read(), entry.workspace), feed, signal);
    // Applied to the memory as it is now, with no await between read and write: an edit saved
    // (memory/set) while the model answered is kept.
    const limits = { maxFacts: this.settings.max_facts, confidenceThreshold: this.settings.fact_confidence_threshold };
    let change: MemoryChange | undefined;
    let leaseLost = false;
    const stored = this.document.update(
      (current) => {
        // Forgotten meanwhile (memory clear drops the queue, a thread delete its rows): its
        // conversation must not come back.
        if (!this.queue.holds(entry)) return undefined;
        if (!this.queue.acquire(this.owner, LEASE_MS)) {
          leaseLost = true;
          return undefined;
        }
        const applied = applyUpdate(current, update, { source: entry.thread_id, workspace: entry.workspace }, new Date(), limits);
        change = applied.change;
        return applied.doc;
      },
      {
        then: () => {
          this.queue.advanceWatermark(entry);
          this.queue.complete(entry);
        },
      },
    );
    if (leaseLost) return { kind: "lease_lost" };
    const facts = viewFor(stored, entry.workspace).facts.length;
    if (change) {
      if (update.malformed > 0) this.o.log.info(`memory: ${update.malformed} malformed entr${update.malformed === 1 ? "y" : "ies"} of the model's answer for thread ${entry.thread_id} left out; the rest is applied`);
      for (const d of change.dropped) this.o.log.warn(`memory: not stored (${d.reason}), from thread ${entry.thread_id}: ${JSON.stringify(d.text)}`);
      if (changedAnything(change)) this.o.onChanged?.({ ...change, threadId: entry.thread_id, workspace: entry.workspace, facts });
    }
    return { kind: "stored", facts };
  }

  /** Forget everything: the queue (its turns count as seen) and the document (storage.ts). Returns the entries dropped. */
  clear(): number {
    return this.storage.clear();
  }

  queued(): number {
    return this.queue.count();
  }

  /** Stops the timer, waits for an extraction in flight, closes the queue. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.stopping.abort();
    await this.running;
    this.storageValue?.close();
    this.storageValue = undefined;
  }
}

/**
 * The memory one run is lent (built per run by its entry point, used by memory/hooks.ts): bound to
 * the run's workspace folder (real path), so injection and extraction stay in its scope.
 */
export class WorkspaceMemory {
  constructor(
    private readonly service: MemoryService,
    readonly workspace: string,
  ) {}

  get settings(): MemoryConfig {
    return this.service.settings;
  }

  injection(counter?: TokenCounter): string {
    return this.service.injection(this.workspace, counter);
  }

  generation(): string {
    return this.service.generation();
  }

  /** Queues the thread's conversation (its part after the watermark); 0 when nothing was new. */
  enqueue(threadId: string, kind: "conversation" | "flush", messages: ConversationMessage[], model: MemoryRunModel): number {
    return this.service.enqueue(threadId, this.workspace, kind, messages, model);
  }
}
