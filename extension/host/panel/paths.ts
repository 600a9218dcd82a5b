/**
 * Virtual paths (what the model and the panel see) → files in the workspace folder, for opening
 * and revealing. The mapping is the harness's (threads/threadDirs.ts); it is repeated here, not
 * imported, so the extension bundle carries no harness code. The webview names only virtual
 * paths; whatever it sends, the result must stay inside the folder, symlinks resolved.
 */
import { realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

const PREFIX = "/mnt/user-data/";
const THREAD_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The host file for `virtualPath` in `threadId`'s data, or undefined when it maps nowhere safe. */
export function hostPathOf(folder: string, threadId: string, virtualPath: string): string | undefined {
  if (!THREAD_ID.test(threadId) || !virtualPath.startsWith(PREFIX)) return undefined;
  const rest = virtualPath.slice(PREFIX.length).split("/").filter((s) => s !== "" && s !== ".");
  if (rest.some((s) => s === ".." || s.includes("\\") || s.includes("\0"))) return undefined;
  const [area, ...tail] = rest;
  const root = resolve(folder);
  const threadBase = join(root, ".deerflow", "threads", threadId);
  const base = area === "workspace" ? root : area === "outputs" ? join(threadBase, "outputs") : area === "uploads" ? join(threadBase, "uploads") : undefined;
  if (base === undefined) return undefined;
  const target = join(base, ...tail);
  return isInside(root, target) ? target : undefined;
}

/** The thread's outputs folder on the host. */
export function outputsDirOf(folder: string, threadId: string): string | undefined {
  return hostPathOf(folder, threadId, "/mnt/user-data/outputs");
}

/** Like hostPathOf, and the real (symlink-resolved) file is inside the folder too. */
export async function existingHostPathOf(folder: string, threadId: string, virtualPath: string): Promise<string | undefined> {
  const target = hostPathOf(folder, threadId, virtualPath);
  if (target === undefined) return undefined;
  try {
    const [realRoot, realTarget] = await Promise.all([realpath(folder), realpath(target)]);
    return isInside(realRoot, realTarget) ? realTarget : undefined;
  } catch {
    return undefined;
  }
}

export function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}
