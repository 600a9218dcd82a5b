/**
 * The panel's store: one pure reducer over HostToWebview messages. main.ts feeds it every
 * validated host message and schedules a render; components read the state and post
 * WebviewToHost messages, never mutate it.
 */
import type { HostToWebview } from "../extension/protocol/webview.js";
import { applyEvents, fromState } from "./model/threadView.js";
import type { PanelState, ThreadView } from "./model/types.js";

export type { PanelState, ThreadView } from "./model/types.js";

export const initialState: PanelState = {
  threads: [],
  threadId: null,
  models: [],
  model: null,
  planMode: false,
  thread: null,
  status: undefined,
  attachments: [],
  images: new Map(),
  notice: null,
};

/** A thread view survives only while it is the shown thread; the host sends `state` on a switch. */
function keepThread(thread: ThreadView | null, threadId: string | null): ThreadView | null {
  return thread && thread.threadId === threadId ? thread : null;
}

export function reduce(s: PanelState, m: HostToWebview): PanelState {
  switch (m.type) {
    case "init":
      return {
        ...s,
        threads: m.threads,
        threadId: m.threadId,
        models: m.models,
        model: m.model,
        planMode: m.planMode,
        thread: keepThread(s.thread, m.threadId),
      };
    case "threads":
      return { ...s, threads: m.threads, threadId: m.threadId, thread: keepThread(s.thread, m.threadId) };
    case "state":
      // The snapshot is authoritative (switch or reload): it replaces the view, and its last_seq
      // is where the live events continue.
      return { ...s, threadId: m.state.thread_id, thread: fromState(m.state) };
    case "events": {
      if (!s.thread || s.thread.threadId !== m.threadId) return s;
      const thread = applyEvents(s.thread, m.events);
      return thread === s.thread ? s : { ...s, thread };
    }
    case "status":
      return { ...s, status: m.status };
    case "attachments":
      return { ...s, attachments: m.files };
    case "model":
      return { ...s, model: m.model, planMode: m.planMode };
    case "image": {
      const images = new Map(s.images);
      images.set(m.sha256, m.dataUrl);
      return { ...s, images };
    }
    case "error":
      return { ...s, notice: m.message };
    default:
      return s;
  }
}

export function dismissNotice(s: PanelState): PanelState {
  return s.notice === null ? s : { ...s, notice: null };
}

export type RunPhase = "idle" | "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

/**
 * What the status bar shows. The host's `status` knows whether a run is active right now; the
 * journal knows how the last one ended. While the host says a run is active, that wins; once it
 * says none is, a journal status still "running" is stale (its end will come or never did).
 */
export function runPhase(s: PanelState): RunPhase {
  const hostRun = s.status?.run;
  if (hostRun) return hostRun.status;
  const ev = s.thread?.run.status ?? null;
  if (ev === null) return "idle";
  if (ev === "pending" || ev === "running") return s.status === undefined ? ev : "idle";
  return ev;
}

export function isRunActive(s: PanelState): boolean {
  const p = runPhase(s);
  return p === "pending" || p === "running";
}

/** The state a reloaded webview needs to ask for a replay: which thread, from which seq. */
export function persisted(s: PanelState): { threadId?: string; lastSeq?: number } {
  return s.thread ? { threadId: s.thread.threadId, lastSeq: s.thread.lastSeq } : s.threadId ? { threadId: s.threadId } : {};
}
