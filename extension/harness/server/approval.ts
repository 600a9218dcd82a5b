/**
 * The panel's side of dev container approval: `sandbox/approval` shows what the user would
 * approve, `sandbox/approve` records "Allow" (devcontainer/approvals.ts, the same store the CLI's
 * `deerflow devcontainer approve` writes) and can start again the run that was refused for it.
 *
 * The host sends back the fingerprint it showed; an edit made in between is refused rather than
 * approved unseen.
 */
import type { DevContainerApproval, RequestParams, RequestResult } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { approveCurrent, ConfigApprovals } from "../sandbox/devcontainer/approvals.js";
import { readConfigSnapshot, type ConfigSnapshot } from "../sandbox/devcontainer/configSnapshot.js";
import type { Logger } from "./logger.js";
import type { Runs } from "./runs.js";
import type { Session } from "./session.js";
import type { OpenWorkspace, Workspaces } from "./workspaces.js";

export function approvalView(snapshot: ConfigSnapshot, approved: boolean): DevContainerApproval {
  return {
    workspaceFolder: snapshot.workspaceFolder,
    configPath: snapshot.configPath,
    fingerprint: snapshot.fingerprint,
    approved,
    files: snapshot.files.map((f) => f.rel),
    hostCommands: [...snapshot.hostCommands],
    localEnv: [...snapshot.localEnv],
    notes: [...snapshot.notes],
  };
}

export function sandboxApproval(workspaces: Workspaces, session: Session, p: RequestParams<"sandbox/approval">): RequestResult<"sandbox/approval"> {
  const { ws, approvals } = approvalsOf(workspaces, session, p.workspaceFolder);
  const snapshot = readConfigSnapshot(ws.folder);
  return approvalView(snapshot, approvals.has(snapshot.fingerprint));
}

export function approveSandbox(
  workspaces: Workspaces,
  session: Session,
  runs: Runs,
  log: Logger,
  p: RequestParams<"sandbox/approve">,
): RequestResult<"sandbox/approve"> {
  const { ws, approvals } = approvalsOf(workspaces, session, p.workspaceFolder);
  const snapshot = approveCurrent(approvals, p.fingerprint);
  log.info(`Dev container configuration of ${ws.folder} approved (fingerprint ${snapshot.fingerprint.slice(0, 16)}).`);
  const retried = p.retryRunId !== undefined ? runs.retryRefused(ws, p.retryRunId) : undefined;
  return { approval: approvalView(snapshot, true), ...(retried ? { retried } : {}) };
}

function approvalsOf(workspaces: Workspaces, session: Session, folder: string): { ws: OpenWorkspace; approvals: ConfigApprovals } {
  const ws = workspaces.get(folder);
  if (!session.settings.workspace_trusted) {
    throw new HarnessError("usage", "This workspace is not trusted, so its dev container configuration is not used: trust the workspace first.");
  }
  return { ws, approvals: new ConfigApprovals(session.dataDir, ws.folder) };
}
