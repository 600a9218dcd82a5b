/**
 * Long-term memory in the harness process (issue 15): one MemoryService for the data directory,
 * created once the host sent `harness/initialize`, and the `memory/*` methods.
 *
 * - Runs get it only while memory is on (`deerflow.memory.enabled` → `memory.enabled`): off means
 *   no injection and no extraction. A run is lent its workspace's memory (scope.ts): injection of
 *   the global part and that folder's own, extraction into that folder's scope. While the
 *   window's workspace is not trusted (Restricted Mode, `workspace_trusted` false) memory is off
 *   for its runs, both ways: a folder the user has not trusted must not plant what their other
 *   threads are told (no extraction), and its files, which can steer the model, are not handed
 *   what the user's memory says about them (no injection). Trusting the workspace turns it on.
 * - An extraction that changed something is announced (`memory/changed`): the panel says so, and
 *   an open memory editor reloads.
 * - Extraction is debounced (`memory.debounce_seconds`, 30 s as DeerFlow): each queued
 *   conversation re-arms a timer for the earliest due entry; whatever an earlier process left in
 *   the queue is picked up when memory is first used after start.
 * - `memory/set` takes a whole document, validated (a broken one is refused with zod's issues and
 *   nothing changes) and scrubbed, like every write (memory/store.ts). `memory/promote` is the
 *   user making one fact or one folder's section global.
 * - `database` (a postgres:// URL: `deerflow serve --database`): the memory lives in that
 *   database (memory/storage.ts), shared by every serve process on it, instead of the data dir.
 */
import { realpathSync } from "node:fs";
import type { HarnessToHost, RequestParams, RequestResult } from "../../protocol/rpc.js";
import { MemoryService, type MemoryChangeNotice } from "../memory/service.js";
import { runKeys } from "../models/factory.js";
import { memoryRunHooks, type MemoryWiring } from "../memory/hooks.js";
import type { MemoryRunModel } from "../memory/service.js";
import type { BaseMessage } from "@langchain/core/messages";
import { parseMemory } from "../memory/store.js";
import { promote, type Promotion } from "../memory/scope.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import type { HarnessConfig } from "../config/harnessConfig.js";

export interface ServerMemoryOptions {
  /** A postgres:// URL: memory (queue and document) in that database; otherwise the data directory's. */
  database?: string;
  /** `memory/changed` to the host. */
  notify?: (p: HarnessToHost["memory/changed"]) => void;
  /** The host's own path for a folder's real path (what its notifications are matched on), when the folder is open here. */
  hostPathOf?: (folder: string) => string | undefined;
}

export class ServerMemory {
  private serviceValue: MemoryService | undefined;

  constructor(
    private readonly session: Session,
    private readonly log: Logger,
    private readonly o: ServerMemoryOptions = {},
  ) {}

  private get service(): MemoryService {
    if (!this.serviceValue) {
      const session = this.session;
      this.serviceValue = new MemoryService({
        dataDir: session.dataDir,
        ...(this.o.database !== undefined ? { database: this.o.database } : {}),
        config: () => withDebounceOverride(session.config),
        // Never the host's key for an ad-hoc endpoint (an entry a CLI `run --base-url` queued).
        // runKeys' rule with no run key: the key held for the model's own api_key_env, none for an ad-hoc endpoint.
        apiKeyFor: (model) => runKeys(model, undefined, (source) => session.apiKey(source))(model),
        log: this.log,
        onChanged: (n) => this.changed(n),
      });
      // Leftovers of an earlier process (a CLI run that was killed, a harness that stopped).
      this.schedule();
    }
    return this.serviceValue;
  }

  private schedule(): void {
    try {
      this.serviceValue?.schedule();
    } catch (err) {
      this.log.warn(`memory: cannot read the update queue: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** After `harness/initialize`: extraction left queued by an earlier process is scheduled now (memory on only). */
  start(): void {
    if (this.session.config.memory.enabled) void this.service;
  }

  /** For a run in `folder` (the real path): its workspace's memory while memory is on and the workspace trusted, else undefined. */
  wiring(folder: string): MemoryWiring | undefined {
    if (!this.session.config.memory.enabled || !this.session.settings.workspace_trusted) return undefined;
    return { service: this.service.forWorkspace(folder), onQueued: () => this.schedule() };
  }

  /**
   * For a manual compaction (threads/compact): the memory flush of what it summarizes, while
   * memory is on (DeerFlow's memory_flush_hook). `model`: the thread's run model.
   */
  beforeSummarize(threadId: string, folder: string, model: MemoryRunModel): ((messages: BaseMessage[]) => Promise<void>) | undefined {
    const wiring = this.wiring(folder);
    if (!wiring) return undefined;
    const hooks = memoryRunHooks(wiring.service, threadId, model, wiring.onQueued);
    return (messages) => Promise.resolve(hooks.flush(messages));
  }

  get(): RequestResult<"memory/get"> {
    const document = this.service.document;
    return { memory: document.read(), queued: this.service.queued(), version: document.version() };
  }

  set(p: RequestParams<"memory/set">): RequestResult<"memory/set"> {
    // Validated before anything is written: a broken document is refused and loses nothing.
    const doc = parseMemory(p.memory, "the submitted document");
    const document = this.service.document;
    // An explicit user change: a new generation, so threads render their memory snapshot again (DynamicContext).
    const memory = document.replace(doc);
    return { memory, version: document.version() };
  }

  promote(p: RequestParams<"memory/promote">): RequestResult<"memory/promote"> {
    const document = this.service.document;
    let what: Promotion | undefined;
    const memory = document.update(
      (doc) => {
        // A folder is named in the document by its real path; the host may name it by its own.
        const folder = (w: string): string => (doc.workspaces[w] ? w : realOrSelf(w));
        what = p.factId !== undefined ? { factId: p.factId } : { workspace: folder(p.workspace), section: p.section };
        return promote(doc, what);
      },
      // An explicit user change: threads render their memory snapshot again (DynamicContext).
      { userChange: true },
    );
    if (what) this.log.info(`memory: ${"factId" in what ? `fact ${what.factId}` : `${what.section} of ${what.workspace}`} promoted to every workspace.`);
    return { memory, version: document.version() };
  }

  private changed(n: MemoryChangeNotice): void {
    this.o.notify?.({
      workspaceFolder: this.o.hostPathOf?.(n.workspace) ?? n.workspace,
      threadId: n.threadId,
      added: n.added,
      removed: n.removed,
      sections: n.sections,
      dropped: n.dropped.length,
      facts: n.facts,
    });
  }

  clear(): RequestResult<"memory/clear"> {
    const dropped = this.service.clear();
    this.log.info(`memory: cleared${dropped > 0 ? ` (and ${dropped} queued update(s))` : ""}.`);
    return null;
  }

  async close(): Promise<void> {
    await this.serviceValue?.close();
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The settings carry no debounce (DeerFlow's 30 s applies); DEERFLOW_MEMORY_DEBOUNCE_SECONDS
 * overrides it for this process (tests, and users who want extraction sooner or later).
 */
function withDebounceOverride(config: HarnessConfig): HarnessConfig {
  const raw = process.env.DEERFLOW_MEMORY_DEBOUNCE_SECONDS;
  const seconds = raw === undefined || raw.trim() === "" ? NaN : Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? { ...config, memory: { ...config.memory, debounce_seconds: seconds } } : config;
}
