/**
 * Reading a run's recorded changes, one way for every client: `deerflow changes` and the panel's
 * `changes/list` and `changes/before` (extension/protocol/changes.ts).
 */
import { HarnessError } from "../errors.js";
import type { FileChangeView } from "../../protocol/changes.js";
import type { WorkspaceStore } from "../store/db.js";
import { changeStatus, type FileChangeRecord } from "../store/fileChanges.js";
import type { RunRecord, RunStore } from "../store/runs.js";
import { mapVirtualPath } from "../sandbox/paths.js";
import { threadDirs } from "../threads/threadDirs.js";
import { changePath } from "./tracker.js";

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** The run, or HarnessError("run_not_found"). */
export function requireRun(runs: RunStore, runId: string): RunRecord {
  const run = runs.get(runId);
  if (!run) throw new HarnessError("run_not_found", `No run ${runId} in this workspace.`);
  return run;
}

/** The run's rows on its own thread, by path. */
export function runRows(store: WorkspaceStore, run: RunRecord): FileChangeRecord[] {
  return store.fileChanges.listRun(run.run_id).filter((r) => r.thread_id === run.thread_id);
}

/** The files the run changed (rows that changed nothing in the end are left out), by path. */
export function listChanges(store: WorkspaceStore, runs: RunStore, runId: string): FileChangeView[] {
  const run = requireRun(runs, runId);
  const dirs = threadDirs(store.workspaceFolder, run.thread_id);
  return runRows(store, run).flatMap((r) => {
    const status = changeStatus(r);
    if (!status) return [];
    return [
      {
        path: r.path,
        status,
        before_sha256: r.before_sha256,
        after_sha256: r.after_state === "present" ? r.after_sha256 : null,
        after_recorded: r.after_state !== "unknown",
        host_path: mapVirtualPath(r.path, dirs),
        protected_rule: r.protected_rule,
        reverted_at: iso(r.reverted_at),
      },
    ];
  });
}

/**
 * A changed file's content before the run (for a diff: before ↔ now), or null when the file did
 * not exist. HarnessError("usage") when the run did not change that path.
 */
export function beforeContent(store: WorkspaceStore, runs: RunStore, runId: string, path: string): Buffer | null {
  const run = requireRun(runs, runId);
  const normal = changePath(path);
  const row = normal === undefined ? undefined : runRows(store, run).find((r) => r.path === normal);
  if (!row) throw new HarnessError("usage", `Run ${runId} did not change ${path}.`);
  if (row.before_sha256 === null) return null;
  const blob = store.blobs.get(row.before_sha256);
  if (!blob) throw new HarnessError("storage", `The content ${path} had before run ${runId} is missing from the database.`);
  return blob.bytes;
}
