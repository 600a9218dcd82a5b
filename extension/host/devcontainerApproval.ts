/**
 * The user's yes to a dev container configuration, in the editor. When the harness refuses to
 * bring a folder's dev container up because its configuration is not approved
 * (`sandbox_config_unapproved`: a run that ended at once, a terminal, a rebuild), a warning says
 * what bringing it up would run on this machine and offers:
 * - "Show Config": opens the devcontainer.json, and asks again;
 * - "Allow": records the approval of exactly the fingerprint shown (`sandbox/approve`); a run that
 *   was refused is started again by the harness with the same input.
 * Dismissing it approves nothing. One prompt per folder at a time: runs refused while it is open
 * are started again together when the user allows.
 */
import { basename } from "node:path";
import * as vscode from "vscode";
import type { DevContainerApproval } from "../protocol/rpc.js";
import { HarnessRequestError, errorText, type HarnessClient } from "./harnessClient.js";

export const CONFIG_UNAPPROVED = "sandbox_config_unapproved";
export const SHOW_CONFIG = "Show Config";
export const ALLOW = "Allow";

export function isConfigUnapproved(err: unknown): boolean {
  return err instanceof HarnessRequestError && err.code === CONFIG_UNAPPROVED;
}

interface OpenPrompt {
  readonly runs: Set<string>;
  readonly done: Promise<boolean>;
}

export class DevContainerApprovals {
  private readonly open = new Map<string, OpenPrompt>();

  constructor(
    private readonly harness: HarnessClient,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /**
   * Asks the user; resolves true once the configuration is approved (false when dismissed).
   * `retryRunId`: a run refused for this reason, started again on Allow.
   */
  ask(workspaceFolder: string, retryRunId?: string): Promise<boolean> {
    const current = this.open.get(workspaceFolder);
    if (current) {
      if (retryRunId) current.runs.add(retryRunId);
      return current.done;
    }
    const runs = new Set<string>(retryRunId ? [retryRunId] : []);
    const done = this.prompt(workspaceFolder, runs).finally(() => this.open.delete(workspaceFolder));
    this.open.set(workspaceFolder, { runs, done });
    return done;
  }

  private async prompt(workspaceFolder: string, runs: Set<string>): Promise<boolean> {
    let approval = await this.harness.request("sandbox/approval", { workspaceFolder });
    let changed = false;
    for (;;) {
      if (approval.approved) return true;
      // A remote harness's config in a folder this window does not share cannot be shown here ("" path).
      const choice = await vscode.window.showWarningMessage(message(approval, changed), ...(approval.configPath ? [SHOW_CONFIG] : []), ALLOW);
      if (choice === SHOW_CONFIG) {
        await vscode.window.showTextDocument(vscode.Uri.file(approval.configPath), { preview: false });
        // What the user reads now is what they approve: fetched again after they looked.
        approval = await this.harness.request("sandbox/approval", { workspaceFolder });
        continue;
      }
      if (choice !== ALLOW) return false;
      try {
        await this.allow(workspaceFolder, approval.fingerprint, runs);
        return true;
      } catch (err) {
        // Edited after it was shown: show the new one rather than approve it unseen.
        if (!isConfigUnapproved(err)) throw err;
        changed = true;
        approval = await this.harness.request("sandbox/approval", { workspaceFolder });
      }
    }
  }

  private async allow(workspaceFolder: string, fingerprint: string, runs: Set<string>): Promise<void> {
    const pending = [...runs];
    const first = await this.harness.request("sandbox/approve", { workspaceFolder, fingerprint, ...(pending[0] ? { retryRunId: pending[0] } : {}) });
    const retried = [first.retried];
    for (const runId of pending.slice(1)) {
      retried.push((await this.harness.request("sandbox/approve", { workspaceFolder, fingerprint, retryRunId: runId })).retried);
    }
    const started = retried.filter((r) => r !== undefined).length;
    this.log.info(`Dev container configuration of ${workspaceFolder} approved (${fingerprint.slice(0, 16)})${started > 0 ? `; ${started} refused run(s) started again` : ""}.`);
    if (pending.length > 0 && started === 0) {
      void vscode.window.showInformationMessage("DeerFlow: the dev container configuration is approved. Send your message again to run it.");
    }
  }
}

/** What bringing the container up would run on this machine: the part a person must see. */
function message(a: DevContainerApproval, changed: boolean): string {
  const host = a.hostCommands.length > 0 ? `On every start it runs on this machine: ${a.hostCommands.join("; ")}.` : "It runs no command on this machine (no initializeCommand).";
  const env = a.localEnv.length > 0 ? ` It reads your environment variables ${a.localEnv.join(", ")}.` : "";
  const files = a.files.length > 1 ? ` Files: ${a.files.join(", ")}.` : "";
  const notes = a.notes.filter((n) => !n.includes("(in the container)"));
  const settings = notes.length > 0 ? ` Settings: ${notes.join("; ")}.` : "";
  const lead = changed ? "changed again after it was shown" : "is not approved";
  return `DeerFlow: the dev container configuration of ${basename(a.workspaceFolder)} ${lead}, so it was not started. ${host}${env}${files}${settings} Allow it?`;
}

export function reportApprovalFailure(log: vscode.LogOutputChannel, err: unknown): void {
  log.error(`Dev container approval: ${errorText(err)}`);
  void vscode.window.showErrorMessage(`DeerFlow: ${errorText(err)}`);
}
