/**
 * Where a thread's data lives on the host.
 *
 * DeerFlow keeps `{base}/users/{uid}/threads/{tid}/user-data/{workspace,uploads,outputs}`.
 * Here the thread's *workspace* is the VS Code workspace folder itself, and its uploads and
 * outputs live inside that folder under `.deerflow/threads/<thread_id>/`, so results arrive as
 * files the user can open. `.deerflow/.gitignore` (`*`) keeps them out of the user's repository.
 */
import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { HarnessError } from "../errors.js";
import { ensureThreadDataIgnore, ensureThreadFolders } from "../sandbox/trust/threadFolders.js";

export const THREAD_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function validateThreadId(threadId: unknown): string {
  if (typeof threadId !== "string" || !THREAD_ID_PATTERN.test(threadId)) {
    throw new HarnessError(
      "invalid_thread_id",
      `Invalid thread_id ${JSON.stringify(threadId)}: use 1-64 characters from A-Z, a-z, 0-9, '_' and '-'.`,
    );
  }
  return threadId;
}

/**
 * Host directories of one thread. From ensureThreadDirs: absolute, under the workspace's real
 * path, and every folder below it checked to be a real folder (no symlinks), so they are real
 * paths too.
 */
export interface ThreadDirs {
  readonly threadId: string;
  /** `/mnt/user-data/workspace`: the workspace folder itself. */
  readonly workspace: string;
  /** `/mnt/user-data/uploads` */
  readonly uploads: string;
  /** `/mnt/user-data/outputs` */
  readonly outputs: string;
}

export function threadDirs(workspaceFolder: string, threadId: string): ThreadDirs {
  validateThreadId(threadId);
  const workspace = resolve(workspaceFolder);
  const base = join(workspace, ".deerflow", "threads", threadId);
  return { threadId, workspace, uploads: join(base, "uploads"), outputs: join(base, "outputs") };
}

/**
 * Create the thread's directories (idempotent) and return them as real paths, so that later
 * containment checks compare real paths with real paths.
 *
 * The workspace folder is the user's choice: a link to it is resolved, once. Below it nothing is
 * resolved: a symlink where `.deerflow`, `threads`, the thread's folder, `uploads` or `outputs`
 * should be is refused (HarnessError "thread_folder_redirected", see sandbox/trust/threadFolders.ts),
 * because the sandbox can plant one (it used to be followed, and the next run wrote wherever it led).
 */
export function ensureThreadDirs(workspaceFolder: string, threadId: string): ThreadDirs {
  const given = threadDirs(workspaceFolder, threadId);
  if (!existsSync(given.workspace)) {
    throw new HarnessError("workspace_mismatch", `Workspace folder does not exist: ${given.workspace}`);
  }
  const dirs = threadDirs(realpathSync(given.workspace), threadId);
  ensureThreadFolders(dirs);
  ensureThreadDataIgnore(dirs);
  return dirs;
}
