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
import { ensureThreadFolders } from "../trust/threadFolders.js";
import { walkTree } from "../trust/treeWalk.js";

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

/**
 * The delivery facts of one run (DeerFlow journal `get_delivery_content`): what its tools returned
 * as artifacts in THIS run, deduplicated by (path, tool), in call order. A path presented again
 * (a report rewritten and re-presented in a later run) counts, although it is already in state.
 */
export interface DeliveryFacts {
  presented: number;
  paths: string[];
  by_tool: Record<string, string[]>;
}

/** The receipt journaled once per run, on every ending, as a `custom` event of this type. */
export type DeliveryReceipt = { type: "run.delivery"; [key: string]: unknown } & DeliveryFacts &
  Partial<{
    verification: { source: "outputs_changed"; requirement: "present_files_matches_produced_output" };
    /** Files under outputs created or changed by this run (virtual paths). */
    produced_paths: string[];
    presented_paths: string[];
    matched_paths: string[];
    stage: "presented" | "mismatched" | "not_started";
    satisfied: boolean;
  }>;

export const DELIVERY_INCOMPLETE = "Artifact delivery incomplete: no produced output artifact was presented";

/**
 * Collects a run's delivery facts from its journaled `updates`: a node update carrying
 * `artifacts` is a tool's result (present_files returns a Command with them); the tool is named
 * by the tool message in the same update.
 */
export class DeliveryCollector {
  readonly #seen = new Set<string>();
  readonly #facts: Array<[string, string | undefined]> = [];
  #toolsRan = false;

  /**
   * Whether the graph's tools node ran in this run. Only a tool writes into outputs/ on the
   * agent's behalf, so a run without one has nothing to verify there (the worker skips the
   * second walk of the folder).
   */
  get toolsRan(): boolean {
    return this.#toolsRan;
  }

  observe(event: { event: string; data: unknown }): void {
    if (event.event !== "updates" || !event.data || typeof event.data !== "object") return;
    if (Object.hasOwn(event.data, "tools")) this.#toolsRan = true;
    for (const value of Object.values(event.data as Record<string, unknown>)) {
      // A node that ran several tools returns one update per Command.
      for (const update of Array.isArray(value) ? value : [value]) this.#record(update);
    }
  }

  #record(update: unknown): void {
    const u = update as { artifacts?: unknown; messages?: unknown } | null;
    if (!u || typeof u !== "object" || !Array.isArray(u.artifacts)) return;
    const tools = Array.isArray(u.messages)
      ? (u.messages as Array<{ type?: unknown; name?: unknown }>).filter((m) => m?.type === "tool" && typeof m.name === "string").map((m) => m.name as string)
      : [];
    const tool = new Set(tools).size === 1 ? tools[0] : undefined;
    for (const path of u.artifacts) {
      if (typeof path !== "string" || path === "") continue;
      const key = JSON.stringify([path, tool ?? null]);
      if (this.#seen.has(key)) continue;
      this.#seen.add(key);
      this.#facts.push([path, tool]);
    }
  }

  facts(): DeliveryFacts {
    const by_tool: Record<string, string[]> = {};
    for (const [path, tool] of this.#facts) if (tool) (by_tool[tool] ??= []).push(path);
    return { presented: this.#facts.length, paths: this.#facts.map(([p]) => p), by_tool };
  }
}

export const emptyFacts = (): DeliveryFacts => ({ presented: 0, paths: [], by_tool: {} });

/**
 * The receipt (DeerFlow `_delivery_content_with_outputs`): the facts, and — only when the run
 * created or changed outputs — the verdict: did present_files cover (the path, or a folder
 * holding it) at least one produced file.
 */
export function checkDelivery(before: OutputsSnapshot, after: OutputsSnapshot, facts: DeliveryFacts): DeliveryReceipt {
  const produced = [...after.entries()].filter(([p, sig]) => before.get(p) !== sig).map(([p]) => `/mnt/user-data/outputs/${p}`);
  const receipt: DeliveryReceipt = { type: "run.delivery", ...facts };
  if (produced.length === 0) return receipt;
  const presented = facts.by_tool.present_files ?? [];
  const covers = (artifact: string, file: string) => {
    const a = artifact.replace(/\/+$/, "");
    return a !== "" && (file === a || file.startsWith(`${a}/`));
  };
  const matched = produced.filter((f) => presented.some((a) => covers(a, f)));
  const satisfied = matched.length > 0;
  return {
    ...receipt,
    verification: { source: "outputs_changed", requirement: "present_files_matches_produced_output" },
    produced_paths: produced,
    presented_paths: [...presented],
    matched_paths: matched,
    stage: satisfied ? "presented" : presented.length > 0 ? "mismatched" : "not_started",
    satisfied,
  };
}

/** The run's error when it changed outputs and presented none of them (DeerFlow `_delivery_error`). */
export function deliveryError(receipt: DeliveryReceipt): string | undefined {
  return receipt.produced_paths?.length && receipt.satisfied !== true ? DELIVERY_INCOMPLETE : undefined;
}
