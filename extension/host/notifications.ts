/**
 * "Tell me when you need me": a run that ends waiting for the user's answer (clarification) or
 * approval of its tool calls, or fails, while the panel is not showing it, raises a notification with a way back to the panel.
 * Successful runs stay quiet: the status bar item disappearing says enough. A run refused because
 * the folder's dev container configuration is not approved asks for the approval instead
 * (devcontainerApproval.ts).
 */
import * as vscode from "vscode";
import type { HarnessClient } from "./harnessClient.js";
import { CONFIG_UNAPPROVED, reportApprovalFailure, type DevContainerApprovals } from "./devcontainerApproval.js";
import { describeCalls } from "./review/pending.js";

export interface NotifierDeps {
  harness: HarnessClient;
  approvals: DevContainerApprovals;
  log: vscode.LogOutputChannel;
  /** Whether the panel is visible and showing this thread. */
  showing: (threadId: string) => boolean;
  openPanel: () => Promise<void>;
  /** Opens the panel on this thread. */
  openThread: (threadId: string) => Promise<void>;
}

export function registerRunNotifications(deps: NotifierDeps): vscode.Disposable {
  return deps.harness.onNotification("runs/ended", (p) => {
    // Refused before it ran, for a configuration the user has not approved: asked whether the
    // panel shows the thread or not (its Allow is the way on), and the run is started again.
    if (p.status === "error" && p.errorCode === CONFIG_UNAPPROVED) {
      deps.approvals.ask(p.workspaceFolder, p.runId).catch((err: unknown) => reportApprovalFailure(deps.log, err));
      return;
    }
    if (deps.showing(p.threadId)) return;
    if (p.pendingApprovals && p.pendingApprovals.length > 0) {
      const openIt = "Open";
      void vscode.window.showWarningMessage(`DeerFlow needs your approval: ${describeCalls(p.pendingApprovals)}`, openIt).then(
        (choice) => (choice === openIt ? deps.openThread(p.threadId) : undefined),
      ).then(undefined, (err: unknown) => deps.log.error(`Opening the thread that waits for approval: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    const open = "Open DeerFlow";
    let shown: Thenable<string | undefined> | undefined;
    if (p.needsUser) {
      shown = vscode.window.showInformationMessage("DeerFlow is waiting for your answer.", open);
    } else if (p.status === "error" || p.status === "timeout") {
      const why = p.status === "timeout" ? "timed out" : `failed${p.error ? `: ${p.error}` : "."}`;
      shown = vscode.window.showErrorMessage(`DeerFlow run ${why}`, open);
    }
    void shown?.then((choice) => (choice === open ? deps.openPanel() : undefined));
  });
}

/** Folders whose bring-up progress a command shows itself (Rebuild Sandbox Container). */
const quieted = new Map<string, number>();

/** Until disposed, `registerSandboxProgress` leaves this folder's bring-up to the caller. */
export function quietSandboxProgress(workspaceFolder: string): vscode.Disposable {
  quieted.set(workspaceFolder, (quieted.get(workspaceFolder) ?? 0) + 1);
  return new vscode.Disposable(() => {
    const n = (quieted.get(workspaceFolder) ?? 1) - 1;
    if (n > 0) quieted.set(workspaceFolder, n);
    else quieted.delete(workspaceFolder);
  });
}

/**
 * Dev container bring-up can take minutes (image build, features): a progress notification
 * with the harness's bring-up lines, from `starting` until `ready` or `stopped`, per folder.
 */
export function registerSandboxProgress(harness: HarnessClient): vscode.Disposable {
  const open = new Map<string, { report: (detail: string) => void; done: () => void }>();
  const sub = harness.onNotification("sandbox/status", (p) => {
    const current = open.get(p.workspaceFolder);
    if (p.status !== "starting") {
      current?.done();
      open.delete(p.workspaceFolder);
      return;
    }
    if (current) {
      if (p.detail) current.report(p.detail);
      return;
    }
    if (quieted.has(p.workspaceFolder)) return;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "DeerFlow: starting the dev container" },
      (progress) =>
        new Promise<void>((resolve) => {
          open.set(p.workspaceFolder, { report: (message) => progress.report({ message }), done: resolve });
          if (p.detail) progress.report({ message: p.detail });
        }),
    );
  });
  return new vscode.Disposable(() => {
    sub.dispose();
    for (const p of open.values()) p.done();
    open.clear();
  });
}
