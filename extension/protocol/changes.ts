/**
 * A run's changed files (issue 13, "Changed files, reviewable and revertible"), as the run's `end`
 * event, the `changes/*` requests and `deerflow changes` / `deerflow revert` show them.
 * Type-only: imported by the harness, the host and the webview alike.
 *
 * Only what the agent's file tools (write_file, str_replace) wrote is recorded; what bash changed
 * is not (a file bash changed after a tool wrote it shows its state at the run's end).
 */

/** added: absent before the run; deleted: absent after it (bash removed it); else modified. */
export type ChangeStatus = "added" | "modified" | "deleted";

/** One entry of the `end` event's `changed_files`. */
export interface ChangedFile {
  /** Virtual path, `/mnt/user-data/...` (workspace, uploads or outputs). */
  path: string;
  status: ChangeStatus;
}

/** `changes/list`, `deerflow changes`: one file the run changed. */
export interface FileChangeView extends ChangedFile {
  /** sha256 (hex) of the content before the run's first write; null when it did not exist. */
  before_sha256: string | null;
  /** sha256 of what the run left; null when it left no file (deleted, or not recorded: see below). */
  after_sha256: string | null;
  /** False only when the process died in the middle of the write: what it left is unknown. */
  after_recorded: boolean;
  /** The file on disk (host path), for a diff editor; inside the workspace folder. */
  host_path: string;
  /** The protected-path rule the file fell under when the run wrote it (a write the user approved). */
  protected_rule: string | null;
  /** Set once a revert restored the before-content (epoch ms, ISO in the CLI). */
  reverted_at: string | null;
}

/**
 * What a revert did to one file:
 * - reverted: the before-content is back (an added file is removed);
 * - unchanged: the file already has its before-content; nothing was written;
 * - refused: the file was left as it is, and `reason` says why (changed after the run, so the
 *   later edits are kept; a protected path without `allowProtected`; a path the trust boundary
 *   refuses now, e.g. a link planted since the run).
 */
export interface RevertOutcome {
  path: string;
  outcome: "reverted" | "unchanged" | "refused";
  /** refused: the stable reason code. */
  code?: "changed_since" | "after_unknown" | "protected" | "path_denied" | "not_in_run" | "failed";
  reason?: string;
}
