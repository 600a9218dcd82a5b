/**
 * Where a thread's data lives on the host.
 *
 * DeerFlow keeps `{base}/users/{uid}/threads/{tid}/user-data/{workspace,uploads,outputs}`.
 * Here the thread's *workspace* is the VS Code workspace folder itself, and its uploads and
 * outputs live inside that folder under `.deerflow/threads/<thread_id>/`, so results arrive as
 * files the user can open. `.deerflow/.gitignore` (`*`) keeps them out of the user's repository.
 */
import { mkdirSync, writeFileSync, existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { HarnessError } from "../errors.js";

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

/** Host directories of one thread. All absolute and symlink-resolved (realpath) once created. */
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
 * Create the thread's directories (idempotent) and return them with symlinks resolved, so that
 * later containment checks compare real paths with real paths.
 */
export function ensureThreadDirs(workspaceFolder: string, threadId: string): ThreadDirs {
  const dirs = threadDirs(workspaceFolder, threadId);
  if (!existsSync(dirs.workspace)) {
    throw new HarnessError("workspace_mismatch", `Workspace folder does not exist: ${dirs.workspace}`);
  }
  mkdirSync(dirs.uploads, { recursive: true });
  mkdirSync(dirs.outputs, { recursive: true });
  const ignore = join(dirs.workspace, ".deerflow", ".gitignore");
  if (!existsSync(ignore)) writeFileSync(ignore, "*\n");
  return {
    threadId,
    workspace: realpathSync(dirs.workspace),
    uploads: realpathSync(dirs.uploads),
    outputs: realpathSync(dirs.outputs),
  };
}
