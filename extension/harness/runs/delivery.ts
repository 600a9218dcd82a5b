/**
 * Delivery check (DeerFlow worker `_verify_artifact_delivery`): a run that produced or changed
 * files under outputs but presented none of them is reported, not silently passed.
 * `.tool-results/` (ToolOutputBudget's spill files) never count as deliverables.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

export type OutputsSnapshot = Map<string, string>;

const IGNORED_DIRS = new Set([".tool-results"]);

/** path (relative, `/`-separated) → "size:mtimeMs" of every file under outputs. */
export function snapshotOutputs(outputsDir: string): OutputsSnapshot {
  const snap: OutputsSnapshot = new Map();
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = join(dir, name);
      let st;
      try {
        st = statSync(full);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (dir === outputsDir && IGNORED_DIRS.has(name)) continue;
        walk(full);
      } else if (st.isFile()) {
        snap.set(relative(outputsDir, full).split(sep).join("/"), `${st.size}:${st.mtimeMs}`);
      }
    }
  };
  walk(outputsDir);
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
