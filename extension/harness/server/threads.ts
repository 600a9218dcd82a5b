/**
 * Threads and their state for the panel: the thread list, `threads/state` (a ThreadStateView
 * read from the latest checkpoint), the viewed-image cache (`images/get`, `images/clear`).
 */
import { proposedEdit, type ProposedEdit } from "../approvals/proposed.js";
import type { PendingApproval } from "../../protocol/approvals.js";
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { BaseMessage } from "@langchain/core/messages";
import { writeChannels } from "../threads/checkpointUpdate.js";
import type { ArtifactView, RequestParams, RequestResult, ThreadStateView, ThreadSummary } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import type { ThreadRecord } from "../store/threads.js";
import type { ViewedImage, Todo } from "../state/reducers.js";
import type { UploadedFile } from "../state/threadState.js";
import { toWireMessage } from "../runs/wire.js";
import { isWithin } from "../sandbox/paths.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import { threadDirs } from "../threads/threadDirs.js";
import type { OpenWorkspace } from "./workspaces.js";
import { withThreadUsage } from "../runs/usage.js";

const iso = (t: number) => new Date(t).toISOString();

export function threadSummary(ws: OpenWorkspace, t: ThreadRecord): ThreadSummary {
  const active = ws.manager.runs.active(t.threadId);
  return {
    thread_id: t.threadId,
    // The folder as the host names it, so it can match its own WorkspaceFolder.
    workspace_folder: ws.hostPath,
    title: t.title,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    ...(active ? { active_run: { run_id: active.run_id, status: active.status } } : {}),
  };
}

export function requireThread(ws: OpenWorkspace, threadId: string): ThreadRecord {
  const t = ws.store.threads.get(threadId);
  if (!t) throw new HarnessError("thread_not_found", `No thread ${threadId} in ${ws.hostPath}.`);
  return t;
}

const latest = (threadId: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: "" } });

/**
 * The thread's state as the panel shows it. `last_seq` is read in the same synchronous step as
 * the checkpoint rows (LinearSqliteSaver.getTuple reads its rows before its first await, and
 * better-sqlite3 is synchronous), so subscribing from `last_seq` misses nothing the view lacks.
 */
export async function readStateView(ws: OpenWorkspace, threadId: string): Promise<ThreadStateView> {
  const thread = requireThread(ws, threadId);
  const pending = ws.store.checkpointer.getTuple(latest(threadId));
  const lastSeq = ws.manager.journal.events.lastSeq(threadId);
  const active = ws.manager.runs.active(threadId);
  const firstOfRun = active ? ws.manager.journal.events.list(threadId, { runId: active.run_id, limit: 1 })[0] : undefined;
  const tuple = await pending;
  const values = (tuple?.checkpoint.channel_values ?? {}) as {
    messages?: BaseMessage[];
    title?: string | null;
    artifacts?: string[];
    todos?: Todo[] | null;
    viewed_images?: Record<string, ViewedImage>;
    uploaded_files?: UploadedFile[] | null;
    pending_approvals?: PendingApproval[] | null;
  };
  return {
    thread_id: threadId,
    // A title the user gave (threads/rename) wins over the generated one.
    title: thread.title ?? values.title ?? null,
    messages: (values.messages ?? []).map(toWireMessage),
    artifacts: artifactViews(ws, threadId, values.artifacts ?? []),
    todos: values.todos ?? null,
    viewed_images: Object.entries(values.viewed_images ?? {}).map(([path, m]) => ({ path, mime_type: m.mime_type, size: m.size, sha256: m.sha256 })),
    uploaded_files: (values.uploaded_files ?? []).map((f) => ({ filename: f.filename, size: f.size, path: f.path })),
    pending_approvals: values.pending_approvals ?? [],
    ...withThreadUsage(ws.manager.runs.listByThread(threadId)),
    last_seq: lastSeq,
    ...(active ? { active_run: { run_id: active.run_id, status: active.status, after_seq: firstOfRun ? firstOfRun.seq - 1 : lastSeq } } : {}),
  };
}

/** Virtual → host paths, validated as the file tools validate them; anything outside the folder is left out. */
function artifactViews(ws: OpenWorkspace, threadId: string, paths: readonly string[]): ArtifactView[] {
  const dirs = threadDirs(ws.folder, threadId);
  const out: ArtifactView[] = [];
  for (const path of paths) {
    let real: string;
    try {
      real = resolveReadPath(path, dirs);
    } catch {
      // present_files validated it once; a path that no longer resolves (or whose outputs folder
      // the sandbox replaced with a link) is not shown
      continue;
    }
    if (!isWithin(real, ws.folder)) continue;
    let exists = false;
    try {
      exists = statSync(real).isFile();
    } catch {
      /* deleted since it was presented */
    }
    out.push({ path, host_path: real, exists });
  }
  return out;
}

/** What files/read hands over in one answer (base64 in a JSON-RPC message). */
export const MAX_READ_FILE_BYTES = 50 * 1024 * 1024;

/**
 * files/read: the bytes of a file the thread's agent may read, validated as its reads are. The
 * resolved real path is opened without following a last-component link, so a link swapped in
 * after the check is refused rather than followed; the size is the opened file's.
 */
export function readThreadFile(ws: OpenWorkspace, p: RequestParams<"files/read">): RequestResult<"files/read"> {
  requireThread(ws, p.threadId);
  const real = resolveReadPath(p.path, threadDirs(ws.folder, p.threadId));
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new HarnessError("file_not_found", `${p.path} does not exist.`);
    throw new HarnessError("path_denied", `${p.path} cannot be read (${code ?? "error"}).`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new HarnessError("path_denied", `${p.path} is not a file.`);
    if (st.size > MAX_READ_FILE_BYTES) throw new HarnessError("file_too_large", `${p.path} is ${st.size} bytes; files/read hands over at most ${MAX_READ_FILE_BYTES}.`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return { base64: buf.subarray(0, off).toString("base64"), size: off };
  } finally {
    closeSync(fd);
  }
}

export function getImage(ws: OpenWorkspace, p: RequestParams<"images/get">): RequestResult<"images/get"> {
  const blob = ws.store.blobs.get(p.sha256);
  return blob ? { mime_type: blob.mime, base64: blob.bytes.toString("base64") } : null;
}

/**
 * The `{}` update of `viewed_images`, written as a checkpoint of its own (threads/checkpointUpdate.ts).
 *
 * Refused while a run is active on the thread: the run's next checkpoint is built from its own
 * in-memory state and would silently undo the clear; for the same reason runs/start is refused
 * (thread_busy) while a clear is being written (OpenWorkspace.clearing).
 */
export async function clearViewedImages(ws: OpenWorkspace, threadId: string): Promise<void> {
  requireThread(ws, threadId);
  if (ws.manager.runs.active(threadId)) {
    throw new HarnessError("thread_busy", "A run is active on this thread: clear the viewed images when it has ended.");
  }
  if (ws.clearing.has(threadId)) return; // the same clear is already being written
  ws.clearing.add(threadId);
  try {
    await writeCleared(ws, threadId);
  } finally {
    ws.clearing.delete(threadId);
  }
}

async function writeCleared(ws: OpenWorkspace, threadId: string): Promise<void> {
  const saver = ws.store.checkpointer;
  const tuple = await saver.getTuple(latest(threadId));
  const current = tuple?.checkpoint.channel_values.viewed_images as Record<string, unknown> | undefined;
  if (!tuple || !current || Object.keys(current).length === 0) return; // nothing to clear
  await writeChannels(saver, tuple, { viewed_images: {} });
}

/** "Open Diff" on a pending write: the file now and as the call would leave it (approvals/proposed.ts). */
export async function proposedEditView(ws: OpenWorkspace, threadId: string, toolCallId: string): Promise<ProposedEdit> {
  requireThread(ws, threadId);
  const tuple = await ws.store.checkpointer.getTuple(latest(threadId));
  const pending = ((tuple?.checkpoint.channel_values ?? {}) as { pending_approvals?: PendingApproval[] | null }).pending_approvals ?? [];
  const call = pending.find((p) => p.tool_call_id === toolCallId);
  if (!call) throw new HarnessError("usage", `No pending tool call ${toolCallId} on thread ${threadId}.`);
  return proposedEdit(call, threadDirs(ws.folder, threadId));
}
