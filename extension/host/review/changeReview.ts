/**
 * A run's changed files, host side (issue 13): the list the panel shows ("Changed files (n)"),
 * Open Diff (the content before the run, a read-only in-memory document, ↔ the file on disk) and
 * Revert. The harness decides what may be reverted; a refusal comes back per file with its
 * reason, and a protected path is restored only after the user says so here.
 */
import { posix } from "node:path";
import * as vscode from "vscode";
import type { RevertOutcome } from "../../protocol/changes.js";
import type { RunChanges } from "../../protocol/review.js";
import type { RunSummary } from "../../protocol/rpc.js";
import type { HarnessClient } from "../harnessClient.js";
import { isInside } from "../panel/paths.js";
import type { ReviewDocuments } from "./reviewDocuments.js";

/** How many of a thread's latest runs the panel lists changes for. */
export const RECENT_RUNS = 20;

async function changesOf(harness: HarnessClient, workspaceFolder: string, run: Pick<RunSummary, "run_id" | "created_at">): Promise<RunChanges> {
  const files = await harness.request("changes/list", { workspaceFolder, runId: run.run_id });
  return {
    run_id: run.run_id,
    created_at: run.created_at,
    files: files.map((f) => ({ path: f.path, status: f.status, reverted: f.reverted_at !== null })),
  };
}

/** The thread's recent ended runs that changed files, newest first. */
export async function threadChanges(harness: HarnessClient, workspaceFolder: string, threadId: string): Promise<RunChanges[]> {
  const runs = (await harness.request("runs/list", { workspaceFolder, threadId }))
    .filter((r) => r.status !== "pending" && r.status !== "running")
    .slice(0, RECENT_RUNS);
  const all = await Promise.all(runs.map((r) => changesOf(harness, workspaceFolder, r)));
  return all.filter((r) => r.files.length > 0);
}

/** One run's changes again (after its end, or a revert). */
export async function runChanges(harness: HarnessClient, workspaceFolder: string, threadId: string, runId: string): Promise<RunChanges | undefined> {
  const run = (await harness.request("runs/list", { workspaceFolder, threadId })).find((r) => r.run_id === runId);
  return run ? changesOf(harness, workspaceFolder, run) : undefined;
}

/** Opens VS Code's diff editor: the file before the run ↔ the file on disk now. */
export async function openChangeDiff(harness: HarnessClient, docs: ReviewDocuments, workspaceFolder: string, runId: string, path: string): Promise<void> {
  const [before, listed] = await Promise.all([
    harness.request("changes/before", { workspaceFolder, runId, path }),
    harness.request("changes/list", { workspaceFolder, runId }),
  ]);
  const change = listed.find((f) => f.path === path);
  if (!change) throw new Error(`${path} is not among that run's changed files.`);
  const left = docs.put(path, "before", before.base64 === null ? "" : Buffer.from(before.base64, "base64").toString("utf8"));
  // The file on disk, when it is one: it stays editable, as in any diff against the working copy.
  const onDisk = isInside(workspaceFolder, change.host_path) ? vscode.Uri.file(change.host_path) : undefined;
  const exists = onDisk ? await vscode.workspace.fs.stat(onDisk).then(() => true, () => false) : false;
  const right = onDisk && exists ? onDisk : docs.put(path, "deleted", "");
  const name = posix.basename(path);
  await vscode.commands.executeCommand("vscode.diff", left, right, `${name} (before the run ↔ now)`, { preview: true });
}

/**
 * Reverts `paths` of the run (all when undefined). Files refused only because they are
 * protected are restored after a modal confirmation. Returns every file's outcome.
 */
export async function revertChanges(harness: HarnessClient, workspaceFolder: string, runId: string, paths: string[] | undefined): Promise<RevertOutcome[]> {
  const first = await harness.request("changes/revert", { workspaceFolder, runId, ...(paths ? { paths } : {}) });
  const protectedPaths = first.files.filter((f) => f.outcome === "refused" && f.code === "protected").map((f) => f.path);
  if (protectedPaths.length === 0) return first.files;
  const answer = await vscode.window.showWarningMessage(
    `Revert ${protectedPaths.length === 1 ? "a protected file" : `${protectedPaths.length} protected files`}?`,
    { modal: true, detail: `${protectedPaths.join("\n")}\n\nThe run wrote ${protectedPaths.length === 1 ? "it" : "them"} with your approval; reverting restores the content from before the run.` },
    "Revert",
  );
  if (answer !== "Revert") return first.files;
  const second = await harness.request("changes/revert", { workspaceFolder, runId, paths: protectedPaths, allowProtected: true });
  const again = new Map(second.files.map((f) => [f.path, f]));
  return first.files.map((f) => again.get(f.path) ?? f);
}
