/**
 * Reverting a run's file changes (`deerflow revert`, the panel's `changes/revert`): each file the
 * run's file tools changed gets its before-content back (an added file is removed, a deleted one
 * recreated), but only while it still holds exactly what the run left. A file that changed again
 * since (the user's edit, a later run, bash) is refused and left alone, so a revert never loses
 * later work; the other files of the same request still revert.
 *
 * Safety, in order:
 * - Refused (HarnessError "thread_busy") while a run of the thread has not ended. The check and
 *   every file operation share one IMMEDIATE transaction, so no run of any process can be
 *   admitted on the thread (admission writes a run row) before the revert is done. The file work
 *   is synchronous for that reason: a revert is a handful of files.
 * - Every path goes through the trust boundary as a tool write does (resolveWritePath's steps:
 *   thread folders, protected paths, containment). Then the file's folder is opened from the
 *   workspace down without following any link (trust/checkedDir.ts), and the file, its creation
 *   and its deletion all go through that folder's descriptor; the file itself is opened checked
 *   (openChecked.ts: not a link, the file checked, one hard link only). A link planted since the
 *   run, in place of the file or of any folder above it, cannot send a revert outside the
 *   thread's roots. The content compared with the run's after-state is read from the same
 *   descriptor that is then rewritten, and a removal deletes only that very file.
 * - A protected path (protectedPaths.ts) is written only with the caller's explicit
 *   `allowProtected` (the CLI's --allow-protected), and only when the run itself wrote the path
 *   under the same rule (a write the user approved): the consent is for that rule, not a bypass.
 *
 * What remains: folders a run created for a new file stay. Off Linux (no /proc/self/fd) a folder
 * higher up swapped between two steps of the chain is not caught (checkedDir.ts).
 */
import { closeSync, fstatSync, ftruncateSync, readSync, realpathSync, writeSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { HarnessError, errorMessage } from "../errors.js";
import type { RevertOutcome } from "../../protocol/changes.js";
import type { WorkspaceStore } from "../store/db.js";
import { sha256Hex } from "../store/blobs.js";
import { changeStatus, type FileChangeRecord } from "../store/fileChanges.js";
import type { RunStore } from "../store/runs.js";
import { isOwnerGone } from "../runs/owner.js";
import { containedRealPath, isNodeError, mapVirtualPath, realPathAllowingMissing } from "../sandbox/paths.js";
import { openDirChain, type CheckedDir } from "../trust/checkedDir.js";
import { classifyResolved } from "../trust/protectedPaths.js";
import { guardThreadFolders, isPathRefusal } from "../trust/toolPaths.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import { changePath } from "./tracker.js";
import { requireRun, runRows } from "./view.js";

export interface RevertRequest {
  runId: string;
  /** Virtual paths to revert; all of the run's changed files when absent or empty. */
  paths?: readonly string[];
  /** The user's consent to restore protected paths the run wrote with their approval. */
  allowProtected?: boolean;
}

export interface RevertResult {
  run_id: string;
  thread_id: string;
  files: RevertOutcome[];
}

const CHANGED_SINCE = "changed after the run; revert refused so your later edits are kept";

class Refusal extends Error {
  constructor(
    readonly code: NonNullable<RevertOutcome["code"]>,
    message: string,
  ) {
    super(message);
  }
}

/** Throws HarnessError run_not_found, thread_busy (a run of the thread has not ended), or thread_folder_redirected. */
export function revertRun(store: WorkspaceStore, runs: RunStore, req: RevertRequest): RevertResult {
  const run = requireRun(runs, req.runId);
  const rows = runRows(store, run);
  const wanted = req.paths && req.paths.length > 0 ? req.paths : undefined;
  const dirs = ensureThreadDirs(store.workspaceFolder, run.thread_id);
  const unended = store.db.prepare<[string], { run_id: string; status: string; lease_owner: string | null }>(
    "SELECT run_id, status, lease_owner FROM runs WHERE thread_id = ? AND ended_at IS NULL",
  );
  const files = store.db.transaction("immediate", () => {
    // As deleteThread: a run whose owner is provably gone writes nothing more (recover() ends it).
    const busy = unended.all(run.thread_id).find((r) => !(r.lease_owner && isOwnerGone(r.lease_owner)));
    if (busy) {
      throw new HarnessError(
        "thread_busy",
        `Thread ${run.thread_id} is busy: run ${busy.run_id} is ${busy.status === "pending" || busy.status === "running" ? busy.status : "stopping"}. ` +
          "Revert once it has ended, so that its writes and the revert do not mix.",
      );
    }
    const targets: Array<{ path: string; row?: FileChangeRecord }> = wanted
      ? wanted.map((p) => {
          const normal = changePath(p);
          const row = rows.find((r) => r.path === normal);
          return row ? { path: row.path, row } : { path: p };
        })
      : rows.filter((r) => changeStatus(r) !== undefined || r.after_state === "unknown").map((row) => ({ path: row.path, row }));
    return targets.map(({ path, row }): RevertOutcome => {
      if (!row) return { path, outcome: "refused", code: "not_in_run", reason: `run ${run.run_id} did not change this file` };
      try {
        const outcome = revertFile(store, dirs, row, req.allowProtected === true);
        if (outcome === "reverted") store.fileChanges.markReverted({ threadId: row.thread_id, runId: row.run_id, path: row.path });
        return { path, outcome };
      } catch (err) {
        if (err instanceof Refusal) return { path, outcome: "refused", code: err.code, reason: err.message };
        if (isPathRefusal(err)) return { path, outcome: "refused", code: "path_denied", reason: err.message };
        return { path, outcome: "refused", code: "failed", reason: errorMessage(err) };
      }
    });
  });
  return { run_id: run.run_id, thread_id: run.thread_id, files };
}

function revertFile(store: WorkspaceStore, dirs: ThreadDirs, row: FileChangeRecord, allowProtected: boolean): "reverted" | "unchanged" {
  if (row.after_state === "unknown") {
    throw new Refusal("after_unknown", "what the run left in this file was never recorded (it stopped in the middle of the write); revert refused");
  }
  if (changeStatus(row) === undefined) return "unchanged";
  const after = row.after_state === "present" ? row.after_sha256 : null;
  // toolPaths.resolveWritePath's steps, resolved once, with the protected-path step deciding on
  // the user's consent instead of refusing outright: the virtual scheme, the thread folders, the
  // protected rules on the path and where its links lead, containment.
  const host = mapVirtualPath(row.path, dirs);
  const real = realPathAllowingMissing(host);
  guardThreadFolders(host, dirs, real);
  const verdict = classifyResolved(host, real, dirs);
  if (verdict.protected) {
    if (row.protected_rule !== verdict.rule.id) {
      throw new Refusal(
        "protected",
        `a protected path now (${verdict.rule.pattern}: ${verdict.rule.reason}), which it was not when the run wrote it; something changed the path since (a link?), revert refused`,
      );
    }
    if (!allowProtected) {
      throw new Refusal(
        "protected",
        `a protected path (${verdict.rule.pattern}: ${verdict.rule.reason}) the run wrote with your approval; revert it with --allow-protected (allowProtected) if you mean to`,
      );
    }
  }
  containedRealPath(host, dirs, real);
  const before = beforeBytes(store, row);

  // The path as the run wrote it (never where a link leads now) is opened folder by folder from
  // the workspace down, and everything after goes through that folder (checkedDir.ts): a link in
  // place of the file or of any folder above it is refused, not followed. The workspace folder
  // itself may be a link (the user's choice): it is resolved once.
  const root = realpathSync(dirs.workspace);
  const target = join(root, relative(dirs.workspace, host));
  const name = basename(target);
  let dir: CheckedDir | undefined;
  let fd = -1;
  try {
    dir = openParent(root, dirname(target));
    if (dir) fd = openExisting(dir, name);
    if (fd < 0) {
      // Absent now.
      if (before === null) return "unchanged";
      if (after !== null) throw new Refusal("changed_since", `deleted after the run; revert refused so the deletion is kept`);
      dir ??= openParent(root, dirname(target), true) as CheckedDir;
      try {
        dir.createFile(name, before);
      } catch (createErr) {
        if (isNodeError(createErr) && createErr.code === "EEXIST") throw new Refusal("changed_since", CHANGED_SINCE);
        throw createErr;
      }
      return "reverted";
    }
    const current = sha256Hex(readAll(fd));
    if (before !== null && current === row.before_sha256) return "unchanged";
    if (current !== after) throw new Refusal("changed_since", after === null ? `created again after the run; revert refused so it is kept` : CHANGED_SINCE);
    if (before === null) {
      // Deleted only if the name still holds the file just compared.
      (dir as CheckedDir).unlinkChecked(name, fd);
      return "reverted";
    }
    ftruncateSync(fd, 0);
    let written = 0;
    while (written < before.length) written += writeSync(fd, before, written, before.length - written, written);
    return "reverted";
  } finally {
    if (fd >= 0) closeSync(fd);
    dir?.close();
  }
}

/** The file's folder, opened without following links; undefined when a folder on the way is missing. */
function openParent(root: string, folder: string, create = false): CheckedDir | undefined {
  try {
    return openDirChain(root, folder, { create });
  } catch (err) {
    if (isNodeError(err) && err.code === "ENOENT" && !create) return undefined;
    if (isNodeError(err) && (err.code === "ELOOP" || err.code === "ENOTDIR")) {
      throw new Refusal("changed_since", `a folder on its path is a link or a file now, not the folder the run wrote into: ${CHANGED_SINCE}`);
    }
    throw err;
  }
}

/** The file open for update (checked); -1 when it is absent. */
function openExisting(dir: CheckedDir, name: string): number {
  try {
    return dir.openForUpdate(name);
  } catch (err) {
    if (isNodeError(err) && err.code === "EISDIR") throw new Refusal("changed_since", `is a folder now: ${CHANGED_SINCE}`);
    if (isNodeError(err) && err.code === "ENOENT") return -1;
    if (isNodeError(err) && err.code === "ELOOP") throw new Refusal("changed_since", `is a link now: ${CHANGED_SINCE}`);
    throw err;
  }
}

function beforeBytes(store: WorkspaceStore, row: FileChangeRecord): Buffer | null {
  if (row.before_sha256 === null) return null;
  const blob = store.blobs.get(row.before_sha256);
  if (!blob) throw new Refusal("failed", "its content from before the run is missing from the database");
  return blob.bytes;
}

function readAll(fd: number): Buffer {
  const size = fstatSync(fd).size;
  const chunks: Buffer[] = [];
  let position = 0;
  for (;;) {
    const buffer = Buffer.alloc(Math.max(size - position, 64 * 1024));
    const n = readSync(fd, buffer, 0, buffer.length, position);
    if (n === 0) break;
    chunks.push(buffer.subarray(0, n));
    position += n;
  }
  return Buffer.concat(chunks);
}
