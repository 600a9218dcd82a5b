/**
 * Typed errors with stable codes. Callers branch on `code`, never on message text.
 * Messages are written for the person (or model) who must act on them.
 */
export type HarnessErrorCode =
  | "invalid_thread_id"
  | "thread_not_found"
  /** A thread created with an id another thread already has (serve's POST /threads: LangGraph's 409). */
  | "thread_exists"
  /** serve: the token's event streams are at their cap (serve/streamSlots.ts): a 429. */
  | "too_many_streams"
  | "workspace_mismatch"
  | "unknown_model"
  | "no_models"
  | "model_endpoint"
  /** A VS Code language model (vscode-lm:…) was named where no editor serves it (the CLI, issue 25). */
  | "vscode_lm_unavailable"
  | "sandbox_runtime"
  /** Dev container sandbox: no Docker engine answers on the socket. */
  | "sandbox_engine_unavailable"
  /** Dev container sandbox: `devcontainer up` failed (broken devcontainer.json, missing image, build error). */
  | "sandbox_bringup_failed"
  /** Dev container sandbox: the container stopped or vanished while a command ran. */
  | "sandbox_container_lost"
  /** Dev container sandbox: it cannot be rebuilt now (a run is using it). */
  | "sandbox_busy"
  /**
   * Dev container sandbox: the folder's configuration (devcontainer.json and what it names) is
   * not approved by the user, or changed since; nothing was brought up (devcontainer/approvals.ts).
   */
  | "sandbox_config_unapproved"
  /**
   * Dev container sandbox: the container does not have DeerFlow's read-only mounts of the paths
   * that make the host run code (a running container made without them, a Compose configuration,
   * a workspaceMount DeerFlow cannot map); no command runs in it (devcontainer/protectedMounts.ts).
   */
  | "sandbox_unprotected"
  /**
   * A command in the dev container created or changed a path that makes the host run code, which
   * the read-only mounts could not stop (a new nested `.git`, a new `.envrc`): the run ends before
   * its next step (devcontainer/protectedWatch.ts, middlewares/sandboxAudit.ts).
   */
  | "sandbox_tampered"
  | "path_denied"
  /** files/read: the file asked for does not exist (any more). */
  | "file_not_found"
  /** files/read: the file is larger than one answer carries. */
  | "file_too_large"
  /** A write the trust boundary refuses because it could make code run on the host (trust/protectedPaths.ts). */
  | "path_protected"
  /** A thread folder (.deerflow, uploads, outputs) is a symlink or not a folder: never followed (trust/threadFolders.ts). */
  | "thread_folder_redirected"
  | "usage"
  | "storage"
  /** No SQLite driver works on this runtime (better-sqlite3's binary does not load, no node:sqlite). */
  | "storage_unavailable"
  | "thread_busy"
  /** The thread waits on the user's decision on tool calls (issue 13): decide them, or interrupt. */
  | "approval_pending"
  | "run_not_found"
  /** Long-term memory (issue 15): the stored or submitted document is not valid JSON or not memory-shaped; nothing was changed. */
  | "memory_invalid"
  /** Long-term memory (issue 21): the fact or workspace section asked for (memory/promote) is not in the memory. */
  | "memory_not_found"
  /** Manual compaction (issue 15): every summary model failed (the configured one, then the run's); nothing was written. */
  | "summary_failed"
  /** Skills (issue 24): no skill of that name in the workspace's skill roots. */
  | "skill_not_found"
  /** Manual compaction: cancelled (deerflow cancel, runs/cancel) before its summary was written; nothing was written. */
  | "cancelled"
  /** MCP (issue 23): a server named in a request is not in the folder's configuration. */
  | "mcp_server_not_found"
  /** MCP: the server's entry changed since it was shown (its fingerprint differs): nothing was approved. */
  | "mcp_config_changed"
  /** Harness RPC: a request's params do not match the protocol (extension/protocol/rpc.ts). */
  | "invalid_params"
  /** Harness RPC: a request arrived before `harness/initialize`. */
  | "not_initialized"
  /** Harness RPC: an unexpected failure (a bug); the message says what failed. */
  | "internal";

export class HarnessError extends Error {
  constructor(
    readonly code: HarnessErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "HarnessError";
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
