/**
 * Delivery check (DeerFlow worker `_verify_artifact_delivery`): a run that produced or changed
 * files under outputs but presented none of them is reported, not silently passed.
 * `.tool-results/` (ToolOutputBudget's spill files) never count as deliverables.
 *
 * The sandbox shapes the outputs tree, so the scan is the trust boundary's walk: the thread
 * folders are checked first (an outputs folder replaced with a link is refused, never scanned),
 * linked folders are not entered, loops end, and a huge tree neither blocks the event loop nor
 * outlives a Cancel (the run's signal).
 */
import { lstat } from "node:fs/promises";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { ensureThreadFolders } from "../sandbox/trust/threadFolders.js";
import { walkTree } from "../sandbox/trust/treeWalk.js";

export type OutputsSnapshot = Map<string, string>;

const IGNORED_TOP_DIRS = new Set([".tool-results"]);

/**
 * path (relative, `/`-separated) → "size:mtimeMs" of every file (and link, not followed) under
 * outputs. Throws HarnessError("thread_folder_redirected") when outputs is not a real folder.
 */
export async function snapshotOutputs(dirs: ThreadDirs, signal?: AbortSignal): Promise<OutputsSnapshot> {
  ensureThreadFolders(dirs, ["outputs"]);
  const snap: OutputsSnapshot = new Map();
  await walkTree(
    dirs.outputs,
    async (entry) => {
      if (!entry.isFile && !(entry.isSymlink && !entry.isDir)) return true;
      const info = await lstat(entry.path).catch(() => undefined);
      if (info) snap.set(entry.rel, `${info.size}:${info.mtimeMs}`);
      return true;
    },
    { ...(signal ? { signal } : {}), ignore: (name, relDir) => relDir === "" && IGNORED_TOP_DIRS.has(name) },
  );
  return snap;
}

export interface DeliveryReceipt extends Record<string, unknown> {
  type: "run.delivery";
  /** Files under outputs created or changed by this run (virtual paths). */
  produced: string[];
  /** Artifacts presented during this run (virtual paths). */
  paths: string[];
  presented: number;
  satisfied: boolean;
  stage: "none_produced" | "delivered" | "not_presented" | "mismatched";
}

export const DELIVERY_INCOMPLETE = "Artifact delivery incomplete: no produced output artifact was presented";

export function checkDelivery(before: OutputsSnapshot, after: OutputsSnapshot, presented: readonly string[]): DeliveryReceipt {
  const produced = [...after.entries()].filter(([p, sig]) => before.get(p) !== sig).map(([p]) => `/mnt/user-data/outputs/${p}`);
  const covers = (artifact: string, file: string) => file === artifact || file.startsWith(`${artifact.replace(/\/$/, "")}/`);
  const delivered = produced.filter((f) => presented.some((a) => covers(a, f)));
  let stage: DeliveryReceipt["stage"];
  if (produced.length === 0) stage = "none_produced";
  else if (delivered.length > 0) stage = "delivered";
  else if (presented.length > 0) stage = "mismatched";
  else stage = "not_presented";
  return {
    type: "run.delivery",
    produced,
    paths: [...presented],
    presented: presented.length,
    satisfied: stage === "none_produced" || stage === "delivered",
    stage,
  };
}
