/**
 * What the panel shows and acts on: the workspace folder, the shown thread, its live event
 * subscription, the selected model and plan mode, pending attachments. The panel's messages and
 * the palette commands both go through here, so both do the same thing.
 *
 * Reload-proof by replay, not by keeping the webview alive (no retainContextWhenHidden): on
 * `ready` (a fresh document: the webview keeps only {threadId, lastSeq} in its saved state) the
 * thread comes back as one `state` snapshot, then journal events from the snapshot's seq (from
 * before an in-flight run, to rebuild its streaming message), then live. The host never resends
 * the history per token. While the view is hidden we hold no subscription; runs go on in the
 * harness, and the status bar and notifications keep the user informed.
 */
import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { stat } from "node:fs/promises";
import * as vscode from "vscode";
import type { HarnessClient } from "../harnessClient.js";
import type { JournalEvent, ThreadStateView, ThreadSummary } from "../../protocol/rpc.js";
import type { HostToWebview, ModelChoice, PanelStatus } from "../../protocol/webview.js";
import type { RunTracker } from "../runTracker.js";
import { CONTINUE_PROMPT, continueCheck } from "./continueRun.js";
import type { ContinueCheck } from "./continueRun.js";
import { retryPrompt } from "./retryRun.js";
import type { RetryPrompt } from "./retryRun.js";
import { EventFeed } from "./eventFeed.js";
import { isInside } from "./paths.js";
import { describeMemoryChange } from "../memoryChange.js";

export interface SessionDeps {
  harness: HarnessClient;
  log: vscode.LogOutputChannel;
  memento: vscode.Memento;
  runs: RunTracker;
  models: () => ModelChoice[];
  defaultModel: () => string | undefined;
  restriction: (folder: vscode.WorkspaceFolder | undefined) => Promise<string | undefined>;
}

/** What `prefetch` read while the view's document loaded. */
interface Prefetched {
  workspaceFolder: string;
  threadId: string | null;
  threads: ThreadSummary[];
  state: Promise<ThreadStateView> | undefined;
}

export class ThreadSession implements vscode.Disposable {
  private post: (msg: HostToWebview) => void = () => undefined;
  private threadId: string | null = null;
  private readonly feed: EventFeed;
  private activeRun: PanelStatus["run"];
  private sandbox: PanelStatus["sandbox"];
  /** The last memory change for the panel's folder (memory/changed), shown until the window reloads. */
  private memoryLine: string | undefined;
  private attachments: string[] = [];
  private attached = false;
  private prefetched: Promise<Prefetched | undefined> | undefined;
  private reloadOnStart = false;
  /** The last prompt this window sent on each thread (Retry sends it again; retryRun.ts). */
  private readonly lastPrompts = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly deps: SessionDeps) {
    this.feed = new EventFeed(
      deps.harness,
      // Events of a thread the panel has since left are dropped: it gets `state` for the new one.
      (threadId, events) => {
        if (threadId === this.threadId) this.post({ type: "events", threadId, events });
      },
      (e) => this.trackRun(e),
    );
    this.disposables.push(
      this.feed,
      deps.harness.onNotification("sandbox/status", (p) => {
        void this.folder(false).then((folder) => {
          if (!folder || folder.uri.fsPath !== p.workspaceFolder) return;
          const state = p.status === "starting" ? "starting" : p.status === "ready" ? "ready" : "stopped";
          this.sandbox = { kind: "devcontainer", state, ...(p.detail ? { detail: p.detail } : {}) };
          return this.pushStatus();
        });
      }),
      deps.harness.onNotification("memory/changed", (p) => {
        void this.folder(false).then((folder) => {
          if (!folder || folder.uri.fsPath !== p.workspaceFolder) return;
          this.memoryLine = describeMemoryChange(p, this.threadId);
          return this.pushStatus();
        });
      }),
      deps.harness.onNotification("runs/ended", (p) => {
        deps.runs.ended(p.runId);
        if (p.threadId === this.threadId && this.activeRun?.run_id === p.runId) {
          this.activeRun = undefined;
          void this.pushStatus();
        }
      }),
      // A new harness process: the old subscription died with it.
      deps.harness.onDidStart((s) => {
        if (this.reloadOnStart) {
          // Another harness altogether (remote/local, another server): show what it has.
          this.reloadOnStart = false;
          deps.runs.clear();
          this.feed.forget();
          if (this.attached) void this.guard(() => this.ready(this.threadId ?? undefined, undefined));
        } else if (s.generation > 1) {
          deps.runs.clear();
          this.feed.forget();
          if (this.attached && this.threadId) void this.guard(() => this.subscribe(this.threadId!, this.feed.lastSeq));
        }
      }),
    );
  }

  // ── the view ──────────────────────────────────────────────────────────────────────────

  /** The view appeared (or reloaded): the poster reaches it until `detach`. */
  attach(post: (msg: HostToWebview) => void): void {
    this.post = post;
    this.attached = true;
  }

  /** The view is hidden or gone: stop following; nothing is lost (replay on `ready`). */
  detach(): void {
    this.attached = false;
    this.prefetched = undefined;
    this.post = () => undefined;
    void this.feed.drop();
  }

  get shownThreadId(): string | null {
    return this.threadId;
  }

  /**
   * The view is being shown and its document is loading: read the thread list and the shown
   * thread's state now, so `ready` finds them (or finds them on the way) instead of asking the
   * harness only once the document has loaded. A snapshot read early is as good as one read on
   * `ready`: the subscription continues from its `last_seq`, so nothing after it is missed.
   */
  prefetch(): void {
    const threadId = this.threadId;
    const read = this.folder(false).then(async (folder) => {
      if (!folder) return undefined;
      const workspaceFolder = folder.uri.fsPath;
      const threads = this.deps.harness.request("threads/list", { workspaceFolder });
      const state = threadId ? this.deps.harness.request("threads/state", { workspaceFolder, threadId }) : undefined;
      // Whoever takes it awaits it; one left untaken must not be an unhandled rejection.
      state?.catch(() => undefined);
      return { workspaceFolder, threadId, threads: await threads, state };
    });
    read.catch(() => undefined);
    this.prefetched = read;
  }

  /** The prefetched reads, once, if they are for `workspaceFolder` (undefined when none or failed). */
  private async takePrefetched(workspaceFolder: string): Promise<Prefetched | undefined> {
    const read = this.prefetched;
    this.prefetched = undefined;
    const got = await read?.catch(() => undefined);
    return got?.workspaceFolder === workspaceFolder ? got : undefined;
  }

  /** `ready` from the webview: init, then the thread from where the webview left off. */
  async ready(savedThreadId: string | undefined, savedSeq: number | undefined): Promise<void> {
    await this.feed.stop();
    const folder = await this.folder(true);
    const early = folder ? await this.takePrefetched(folder.uri.fsPath) : undefined;
    const threads = early?.threads ?? (folder ? await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath }) : []);
    const wanted = [savedThreadId, this.threadId].find((id) => id && threads.some((t) => t.thread_id === id));
    this.threadId = wanted ?? threads[0]?.thread_id ?? null;
    const shown = threads.find((t) => t.thread_id === this.threadId);
    this.activeRun = activeRunOf(shown);
    this.post({ type: "init", threads: this.scrub(threads, folder), threadId: this.threadId, models: this.deps.models(), model: this.model() ?? null, modelChosen: this.modelChosen(), planMode: this.planMode });
    this.postAttachments();
    await this.pushStatus();
    if (!this.threadId) return;
    // `ready` comes from a fresh document: whatever the webview rendered before (up to
    // `savedSeq`) is gone with it; only {threadId, lastSeq} survive in its saved state. So the
    // thread comes back as one `state` snapshot, then the journal from there, live.
    if (savedSeq !== undefined) this.deps.log.debug(`Panel reloaded at seq ${savedSeq} of ${this.threadId}; replaying.`);
    await this.showThread(this.threadId, early?.threadId === this.threadId ? early.state : undefined);
  }

  // ── actions (panel messages and commands) ─────────────────────────────────────────────

  async send(text: string): Promise<void> {
    await this.start(text, [...this.attachments]);
    this.attachments = [];
    this.postAttachments();
  }

  /**
   * Continue after a run that stopped at its turn budget (issue 20): the next run on the shown
   * thread with the prompt "Continue", through the same runs/start as a typed message. The
   * attachments waiting in the composer stay for the user's next message. Refused, with the
   * reason, when the thread's state does not show a turn-capped ending (continueRun.ts).
   */
  async continueRun(): Promise<ContinueCheck & { runId?: string }> {
    const folder = await this.requireFolder();
    const threadId = this.threadId;
    if (!threadId) return { ok: false, reason: "Open a thread first." };
    const check = continueCheck(await this.deps.harness.request("threads/state", { workspaceFolder: folder.uri.fsPath, threadId }));
    if (!check.ok) return check;
    return { ok: true, runId: await this.start(CONTINUE_PROMPT, [], threadId) };
  }

  /**
   * Retry after a failed model request (issue 30 item 2): the thread's last prompt again, through
   * the same runs/start as a typed message. Refused, with the reason, while a run is active or
   * when the thread has no prompt (retryRun.ts).
   */
  async retry(): Promise<RetryPrompt & { runId?: string }> {
    const folder = await this.requireFolder();
    const threadId = this.threadId;
    if (!threadId) return { ok: false, reason: "Open a thread first." };
    const state = await this.deps.harness.request("threads/state", { workspaceFolder: folder.uri.fsPath, threadId });
    const check = retryPrompt(state, this.lastPrompts.get(threadId));
    if (!check.ok) return check;
    return { ...check, runId: await this.start(check.prompt, [], threadId) };
  }

  /** One run through runs/start on `threadId` (the shown thread; a new one when there is none). */
  private async start(text: string, files: string[], threadId?: string): Promise<string> {
    const folder = await this.requireFolder();
    // The harness's own refusal names CLI flags; the panel's start state has the button (issue 30 item 1).
    if (this.deps.models().length === 0) throw new Error("DeerFlow has no model yet: use Add Model… above the message box, then send again.");
    if (!threadId && !this.threadId) await this.newThread();
    threadId ??= this.threadId!;
    const model = this.model();
    const res = await this.deps.harness.request("runs/start", {
      workspaceFolder: folder.uri.fsPath,
      threadId,
      prompt: text,
      ...(files.length > 0 ? { files } : {}),
      ...(model ? { model } : {}),
      planMode: this.planMode,
      idempotencyKey: randomUUID(),
      // A message typed while calls wait is the answer to them: "no, and here is why" (issue 30 item 4).
      rejectPending: true,
    });
    this.deps.runs.started(res.run_id, res.thread_id);
    this.lastPrompts.set(res.thread_id, text);
    if (res.thread_id === this.threadId) {
      this.activeRun = { run_id: res.run_id, status: "pending" };
      await this.pushStatus();
    }
    return res.run_id;
  }

  async cancel(): Promise<boolean> {
    const folder = await this.requireFolder();
    let runId = this.activeRun?.run_id;
    if (!runId && this.threadId) {
      const threads = await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath });
      runId = threads.find((t) => t.thread_id === this.threadId)?.active_run?.run_id;
    }
    if (!runId) return false;
    const res = await this.deps.harness.request("runs/cancel", { workspaceFolder: folder.uri.fsPath, runId });
    this.deps.log.info(`Cancel ${runId}: ${res.outcome}`);
    if (res.outcome !== "cancelled") this.deps.runs.ended(runId);
    return res.outcome === "cancelled";
  }

  async newThread(): Promise<ThreadSummary> {
    const folder = await this.requireFolder();
    const created = await this.deps.harness.request("threads/create", { workspaceFolder: folder.uri.fsPath });
    this.threadId = created.thread_id;
    this.activeRun = undefined;
    await this.pushThreads();
    await this.showThread(created.thread_id);
    await this.pushStatus();
    return created;
  }

  async selectThread(threadId: string): Promise<void> {
    const folder = await this.requireFolder();
    const threads = await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath });
    const found = threads.find((t) => t.thread_id === threadId);
    if (!found) throw new Error("That thread no longer exists.");
    this.threadId = threadId;
    this.activeRun = activeRunOf(found);
    this.post({ type: "threads", threads: this.scrub(threads, folder), threadId });
    await this.showThread(threadId);
    await this.pushStatus();
  }

  async renameThread(threadId: string, title: string): Promise<void> {
    const folder = await this.requireFolder();
    await this.deps.harness.request("threads/rename", { workspaceFolder: folder.uri.fsPath, threadId, title });
    await this.pushThreads();
  }

  async deleteThread(threadId: string): Promise<void> {
    const folder = await this.requireFolder();
    await this.deps.harness.request("threads/delete", { workspaceFolder: folder.uri.fsPath, threadId });
    if (threadId !== this.threadId) {
      await this.pushThreads();
      return;
    }
    await this.feed.stop();
    const threads = await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath });
    this.threadId = threads[0]?.thread_id ?? null;
    this.activeRun = activeRunOf(threads[0]);
    this.post({ type: "threads", threads: this.scrub(threads, folder), threadId: this.threadId });
    if (this.threadId) await this.showThread(this.threadId);
    await this.pushStatus();
  }

  async clearViewedImages(): Promise<void> {
    const folder = await this.requireFolder();
    if (!this.threadId) return;
    await this.deps.harness.request("images/clear", { workspaceFolder: folder.uri.fsPath, threadId: this.threadId });
    // The cache lives in thread state; show the state as it is now (a rare, user-driven reset).
    await this.showThread(this.threadId);
  }

  async image(sha256: string): Promise<void> {
    const folder = await this.requireFolder();
    const img = await this.deps.harness.request("images/get", { workspaceFolder: folder.uri.fsPath, sha256 });
    const dataUrl = img && /^image\/[a-z0-9.+-]+$/i.test(img.mime_type) ? `data:${img.mime_type};base64,${img.base64}` : null;
    this.post({ type: "image", sha256, dataUrl });
  }

  async attachFiles(uris?: readonly vscode.Uri[]): Promise<void> {
    const folder = await this.folder(false);
    const picked =
      uris ??
      (await vscode.window.showOpenDialog({
        canSelectMany: true,
        openLabel: "Attach",
        title: "DeerFlow: Attach Files",
        ...(folder ? { defaultUri: folder.uri } : {}),
      }));
    if (!picked) return;
    for (const uri of picked) if (uri.scheme === "file" && !this.attachments.includes(uri.fsPath)) this.attachments.push(uri.fsPath);
    this.postAttachments();
  }

  removeAttachment(index: number): void {
    this.attachments.splice(index, 1);
    this.postAttachments();
  }

  get pendingAttachments(): readonly string[] {
    return this.attachments;
  }

  selectModel(name: string): void {
    if (!this.deps.models().some((m) => m.name === name)) throw new Error(`Unknown model "${name}".`);
    void this.deps.memento.update("deerflow.model", name);
    this.postModel();
  }

  setPlanMode(enabled: boolean): void {
    void this.deps.memento.update("deerflow.planMode", enabled);
    this.postModel();
  }

  get planMode(): boolean {
    return this.deps.memento.get<boolean>("deerflow.planMode", false);
  }

  /** The name `model`'s API key goes by (its api_key_env), when it is a configured endpoint model. */
  keyNameOf(model: string): string | undefined {
    return this.deps.models().find((m) => m.name === model)?.key_name;
  }

  /** The user chose the model (it is still on the list), or configured a default that is. */
  modelChosen(): boolean {
    const choices = this.deps.models();
    return [this.deps.memento.get<string>("deerflow.model"), this.deps.defaultModel()].some((n) => n !== undefined && choices.some((m) => m.name === n));
  }

  /** The chosen model if it is still configured, else the default, else the first. */
  model(): string | undefined {
    const choices = this.deps.models();
    const chosen = this.deps.memento.get<string>("deerflow.model");
    if (chosen && choices.some((m) => m.name === chosen)) return chosen;
    const def = this.deps.defaultModel();
    if (def && choices.some((m) => m.name === def)) return def;
    return choices[0]?.name;
  }

  /** The client moved to another harness: once it is up, the panel starts over from its thread list. */
  reload(): void {
    this.reloadOnStart = true;
    this.prefetched = undefined;
    this.feed.forget();
  }

  /** Settings or trust changed: the picker and the restriction line may differ now. */
  async refresh(): Promise<void> {
    if (!this.attached) return;
    this.postModelsInit();
    await this.pushStatus();
  }

  // ── workspace folder ──────────────────────────────────────────────────────────────────

  /** The folder threads belong to; with several, the remembered choice or a QuickPick. */
  async folder(ask: boolean): Promise<vscode.WorkspaceFolder | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length <= 1) return folders[0];
    const remembered = this.deps.memento.get<string>("deerflow.folder");
    const found = folders.find((f) => f.uri.toString() === remembered);
    if (found || !ask) return found ?? folders[0];
    return (await this.pickFolder()) ?? folders[0];
  }

  async pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length <= 1) return folders[0];
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: "The workspace folder DeerFlow's threads belong to" });
    if (!picked) return undefined;
    const changed = picked.uri.toString() !== this.deps.memento.get<string>("deerflow.folder");
    await this.deps.memento.update("deerflow.folder", picked.uri.toString());
    if (changed && this.attached) {
      await this.feed.stop();
      this.threadId = null;
      await this.ready(undefined, undefined);
    }
    return picked;
  }

  async requireFolder(): Promise<vscode.WorkspaceFolder> {
    const folder = await this.folder(false);
    if (!folder) throw new Error("Open a folder first: DeerFlow's threads live in a workspace folder.");
    return folder;
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────

  /** Runs an action; a failure becomes a panel error and a log line, never an unhandled rejection. */
  async guard(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.deps.log.error(message);
      this.post({ type: "error", message });
    }
  }

  /** Posts the thread's `state` (read now, or the `read` already under way), then follows it. */
  private async showThread(threadId: string, read?: Promise<ThreadStateView>): Promise<void> {
    const folder = await this.requireFolder();
    await this.feed.stop();
    const state = await (read ?? this.deps.harness.request("threads/state", { workspaceFolder: folder.uri.fsPath, threadId }));
    if (this.threadId !== threadId) return;
    // A run in flight has its AI message only in the journal yet: replay from before the run.
    // The snapshot then says it is current up to there, so the webview applies the replayed
    // events (messages already in the snapshot repeat by id and merge).
    const from = state.active_run ? Math.min(state.active_run.after_seq, state.last_seq) : state.last_seq;
    if (state.active_run && (state.active_run.status === "pending" || state.active_run.status === "running")) {
      this.activeRun = { run_id: state.active_run.run_id, status: state.active_run.status };
    }
    this.post({ type: "state", state: { ...this.scrubState(state, folder), last_seq: from } });
    await this.subscribe(threadId, from);
  }

  private async subscribe(threadId: string, afterSeq: number): Promise<void> {
    if (!this.attached) return;
    const folder = await this.requireFolder();
    await this.feed.follow(folder.uri.fsPath, threadId, afterSeq, () => this.attached && this.threadId === threadId);
  }

  /** The run status line follows the thread's own events. */
  private trackRun(e: JournalEvent): void {
    if (e.event === "metadata") {
      this.activeRun = { run_id: e.run_id, status: "running" };
      this.deps.runs.started(e.run_id, e.thread_id);
      void this.pushStatus();
    } else if (e.event === "end") {
      this.deps.runs.ended(e.run_id);
      if (this.activeRun?.run_id === e.run_id) this.activeRun = undefined;
      void this.pushStatus();
      // A finished run may have a new title.
      void this.guard(() => this.pushThreads());
    }
  }

  private async pushThreads(): Promise<void> {
    const folder = await this.folder(false);
    const threads = folder ? await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath }) : [];
    this.post({ type: "threads", threads: this.scrub(threads, folder), threadId: this.threadId });
  }

  private async pushStatus(): Promise<void> {
    const folder = await this.folder(false);
    const restriction = await this.deps.restriction(folder);
    const status: PanelStatus = {};
    if (this.activeRun) status.run = this.activeRun;
    if (this.sandbox) status.sandbox = this.sandbox;
    if (restriction) status.restriction = restriction;
    if (this.memoryLine) status.memory = this.memoryLine;
    this.post({ type: "status", status });
  }

  private postModel(): void {
    const model = this.model();
    if (model) this.post({ type: "model", model, modelChosen: this.modelChosen(), planMode: this.planMode });
  }

  private postModelsInit(): void {
    // `init` is the only message carrying the model list; re-send it with the current threads unchanged.
    void this.guard(async () => {
      const folder = await this.folder(false);
      const threads = folder ? await this.deps.harness.request("threads/list", { workspaceFolder: folder.uri.fsPath }) : [];
      this.post({ type: "init", threads: this.scrub(threads, folder), threadId: this.threadId, models: this.deps.models(), model: this.model() ?? null, modelChosen: this.modelChosen(), planMode: this.planMode });
    });
  }

  private postAttachments(): void {
    // Names and sizes only: the host paths stay here.
    void Promise.all(
      this.attachments.map(async (p) => ({ name: basename(p), size: await stat(p).then((s) => s.size, () => 0) })),
    ).then((files) => this.post({ type: "attachments", files }));
  }

  /** Thread summaries name their folder; only folders of this workspace go to the webview. */
  private scrub(threads: ThreadSummary[], folder: vscode.WorkspaceFolder | undefined): ThreadSummary[] {
    return threads.map((t) => ({ ...t, workspace_folder: folder && isInside(folder.uri.fsPath, t.workspace_folder) ? t.workspace_folder : "" }));
  }

  /** Artifacts carry host paths; keep those inside the folder, blank any other. */
  private scrubState(state: ThreadStateView, folder: vscode.WorkspaceFolder): ThreadStateView {
    return { ...state, artifacts: state.artifacts.map((a) => ({ ...a, host_path: isInside(folder.uri.fsPath, a.host_path) ? a.host_path : "" })) };
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

function activeRunOf(t: ThreadSummary | undefined): PanelStatus["run"] {
  const run = t?.active_run;
  return run && (run.status === "pending" || run.status === "running") ? { run_id: run.run_id, status: run.status } : undefined;
}
