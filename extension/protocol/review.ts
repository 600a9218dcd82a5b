/**
 * The panel's review messages (issue 13): approval cards for a paused run, and each run's
 * changed files with Open Diff / Revert. Type-only; part of the WebviewToHost / HostToWebview
 * unions (webview.ts). The host derives the views from the thread's journal and state
 * (extension/host/review), so the webview never has to understand approval events itself.
 */
import type { ApprovalDecision, PendingApproval } from "./approvals.js";
import type { ChangeStatus, RevertOutcome } from "./changes.js";

/** One file a run changed, as the panel lists it. */
export interface ChangedFileItem {
  /** Virtual path, `/mnt/user-data/...`. */
  path: string;
  status: ChangeStatus;
  /** A revert restored it already. */
  reverted: boolean;
}

/** One run's "Changed files (n)". */
export interface RunChanges {
  run_id: string;
  /** When the run was created (ISO), for the section's label. */
  created_at: string;
  files: ChangedFileItem[];
}

/** From the webview. The host checks every id and path against the shown thread before acting. */
export type ReviewToHost =
  /** Every pending call of the thread, decided at once (runs/decide). */
  | { type: "decide"; threadId: string; decisions: ApprovalDecision[] }
  /** Current ↔ proposed content of a pending write_file / str_replace, in VS Code's diff editor. */
  | { type: "openProposedDiff"; threadId: string; toolCallId: string }
  /** Before the run ↔ the file now. */
  | { type: "openChangeDiff"; runId: string; path: string }
  /** Revert these files of the run (all of them when `paths` is absent: Revert All). */
  | { type: "revertChanges"; runId: string; paths?: string[] };

/** To the webview; always about the shown thread. */
export type ReviewToWebview =
  /** The calls the thread waits on (empty: nothing pending, the cards go). */
  | { type: "approvals"; threadId: string; pending: PendingApproval[] }
  /** The thread's runs that changed files, newest first. */
  | { type: "changes"; threadId: string; runs: RunChanges[] }
  /** What a Revert did, per file (a refusal carries its reason). */
  | { type: "reverted"; runId: string; files: RevertOutcome[] };
