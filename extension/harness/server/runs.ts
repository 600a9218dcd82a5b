/**
 * Runs of the harness process: `runs/start` goes through startRun (the one choke point, as the
 * CLI), then the run executes in the background; the request answers at once with the run_id and
 * the run keeps going whatever the client does (a hidden or reloaded panel replays the journal).
 * When a run ends, `runs/ended` tells the host (status bar, "the agent needs you" notification).
 *
 * At shutdown the process's own runs are stopped and their `end` journaled here, so they are
 * `interrupted` with a reason rather than found by recovery at the next start.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { HarnessToHost, RequestParams, RequestResult, RunSummary } from "../../protocol/rpc.js";
import type { FinalRunStatus } from "../../protocol/events.js";
import type { PendingApproval } from "../../protocol/approvals.js";
import { HarnessError, errorMessage } from "../errors.js";
import { launchRun, type LaunchRequest, type LaunchServices } from "../runs/launcher.js";
import { toolSearchSettings } from "../mcp/open.js";
import { endRun } from "../runs/ending.js";
import { ACTIVE_STATUSES, FINAL_STATUSES, type RunRecord } from "../store/runs.js";
import type { StoredEvent } from "../store/events.js";
import type { UploadedFile } from "../state/threadState.js";
import { awaitingClarification } from "../middlewares/clarification.js";
import { existingUpload, putUpload } from "../threads/uploads.js";
import { threadDirs } from "../threads/threadDirs.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import { uploadName } from "../trust/attachments.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import type { OpenWorkspace, Workspaces } from "./workspaces.js";
import type { ServerMemory } from "./memory.js";

type Ended = HarnessToHost["runs/ended"];

/** How long shutdown waits for its runs to stop on their own (a worker notices within a second). */
const SHUTDOWN_GRACE_MS = 3000;
export const SHUTDOWN_REASON = "The harness process stopped (VS Code closed, or the extension restarted) before the run finished.";

interface LocalRun {
  ws: OpenWorkspace;
  run: RunRecord;
  done: Promise<void>;
}

/** `end.data.pending_approvals` of a run that paused on the user's decision. */
function pendingOf(data: unknown): PendingApproval[] {
  const d = data as { stop_reason?: unknown; pending_approvals?: unknown } | undefined;
  return d?.stop_reason === "approval" && Array.isArray(d.pending_approvals) ? (d.pending_approvals as PendingApproval[]) : [];
}

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

export function runSummary(r: RunRecord): RunSummary {
  return { run_id: r.run_id, thread_id: r.thread_id, status: r.status, model: r.model, created_at: iso(r.created_at)!, ended_at: iso(r.ended_at), error: r.error };
}

export class Runs {
  /** Runs this process executes, until their end is journaled and announced. */
  private readonly local = new Map<string, LocalRun>();
  /** Runs of other processes already announced (a bounded memory: only recent ends matter). */
  private readonly foreignAnnounced = new Set<string>();

  constructor(
    private readonly session: Session,
    private readonly workspaces: Workspaces,
    private readonly log: Logger,
    private readonly sendEnded: (params: Ended) => void,
    /** Long-term memory (issue 15); absent → runs without it. */
    private readonly memory?: ServerMemory,
    /** `deerflow serve --model/--base-url`: a run that names no model uses this one (an ad-hoc endpoint when `baseURL`). */
    private readonly defaults: { model?: string; baseURL?: string } = {},
  ) {}

  start(p: RequestParams<"runs/start">): RequestResult<"runs/start"> {
    const ws = this.workspaces.get(p.workspaceFolder);
    if (!ws.store.threads.get(p.threadId)) throw new HarnessError("thread_not_found", `No thread ${p.threadId} in ${p.workspaceFolder}.`);
    const { workspaceFolder: _w, files, uploaded, ...rest } = p;
    const dirs = threadDirs(ws.folder, p.threadId);
    const already = (uploaded ?? []).map((name) => {
      const file = existingUpload(dirs, name);
      if (!file) throw new HarnessError("usage", `Cannot attach ${name}: it is not among this thread's uploaded files; upload it again.`);
      return file;
    });
    // The editor names files of the folders this process serves only (trust/attachments.ts).
    return this.launch(ws, { ...rest, uploads: files ?? [], attachRoots: this.workspaces.all().map((w) => w.folder), files: already });
  }

  /** uploads/put: a file for the thread's next message, by its bytes, within the one-file limit. */
  put(p: RequestParams<"uploads/put">): RequestResult<"uploads/put"> {
    const ws = this.workspaces.get(p.workspaceFolder);
    if (!ws.store.threads.get(p.threadId)) throw new HarnessError("thread_not_found", `No thread ${p.threadId} in ${p.workspaceFolder}.`);
    const name = uploadName(p.name);
    const bytes = Buffer.from(p.base64, "base64");
    const limit = this.session.config.uploads.max_file_size;
    if (bytes.length > limit) throw new HarnessError("usage", `File too large: ${name} (uploads.max_file_size is ${limit} bytes)`);
    const { filename, size, path } = putUpload(ensureThreadDirs(ws.folder, p.threadId), name, bytes);
    return { filename, size, path };
  }

  /** The user's decisions on the thread's paused tool calls: a run like any other, through startRun. */
  decide(p: RequestParams<"runs/decide">): RequestResult<"runs/decide"> {
    const ws = this.workspaces.get(p.workspaceFolder);
    if (!ws.store.threads.get(p.threadId)) throw new HarnessError("thread_not_found", `No thread ${p.threadId} in ${p.workspaceFolder}.`);
    return this.launch(ws, { threadId: p.threadId, prompt: "", approvals: p.decisions, ...(p.model ? { model: p.model } : {}) });
  }

  /**
   * "Allow" on a run refused because its dev container configuration was not approved: the same
   * request again (prompt, uploads already copied, model, plan mode), as a new run. Only while
   * the refused run is still the thread's latest and nothing runs on it; otherwise undefined
   * (the user runs it again themselves).
   */
  retryRefused(ws: OpenWorkspace, runId: string): { run_id: string; thread_id: string } | undefined {
    const prior = ws.manager.runs.get(runId);
    if (!prior || prior.status !== "error") return undefined;
    const latest = ws.manager.runs.listByThread(prior.thread_id)[0]; // newest first
    if (latest?.run_id !== runId || ws.manager.runs.active(prior.thread_id) || ws.clearing.has(prior.thread_id)) return undefined;
    const input = prior.input as { prompt?: unknown; files?: unknown; plan_mode?: unknown };
    if (typeof input.prompt !== "string") return undefined;
    const started = this.launch(ws, {
      threadId: prior.thread_id,
      prompt: input.prompt,
      files: Array.isArray(input.files) ? (input.files as UploadedFile[]) : [],
      model: prior.model,
      planMode: input.plan_mode === true,
    });
    this.log.info(`Run ${runId} was refused before the approval; started again as ${started.run_id}.`);
    return { run_id: started.run_id, thread_id: started.thread_id };
  }

  /** The launcher (all preparation, startRun, the worker), for runs/start and the retry after an approval. */
  /**
   * What a run of this workspace gets (stores, sandbox, approval policy, memory, skills, MCP): the
   * one place that says so, for runs/start here and for `deerflow serve`'s HTTP runs.
   */
  services(ws: OpenWorkspace): LaunchServices {
    const config = this.session.config;
    const memory = this.memory?.wiring(ws.folder);
    const approval = this.session.settings.approval ?? config.approval;
    return {
      workspaceFolder: ws.folder,
      threads: ws.store.threads,
      checkpointer: ws.store.checkpointer,
      blobs: ws.store.blobs,
      manager: ws.manager,
      config,
      sandbox: () => this.workspaces.sandbox(ws),
      bashTimeoutMs: config.sandbox.bash_timeout_seconds * 1000,
      // The user's policy from user/machine settings (the host never sends workspace values); a server's from its configuration.
      ...(approval ? { approval } : {}),
      ...(memory ? { memory } : {}),
      // Project skills only in a trusted workspace (VS Code's trust, as the host reports it).
      skills: { workspaceFolder: ws.folder, workspaceTrusted: this.session.settings.workspace_trusted, dataDir: this.session.dataDir, ...(config.skills ? { config: config.skills } : {}), warn: (m) => this.log.warn(m) },
      mcp: (sandbox) => ({ registry: this.workspaces.mcpRegistry(ws, sandbox), toolSearch: toolSearchSettings(config.tool_search) }),
    };
  }

  /** The model of a run that names none, and the ad-hoc endpoint of `deerflow serve --base-url` (never for a configured model). */
  modelDefaults(model: string | undefined): { model?: string; baseURL?: string } {
    const name = model ?? this.defaults.model;
    const configured = name !== undefined && this.session.config.models.some((m) => m.name === name);
    return { ...(name !== undefined ? { model: name } : {}), ...(this.defaults.baseURL && !configured && (model === undefined || model === this.defaults.model) ? { baseURL: this.defaults.baseURL } : {}) };
  }

  private launch(ws: OpenWorkspace, p: Omit<LaunchRequest, "apiKey" | "heldKey" | "createThread" | "context" | "baseURL">): RequestResult<"runs/start"> {
    if (ws.clearing.has(p.threadId)) throw new HarnessError("thread_busy", "The thread's viewed images are being cleared; start the run again in a moment.");
    const launched = launchRun(
      this.services(ws),
      // Every model of the run (lead, title, summary, subagent types) gets the key held for its own api_key_env.
      { ...p, ...this.modelDefaults(p.model), planMode: p.planMode ?? false, heldKey: (source) => this.session.apiKey(source) },
      { onCrash: (runId, err) => this.log.error(`Run ${runId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`) },
    );
    const { admission, context, sandbox, done } = launched;
    const run = admission.run;
    if (!done) return { run_id: run.run_id, thread_id: run.thread_id, existing: true };
    this.log.info(`Run ${run.run_id} started on thread ${p.threadId} (model ${context.model.name}, sandbox ${sandbox.kind}).`);
    const tracked = done
      .then((result) => this.announce(ws, run.run_id, result.errorCode))
      .catch((err: unknown) => this.log.error(`Announcing the end of run ${run.run_id} failed: ${errorMessage(err)}`))
      .finally(() => this.local.delete(run.run_id));
    this.local.set(run.run_id, { ws, run, done: tracked });
    return { run_id: run.run_id, thread_id: run.thread_id, existing: false };
  }

  /** `runs/ended`, with needsUser when the run stopped on a clarification question. */
  private async announce(ws: OpenWorkspace, runId: string, errorCode: string | undefined): Promise<void> {
    const cur = ws.manager.runs.get(runId);
    if (!cur || !(FINAL_STATUSES as readonly string[]).includes(cur.status)) return;
    const status = cur.status as FinalRunStatus;
    ws.store.threads.touch(cur.thread_id);
    const needsUser = status === "success" && (await this.askedUser(ws, cur));
    const pendingApprovals = status === "success" ? pendingOf(ws.manager.journal.events.endOf(runId)?.data) : [];
    this.log.info(`Run ${runId} ended: ${status}${cur.error ? ` (${cur.error})` : ""}${needsUser ? ", waiting for the user's answer" : ""}.`);
    this.sendEnded({
      workspaceFolder: ws.hostPath,
      threadId: cur.thread_id,
      runId,
      status,
      ...(cur.error ? { error: cur.error } : {}),
      ...(errorCode && status === "error" ? { errorCode } : {}),
      ...(needsUser ? { needsUser } : {}),
      ...(pendingApprovals.length > 0 ? { pendingApprovals } : {}),
    });
  }

  /** The end event's stop_reason when the worker records it; else the thread's messages say. */
  private async askedUser(ws: OpenWorkspace, run: RunRecord): Promise<boolean> {
    const end = ws.manager.journal.events.endOf(run.run_id);
    if ((end?.data as { stop_reason?: unknown } | undefined)?.stop_reason === "clarification") return true;
    const tuple = await ws.store.checkpointer.getTuple({ configurable: { thread_id: run.thread_id, checkpoint_ns: "" } });
    const messages = tuple?.checkpoint.channel_values.messages as BaseMessage[] | undefined;
    return messages ? awaitingClarification(messages) : false;
  }

  /**
   * A run of another process (a second window on the folder, the CLI) ended, as seen by a
   * subscription following the database: announced like this process's own runs.
   */
  foreignEvent(ws: OpenWorkspace, e: StoredEvent): void {
    if (e.event !== "end" || this.local.has(e.run_id) || this.foreignAnnounced.has(e.run_id)) return;
    this.foreignAnnounced.add(e.run_id);
    if (this.foreignAnnounced.size > 1000) this.foreignAnnounced.delete(this.foreignAnnounced.values().next().value!);
    const d = e.data as { status: FinalRunStatus; error?: string; error_code?: string; stop_reason?: string };
    const pendingApprovals = d.status === "success" ? pendingOf(e.data) : [];
    this.sendEnded({
      workspaceFolder: ws.hostPath,
      threadId: e.thread_id,
      runId: e.run_id,
      status: d.status,
      ...(d.error ? { error: d.error } : {}),
      ...(d.status === "error" && d.error_code ? { errorCode: d.error_code } : {}),
      ...(d.status === "success" && d.stop_reason === "clarification" ? { needsUser: true } : {}),
      ...(pendingApprovals.length > 0 ? { pendingApprovals } : {}),
    });
  }

  cancel(p: RequestParams<"runs/cancel">): RequestResult<"runs/cancel"> {
    const ws = this.workspaces.get(p.workspaceFolder);
    const { outcome, run } = ws.manager.cancel(p.runId);
    return { outcome, ...(run ? { status: ws.manager.runs.get(run.run_id)?.status ?? run.status } : {}) };
  }

  list(p: RequestParams<"runs/list">): RequestResult<"runs/list"> {
    const ws = this.workspaces.get(p.workspaceFolder);
    return ws.manager.runs.listByThread(p.threadId).map(runSummary);
  }

  /** Ends when the thread's run (if any) has stopped: threads/delete waits for it. */
  async stopThreadRuns(ws: OpenWorkspace, threadId: string): Promise<void> {
    const active = ws.manager.runs.active(threadId);
    if (!active) return;
    const { run } = ws.manager.cancel(active.run_id);
    if (run) await ws.manager.waitForEnd(run);
    await this.local.get(active.run_id)?.done;
  }

  /** How many runs this process is executing. */
  get activeCount(): number {
    return this.local.size;
  }

  /**
   * The host went away (a window reload restarts the extension host) while runs were going: let
   * them finish — the next window's harness follows them through the database — but no longer
   * than `limitMs`. Resolves true when they all ended on their own.
   */
  async finishAll(limitMs: number): Promise<boolean> {
    const pending = [...this.local.values()].map((r) => r.done);
    if (pending.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), limitMs)));
    const finished = await Promise.race([Promise.allSettled(pending).then(() => true as const), limit]);
    clearTimeout(timer);
    return finished;
  }

  /**
   * Graceful stop: each local run is moved to `interrupted` with the reason; its worker notices at
   * its next lease renewal (within a second) and journals the end itself. Whatever has not ended
   * after the grace period gets its end journaled here.
   */
  async shutdown(): Promise<void> {
    const runs = [...this.local.values()];
    if (runs.length === 0) return;
    for (const { ws, run } of runs) ws.manager.runs.finish(run.run_id, ACTIVE_STATUSES, "interrupted", { error: SHUTDOWN_REASON });
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)));
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), grace]);
    clearTimeout(timer);
    this.shutdownSync();
  }

  /** For the process's `exit` hook: synchronous, journals the end of every local run still open. */
  shutdownSync(): void {
    for (const { ws, run } of this.local.values()) {
      try {
        const cur = ws.manager.runs.get(run.run_id);
        if (cur && cur.ended_at === null) endRun(ws.manager, { runId: run.run_id, from: ACTIVE_STATUSES, status: "interrupted", error: SHUTDOWN_REASON });
      } catch (err) {
        this.log.warn(`Stopping run ${run.run_id} at shutdown failed: ${errorMessage(err)}`);
      }
    }
  }
}
