/**
 * The one entry point for a path a tool got from the model: the path rules in the order they
 * apply. Tools and providers call these; none of them re-implements a rule.
 *
 * 1. the virtual path scheme (paths.ts): no `..`, only `/mnt/user-data/{workspace,uploads,outputs}`
 *    (and, for reading, `/mnt/skills` when the run has skills: writes there are refused outright);
 * 2. thread folders (threadFolders.ts): a path into uploads/outputs needs every folder from
 *    `.deerflow` down to be real, at this use, not only when the run started;
 * 3. writes only: protected paths (protectedPaths.ts), on the path and on where its links lead,
 *    unless the user approved this one write (approvals/, issue 13);
 * 4. containment (paths.ts): the real path stays in the thread's roots, out of other threads' data
 *    (the skills view counts as a root for reads only).
 *
 * Every refusal is a HarnessError whose message names no host path. The returned real path is
 * then opened with openChecked.ts, which catches a link swapped in after these checks.
 */
import { HarnessError } from "../errors.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { SKILLS_WRITE_MESSAGE, containedRealPath, isSkillsPath, mapVirtualPath, realPathAllowingMissing, rejectPathTraversal } from "../sandbox/paths.js";
import { assertWritable } from "./protectedPaths.js";
import { ensureThreadFolders, threadFolderOf } from "./threadFolders.js";

const REFUSAL_CODES = new Set<string>(["path_denied", "path_protected", "thread_folder_redirected"]);

/**
 * A refusal of this boundary (traversal, outside the roots, a protected path, a redirected thread
 * folder, a path swapped while opened): its message says why and names no host path, so the
 * tools show it to the model ("Permission denied ... (why)").
 */
export function isPathRefusal(err: unknown): err is HarnessError {
  return err instanceof HarnessError && REFUSAL_CODES.has(err.code);
}

/** Check the thread folder a host path lies in (the path as written, then where it leads). */
export function guardThreadFolders(hostPath: string, dirs: ThreadDirs, real?: string): void {
  const folder = threadFolderOf(hostPath, dirs) ?? (real !== undefined ? threadFolderOf(real, dirs) : undefined);
  if (folder) ensureThreadFolders(dirs, [folder]);
}

/** A model-supplied virtual path → the real host path it may read. */
export function resolveReadPath(virtualPath: string, dirs: ThreadDirs): string {
  const host = mapVirtualPath(virtualPath, dirs);
  guardThreadFolders(host, dirs);
  return containedRealPath(host, dirs, undefined, "read");
}

/**
 * A model-supplied virtual path → the real host path it may write (create, overwrite, edit).
 * Resolved once: the path classified is the path contained and returned, and openChecked.ts then
 * makes sure it is the file actually opened.
 */
export function resolveWritePath(virtualPath: string, dirs: ThreadDirs, options: { allowProtected?: boolean } = {}): string {
  // Skills are read-only whatever the run (DeerFlow's validate_local_tool_path, its exact text).
  rejectPathTraversal(virtualPath);
  if (isSkillsPath(virtualPath)) throw new HarnessError("path_denied", SKILLS_WRITE_MESSAGE(virtualPath));
  const host = mapVirtualPath(virtualPath, dirs);
  const real = realPathAllowingMissing(host);
  guardThreadFolders(host, dirs, real);
  // Only the approval middleware's decision for one call lifts this rule (approvals/, issue 13).
  if (!options.allowProtected) assertWritable(host, real, dirs);
  return containedRealPath(host, dirs, real);
}
