/**
 * The panel's review part (issue 13): approval cards and each run's changed files.
 *
 * It rides on the panel's own message stream instead of a second subscription: `tap` wraps the
 * poster the ThreadSession uses, so every `state` snapshot and journal batch the webview gets is
 * seen here too, and the cards follow from them — `pending_approvals` of a snapshot (after a
 * reload or a thread switch), then `approval_requested` / the pause's end, cleared by
 * `approval_decided` or any later run. Changed files come from `changes/list` for the thread's
 * recent runs, and again for a run whose end names changed files or that a revert touched.
 *
 * Every action is checked against what the panel was shown (the thread, its pending calls, the
 * runs and paths listed): a webview message naming anything else is refused with a reason.
 */
import type * as vscode from "vscode";
import type { ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import type { ReviewToHost, RunChanges } from "../../protocol/review.js";
import type { HostToWebview } from "../../protocol/webview.js";
import type { HarnessClient } from "../harnessClient.js";
import type { ThreadSession } from "../panel/threadSession.js";
import type { RunTracker } from "../runTracker.js";
import type { ApprovalWaits } from "./approvalWaits.js";
import { openChangeDiff, revertChanges, runChanges, threadChanges } from "./changeReview.js";
import type { ReviewDocuments } from "./reviewDocuments.js";
import { pendingAfter } from "./pending.js";
import { openProposedDiff } from "./toolApprovals.js";

export interface ReviewDeps {
  harness: HarnessClient;
  session: ThreadSession;
  runs: RunTracker;
  waits: ApprovalWaits;
  docs: ReviewDocuments;
  log: vscode.LogOutputChannel;
}

export class PanelReview {
  private post: (m: HostToWebview) => void = () => undefined;
  /** The thread the webview was last shown (its `state`). */
  private threadId: string | null = null;
  private pending: PendingApproval[] = [];
  private changes: RunChanges[] = [];

  constructor(private readonly deps: ReviewDeps) {}

  /** The poster for a (re)loaded view: whatever goes through it is also read here. */
  tap(post: (m: HostToWebview) => void): (m: HostToWebview) => void {
    this.post = (m) => {
      try {
        post(m);
      } catch (err) {
        // A view disposed while a read was under way: it reloads from `ready` anyway.
        this.deps.log.debug(`Panel review: not delivered (${err instanceof Error ? err.message : String(err)})`);
      }
    };
    this.threadId = null;
    return (m) => {
      post(m);
      this.observe(m);
    };
  }

  private observe(m: HostToWebview): void {
    switch (m.type) {
      case "state": {
        const threadId = m.state.thread_id;
        const switched = threadId !== this.threadId;
        this.threadId = threadId;
        this.setPending(threadId, m.state.pending_approvals ?? []);
        if (switched) {
          this.changes = [];
          this.post({ type: "changes", threadId, runs: [] });
        }
        this.background(this.refreshAll(threadId));
        return;
      }
      case "init":
      case "threads":
        if (m.threadId === null && this.threadId !== null) {
          this.threadId = null;
          this.pending = [];
          this.changes = [];
          this.post({ type: "approvals", threadId: "", pending: [] });
          this.post({ type: "changes", threadId: "", runs: [] });
        }
        return;
      case "events": {
        const threadId = m.threadId;
        if (threadId !== this.threadId) return;
        let next: PendingApproval[] | undefined;
        for (const e of m.events) {
          next = pendingAfter(e) ?? next;
          const changed = e.event === "end" ? (e.data as { changed_files?: unknown }).changed_files : undefined;
          if (Array.isArray(changed) && changed.length > 0) this.background(this.refreshRun(threadId, e.run_id));
        }
        if (next !== undefined) this.setPending(threadId, next);
        return;
      }
      default:
        return;
    }
  }

  /** A review message from the webview (already schema-checked). */
  async handle(msg: ReviewToHost): Promise<void> {
    const workspaceFolder = (await this.deps.session.requireFolder()).uri.fsPath;
    switch (msg.type) {
      case "decide":
        return this.decide(workspaceFolder, msg.threadId, msg.decisions);
      case "openProposedDiff": {
        this.requireShown(msg.threadId);
        const call = this.pending.find((p) => p.tool_call_id === msg.toolCallId);
        if (!call) throw new Error("That tool call is no longer waiting for approval.");
        return openProposedDiff(this.deps.harness, this.deps.docs, workspaceFolder, msg.threadId, call);
      }
      case "openChangeDiff":
        this.requireListed(msg.runId, [msg.path]);
        return openChangeDiff(this.deps.harness, this.deps.docs, workspaceFolder, msg.runId, msg.path);
      case "revertChanges": {
        const threadId = this.requireListed(msg.runId, msg.paths ?? []);
        const files = await revertChanges(this.deps.harness, workspaceFolder, msg.runId, msg.paths);
        this.post({ type: "reverted", runId: msg.runId, files });
        for (const f of files) if (f.outcome === "refused") this.deps.log.info(`Revert of ${f.path} refused: ${f.reason ?? f.code ?? "no reason given"}`);
        await this.refreshRun(threadId, msg.runId);
        return;
      }
    }
  }

  private async decide(workspaceFolder: string, threadId: string, decisions: ApprovalDecision[]): Promise<void> {
    this.requireShown(threadId);
    const waiting = new Set(this.pending.map((p) => p.tool_call_id));
    const unknown = decisions.filter((d) => !waiting.has(d.tool_call_id)).map((d) => d.tool_call_id);
    if (unknown.length > 0) throw new Error(`Not waiting on ${unknown.join(", ")}: the thread's pending calls changed. Decide again on the cards shown.`);
    try {
      const model = this.deps.session.model();
      const res = await this.deps.harness.request("runs/decide", { workspaceFolder, threadId, decisions, ...(model ? { model } : {}) });
      this.deps.runs.started(res.run_id, res.thread_id);
      this.setPending(threadId, []);
    } catch (err) {
      // The cards are shown again as they were, so the user can decide again.
      if (this.threadId === threadId) this.post({ type: "approvals", threadId, pending: this.pending });
      throw err;
    }
  }

  private setPending(threadId: string, pending: PendingApproval[]): void {
    this.pending = pending;
    this.deps.waits.set(threadId, pending);
    this.post({ type: "approvals", threadId, pending });
  }

  private async refreshAll(threadId: string): Promise<void> {
    const workspaceFolder = (await this.deps.session.requireFolder()).uri.fsPath;
    const runs = await threadChanges(this.deps.harness, workspaceFolder, threadId);
    if (this.threadId !== threadId) return;
    this.changes = runs;
    this.post({ type: "changes", threadId, runs });
  }

  private async refreshRun(threadId: string, runId: string): Promise<void> {
    const workspaceFolder = (await this.deps.session.requireFolder()).uri.fsPath;
    const run = await runChanges(this.deps.harness, workspaceFolder, threadId, runId);
    if (this.threadId !== threadId || !run) return;
    const others = this.changes.filter((r) => r.run_id !== runId);
    this.changes = (run.files.length > 0 ? [run, ...others] : others).sort((a, b) => b.created_at.localeCompare(a.created_at));
    this.post({ type: "changes", threadId, runs: this.changes });
  }

  private requireShown(threadId: string): void {
    if (threadId !== this.threadId || threadId !== this.deps.session.shownThreadId) {
      throw new Error("That thread is not the one the panel shows any more.");
    }
  }

  /** The run is listed for the shown thread, with every path among its files; its thread. */
  private requireListed(runId: string, paths: readonly string[]): string {
    const run = this.changes.find((r) => r.run_id === runId);
    if (!run || !this.threadId || this.threadId !== this.deps.session.shownThreadId) {
      throw new Error("That run's changes are not shown in the panel any more.");
    }
    const missing = paths.filter((p) => !run.files.some((f) => f.path === p));
    if (missing.length > 0) throw new Error(`Not among that run's changed files: ${missing.join(", ")}.`);
    return this.threadId;
  }

  private background(work: Promise<void>): void {
    work.catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      this.deps.log.warn(`Panel review: ${message}`);
    });
  }
}
