/**
 * Where a thread's data lives on the host.
 *
 * DeerFlow keeps `{base}/users/{uid}/threads/{tid}/user-data/{workspace,uploads,outputs}`.
 * Here the thread's *workspace* is the VS Code workspace folder itself, and its uploads and
 * outputs live inside that folder under `.deerflow/threads/<thread_id>/`, so results arrive as
 * files the user can open. `.deerflow/.gitignore` (`*`) keeps them out of the user's repository.
 *
 * This module only names the folders (and checks the thread id). Creating them so that the sandbox
 * cannot redirect them (ensureThreadDirs) is the trust boundary's rule, in
 * trust/threadFolders.ts, which builds on these names as the path mapping
 * (sandbox/paths.ts) and the tools do.
 */
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

/**
 * Host directories of one thread. From ensureThreadDirs (trust/threadFolders.ts):
 * absolute, under the workspace's real path, and every folder below it checked to be a real
 * folder (no symlinks), so they are real paths too.
 */
export interface ThreadDirs {
  readonly threadId: string;
  /** `/mnt/user-data/workspace`: the workspace folder itself. */
  readonly workspace: string;
  /** `/mnt/user-data/uploads` */
  readonly uploads: string;
  /** `/mnt/user-data/outputs` */
  readonly outputs: string;
  /** `/mnt/skills`, read-only, when the run has skills (issue 24); absent → no such root. */
  readonly skills?: SkillsMount;
}

/** The run's skills as the sandbox sees them (skills/view.ts builds the folder). */
export interface SkillsMount {
  /** The host folder `/mnt/skills` maps to: the enabled-only view, regular files and folders only. */
  readonly root: string;
  /**
   * Disabled skills' virtual folders (`/mnt/skills/<scope>/<folder>`) → their names: a read
   * under one is answered with DeerFlow's "is disabled" text (they are not in the view).
   */
  readonly disabled: ReadonlyMap<string, string>;
}

export function threadDirs(workspaceFolder: string, threadId: string): ThreadDirs {
  validateThreadId(threadId);
  const workspace = resolve(workspaceFolder);
  const base = join(workspace, ".deerflow", "threads", threadId);
  return { threadId, workspace, uploads: join(base, "uploads"), outputs: join(base, "outputs") };
}
