/**
 * `deerflow changes` and `deerflow revert`: a run's changed files (what its file tools wrote,
 * with the before/after sha256) and putting them back (changes/revert.ts), one JSON line per file.
 *
 * changes: exit 0; 1 for an unknown run.
 * revert:  exit 0 when every file is reverted or already had its before-content; 1 when any was
 *          refused (each refused line says why; the others are reverted all the same), when the
 *          run is unknown, or while a run of its thread has not ended (then nothing is changed).
 */
import { parse, requireString, workspaceArg, writeJsonLine } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { openRunSystem } from "../runs/services.js";
import { listChanges } from "../changes/view.js";
import { revertRun } from "../changes/revert.js";

function open(v: { workspace?: string | undefined; "data-dir"?: string | undefined }, command: string) {
  const workspace = workspaceArg(v.workspace, command);
  const store = openWorkspaceStore({ dataDir: v["data-dir"] ?? defaultDataDir(), workspaceFolder: workspace });
  const manager = openRunSystem(store);
  // Settle runs a dead process left active: they would hold the thread busy forever.
  manager.recover();
  return { store, manager };
}

export function changesCommand(argv: string[]): number {
  const v = parse(argv, { workspace: { type: "string" }, run: { type: "string" }, "data-dir": { type: "string" } }, "changes");
  const runId = requireString(v.run, "--run ID", "changes");
  const { store, manager } = open(v, "changes");
  try {
    for (const change of listChanges(store, manager.runs, runId)) writeJsonLine({ run_id: runId, ...change });
    return 0;
  } finally {
    store.close();
  }
}

export function revertCommand(argv: string[]): number {
  const v = parse(
    argv,
    {
      workspace: { type: "string" },
      run: { type: "string" },
      path: { type: "string", multiple: true },
      "allow-protected": { type: "boolean" },
      "data-dir": { type: "string" },
    },
    "revert",
  );
  const runId = requireString(v.run, "--run ID", "revert");
  const { store, manager } = open(v, "revert");
  try {
    const result = revertRun(store, manager.runs, { runId, ...(v.path ? { paths: v.path } : {}), allowProtected: v["allow-protected"] === true });
    let refused = 0;
    for (const file of result.files) {
      writeJsonLine({ run_id: result.run_id, ...file });
      if (file.outcome === "refused") {
        refused += 1;
        process.stderr.write(`deerflow revert: ${file.path}: ${file.reason ?? "refused"}\n`);
      }
    }
    return refused > 0 ? 1 : 0;
  } finally {
    store.close();
  }
}
