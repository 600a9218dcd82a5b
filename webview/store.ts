/**
 * The panel's store: one pure reducer over HostToWebview messages. main.ts feeds it every
 * validated host message and schedules a render; components read the state and post
 * WebviewToHost messages, never mutate it.
 */
import type { HostToWebview } from "../extension/protocol/webview.js";
import type { RunStatus } from "../extension/protocol/events.js";
import { applyEvents, fromState, turnCappedKey } from "./model/threadView.js";
import type { PanelState, ThreadView } from "./model/types.js";

export type { PanelState, ThreadView } from "./model/types.js";

export const initialState: PanelState = {
  hostReady: false,
  threads: [],
  threadId: null,
  models: [],
  model: null,
  modelChosen: false,
  planMode: false,
  thread: null,
  status: undefined,
  liveRun: undefined,
  attachments: [],
  images: new Map(),
  notice: null,
  continued: null,
  skills: [],
  mcpServers: [],
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
        hostReady: true,
        threads: m.threads,
        threadId: m.threadId,
        models: m.models,
        model: m.model,
        modelChosen: m.modelChosen === true,
        planMode: m.planMode,
        thread: keepThread(s.thread, m.threadId),
      };
    case "threads":
      return { ...s, threads: m.threads, threadId: m.threadId, thread: keepThread(s.thread, m.threadId) };
    case "state": {
      // The snapshot is authoritative (switch or reload): it replaces the view, and its last_seq
      // is where the live events continue.
      const thread = fromState(m.state);
      return { ...s, threadId: m.state.thread_id, thread, liveRun: activeOf(thread.run.status), continued: null };
    }
    case "events": {
      if (!s.thread || s.thread.threadId !== m.threadId) return s;
      const thread = applyEvents(s.thread, m.events);
      if (thread === s.thread) return s;
      const moved = thread.run.status !== s.thread.run.status || thread.run.runId !== s.thread.run.runId;
      return { ...s, thread, liveRun: moved ? activeOf(thread.run.status) : s.liveRun };
    }
    case "status":
      return { ...s, status: m.status, liveRun: m.status.run?.status ?? null };
    case "attachments":
      return { ...s, attachments: m.files };
    case "model":
      return { ...s, model: m.model, modelChosen: m.modelChosen === true, planMode: m.planMode };
    case "image": {
      const images = new Map(s.images);
      images.set(m.sha256, m.dataUrl);
      return { ...s, images };
    }
    case "skills":
      return { ...s, skills: m.skills };
    case "mcpServers":
      return { ...s, mcpServers: m.servers };
    case "error":
      // A refused Continue (the host says why) offers the button again.
      return { ...s, notice: m.message, continued: null };
    default:
      return s;
  }
}

export function dismissNotice(s: PanelState): PanelState {
  return s.notice === null ? s : { ...s, notice: null };
}

/**
 * Whether the panel offers Continue: the shown thread's last run used its turn budget, no run is
 * active, and Continue was not pressed for it already (model/threadView.ts turnCappedKey).
 */
export function canContinue(s: PanelState): boolean {
  if (!s.thread || isRunActive(s)) return false;
  const key = turnCappedKey(s.thread);
  return key !== null && key !== s.continued;
}

/** Continue was pressed: hide it until the run it starts (or the host's refusal) is heard of. */
export function markContinued(s: PanelState): PanelState {
  const key = s.thread ? turnCappedKey(s.thread) : null;
  return key === null || key === s.continued ? s : { ...s, continued: key };
}

export type RunPhase = "idle" | "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

function activeOf(status: RunStatus | null): "pending" | "running" | null {
  return status === "pending" || status === "running" ? status : null;
}

/**
 * What the status bar shows. Whether a run is active comes from the latest word on it (host
 * status, snapshot or journal: they arrive in any order around a reload); how the last run ended
 * comes from the journal. A journal still saying "running" after the latest word was "no run" is
 * stale (its end will come, or the process died and never wrote one).
 */
export function runPhase(s: PanelState): RunPhase {
  if (s.liveRun) return s.liveRun;
  const ev = s.thread?.run.status ?? null;
  if (ev === null) return "idle";
  if (ev === "pending" || ev === "running") return s.liveRun === undefined ? ev : "idle";
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
