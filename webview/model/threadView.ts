/**
 * The shown thread: built from a `state` snapshot, then advanced by journal events in seq order.
 * `lastSeq` makes it idempotent: an event at or below it was already applied (a replay after a
 * reload, or a batch the host sent twice) and is skipped. After a snapshot it is the snapshot's
 * `last_seq`, or the seq before the active run when there is one (see fromState).
 */
import type { ThreadStateView, JournalEvent } from "../../extension/protocol/rpc.js";
import type { ModelRequestFailure, WireMessage, WireMessageChunk } from "../../extension/protocol/events.js";
import { emptyThread } from "./emptyThread.js";
import { appendError, applyChunk, buildMessages, dropStreaming, endStreaming, isRecord, upsertMessage } from "./messages.js";
import { applyTaskEvent, attachTasks, isTaskEvent } from "./tasks.js";
import { usageAfterEnd, usageFromState } from "./usage.js";
import type { ArtifactItem, ThreadView, TodoItem, ViewedImageItem } from "./types.js";

export function fromState(s: ThreadStateView): ThreadView {
  const t = buildMessages(emptyThread(s.thread_id), s.messages);
  // With a run in flight the host replays from the seq before the run (its streaming AI message
  // is only in the journal): accept events after that point. The replayed ones that the snapshot
  // already holds are harmless: complete messages upsert by id, and chunks for a message known
  // complete are dropped (messages.ts).
  const run = s.active_run;
  const replayFrom = run ? Math.min(run.after_seq, s.last_seq) : s.last_seq;
  return {
    ...t,
    title: s.title,
    lastSeq: replayFrom,
    run: run
      ? { runId: run.run_id, status: run.status, model: null, error: null, retry: null, awaitingApproval: false, stopReason: null }
      : { ...t.run, awaitingApproval: (s.pending_approvals?.length ?? 0) > 0 },
    artifacts: s.artifacts.map((a) => ({ path: a.path, exists: a.exists })),
    todos: s.todos,
    viewedImages: s.viewed_images.map((v) => ({ path: v.path, mime_type: v.mime_type, size: v.size, sha256: v.sha256 })),
    uploadedFiles: s.uploaded_files.map((f) => f.filename),
    usage: usageFromState(s),
  };
}

export function applyEvents(t: ThreadView, events: readonly JournalEvent[]): ThreadView {
  let out = t;
  let tasks: Set<string> | undefined;
  for (const e of events) {
    if (typeof e.seq !== "number" || e.seq <= out.lastSeq) continue;
    out = { ...applyEvent(out, e), lastSeq: e.seq };
    if (e.event === "custom" && isTaskEvent(e.data)) (tasks ??= new Set()).add(e.data.task_id as string);
  }
  // Subagent views reach their cards once per batch (model/tasks.ts).
  return tasks ? attachTasks(out, tasks) : out;
}

function applyEvent(t: ThreadView, e: JournalEvent): ThreadView {
  switch (e.event) {
    case "metadata":
      return { ...t, run: { runId: e.run_id, status: "running", model: e.data.model, error: null, retry: null, awaitingApproval: false, stopReason: null } };
    case "messages": {
      let out = clearRetry(t);
      for (const c of e.data as unknown[]) if (isChunk(c)) out = applyChunk(out, c);
      return out;
    }
    case "updates": {
      let out = clearRetry(t);
      for (const node of Object.values(e.data as Record<string, unknown>)) {
        // Only messages are taken from updates: every update is followed by a `values` event
        // carrying the channels whole, so artifacts/title/images come from there.
        if (!isRecord(node) || !Array.isArray(node.messages)) continue;
        for (const m of node.messages as unknown[]) if (isWireMessage(m)) out = upsertMessage(out, m);
      }
      return out;
    }
    case "values":
      return applyValues(t, e.data);
    case "custom": {
      if (e.data.type === "llm_retry") {
        const msg = typeof e.data.message === "string" ? e.data.message : "Retrying the model call…";
        return { ...dropStreaming(t), run: { ...t.run, retry: msg } };
      }
      if (isTaskEvent(e.data)) return applyTaskEvent(t, e.data);
      return t;
    }
    case "error": {
      const failure = isFailure(e.data.failure) ? e.data.failure : undefined;
      if (failure) {
        // The alert (components/runFailure.ts) says who failed where and what to do; the row keeps
        // a short record in the thread, and the provider's full text stays in the log and the CLI.
        return appendError({ ...t, run: { ...t.run, error: null, retry: null, failure } }, `error:${e.run_id}`, FAILURE_ROW[failure.kind]);
      }
      const text = typeof e.data.message === "string" && e.data.message ? e.data.message : "The run failed.";
      return appendError({ ...t, run: { ...t.run, error: text, retry: null } }, `error:${e.run_id}`, text);
    }
    case "end": {
      const status = e.data.status;
      let out = endStreaming(t);
      const error = typeof e.data.error === "string" ? e.data.error : null;
      const stopReason = status === "success" && typeof e.data.stop_reason === "string" ? e.data.stop_reason : null;
      const awaitingApproval = stopReason === "approval";
      // A sorted model failure keeps its own words: the end's error is the provider's full text.
      const runError = out.run.failure ? null : (error ?? out.run.error);
      out = { ...out, run: { ...out.run, runId: e.run_id, status, error: runError, retry: null, awaitingApproval, stopReason }, usage: usageAfterEnd(out.usage, e.data) };
      if (status === "error" || status === "timeout") {
        // The worker usually journals an `error` event first; one row per run either way.
        out = appendError(out, `error:${e.run_id}`, error ?? (status === "timeout" ? "The run timed out." : "The run failed."));
      }
      return out;
    }
    default:
      return t;
  }
}

/**
 * The key of the message a Continue would go on from, or null: the last run used its budget of
 * model turns (`stop_reason: "turn_capped"`, issue 20) and nothing came after it. Read from the
 * thread's last message, which the harness writes for that ending (its `stop_reason` stamp
 * survives a reload: it is in the snapshot), or from the run's `end` while that message is not
 * in view. A new run (its metadata resets the run's stop reason; its prompt becomes the last
 * message) ends it, Continue's own run included.
 */
export function turnCappedKey(t: ThreadView): string | null {
  const last = t.messages.at(-1);
  if (last?.role === "ai" && last.stopReason === "turn_capped") return last.key;
  if (t.run.stopReason === "turn_capped" && last?.role !== "human" && last?.role !== "error") return `run:${t.run.runId ?? ""}`;
  return null;
}

/** The thread's record of a failed model request (the alert above the composer has the detail). */
const FAILURE_ROW: Record<ModelRequestFailure["kind"], string> = {
  connection_refused: "Model request failed: the connection was refused.",
  auth: "Model request failed: the API key was not accepted.",
  model_not_found: "Model request failed: the model was not found.",
  timeout: "Model request failed: no answer in time.",
  other: "Model request failed.",
};

const FAILURE_KINDS = new Set<string>(Object.keys(FAILURE_ROW));

function isFailure(v: unknown): v is ModelRequestFailure {
  return isRecord(v) && typeof v.kind === "string" && FAILURE_KINDS.has(v.kind) && typeof v.model === "string" && typeof v.endpoint === "string" && typeof v.summary === "string";
}

function clearRetry(t: ThreadView): ThreadView {
  return t.run.retry === null ? t : { ...t, run: { ...t.run, retry: null } };
}

/** `values` carries each channel whole (minus messages): a present key replaces what we had. */
export function applyValues(t: ThreadView, data: Record<string, unknown>): ThreadView {
  let out = t;
  if ("title" in data) out = { ...out, title: typeof data.title === "string" ? data.title : null };
  if (Array.isArray(data.artifacts)) {
    const known = new Map(t.artifacts.map((a) => [a.path, a]));
    const artifacts: ArtifactItem[] = data.artifacts
      .filter((p): p is string => typeof p === "string")
      .map((p) => known.get(p) ?? { path: p, exists: true });
    if (!sameArtifacts(t.artifacts, artifacts)) out = { ...out, artifacts };
  }
  if ("todos" in data) {
    const todos = Array.isArray(data.todos) ? data.todos.filter(isTodo) : null;
    if (JSON.stringify(todos) !== JSON.stringify(t.todos)) out = { ...out, todos };
  }
  if (isRecord(data.viewed_images)) {
    const images: ViewedImageItem[] = [];
    for (const [path, v] of Object.entries(data.viewed_images)) {
      if (isRecord(v) && typeof v.sha256 === "string") {
        images.push({ path, sha256: v.sha256, mime_type: typeof v.mime_type === "string" ? v.mime_type : "", size: typeof v.size === "number" ? v.size : 0 });
      }
    }
    if (!sameImages(t.viewedImages, images)) out = { ...out, viewedImages: images };
  }
  if (Array.isArray(data.uploaded_files)) {
    const names = data.uploaded_files.flatMap((f: unknown) => (isRecord(f) && typeof f.filename === "string" ? [f.filename] : []));
    if (names.join("\n") !== t.uploadedFiles.join("\n")) out = { ...out, uploadedFiles: names };
  }
  return out;
}

// values repeat after every node; keeping the old array when nothing changed spares a re-render.
function sameArtifacts(a: readonly ArtifactItem[], b: readonly ArtifactItem[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameImages(a: readonly ViewedImageItem[], b: readonly ViewedImageItem[]): boolean {
  return a.length === b.length && a.every((x, i) => x.path === b[i]?.path && x.sha256 === b[i]?.sha256);
}

function isTodo(v: unknown): v is TodoItem {
  return isRecord(v) && typeof v.content === "string" && (v.status === "pending" || v.status === "in_progress" || v.status === "completed");
}

function isChunk(v: unknown): v is WireMessageChunk {
  return isRecord(v) && typeof v.type === "string" && (typeof v.id === "string" || v.id === undefined);
}

function isWireMessage(v: unknown): v is WireMessage {
  return isRecord(v) && typeof v.type === "string" && (typeof v.content === "string" || Array.isArray(v.content));
}
