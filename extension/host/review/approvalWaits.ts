/**
 * Which threads wait on the user's approval of tool calls (issue 13), as far as this window
 * knows: a run ended paused (`runs/ended` with `pendingApprovals`), or the panel read a thread's
 * state or journal that says so. A later run of the thread, or a decision, clears it. Feeds the
 * status bar ("DeerFlow: needs approval"); the harness's checkpoint is the truth.
 */
import * as vscode from "vscode";
import type { PendingApproval } from "../../protocol/approvals.js";
import type { HarnessClient } from "../harnessClient.js";

export class ApprovalWaits implements vscode.Disposable {
  private readonly waiting = new Map<string, readonly PendingApproval[]>();
  private readonly changed = new vscode.EventEmitter<number>();
  readonly onDidChange = this.changed.event;
  private readonly listener: vscode.Disposable;

  constructor(harness: HarnessClient) {
    // Every run's end says whether its thread now waits (a run that did not pause clears it).
    this.listener = harness.onNotification("runs/ended", (p) => this.set(p.threadId, p.pendingApprovals ?? []));
  }

  set(threadId: string, pending: readonly PendingApproval[]): void {
    const had = this.waiting.has(threadId);
    if (pending.length > 0) this.waiting.set(threadId, pending);
    else this.waiting.delete(threadId);
    if (had !== pending.length > 0) this.changed.fire(this.waiting.size);
  }

  get count(): number {
    return this.waiting.size;
  }

  dispose(): void {
    this.listener.dispose();
    this.changed.dispose();
  }
}
