// Builders for host messages and journal events in the shapes the harness really emits
// (taken from `npm run demo` + `deerflow events`).
import type { JournalEvent, ThreadStateView } from "../../../extension/protocol/rpc.js";
import type { HostToWebview } from "../../../extension/protocol/webview.js";

export const T = "thread-1";
export const R = "run-1";

let seq = 0;
export function resetSeq(to = 0): void {
  seq = to;
}
function base(): { run_id: string; thread_id: string; seq: number } {
  return { run_id: R, thread_id: T, seq: ++seq };
}

export function stateMsg(over: Partial<ThreadStateView> = {}): HostToWebview {
  return {
    type: "state",
    state: { thread_id: T, title: null, messages: [], artifacts: [], todos: null, viewed_images: [], uploaded_files: [], last_seq: 0, ...over },
  };
}

export function events(...evs: JournalEvent[]): HostToWebview {
  return { type: "events", threadId: T, events: evs };
}

export const metadata = (): JournalEvent => ({ ...base(), event: "metadata", data: { run_id: R, thread_id: T, model: "m", sandbox: "local" } });
export const chunk = (id: string, content: string, extra: object = {}): JournalEvent => ({
  ...base(),
  event: "messages",
  data: [{ type: "ai", id, content, node: "model_request", ...extra }],
});
export const update = (node: string, messages: unknown[], extra: object = {}): JournalEvent => ({
  ...base(),
  event: "updates",
  data: { [node]: { messages, ...extra } },
});
export const values = (data: Record<string, unknown>): JournalEvent => ({ ...base(), event: "values", data: { message_count: 0, ...data } });
export const end = (status: "success" | "error" | "timeout" | "interrupted", error?: string): JournalEvent => ({
  ...base(),
  event: "end",
  data: { thread_id: T, run_id: R, status, ...(error ? { error } : {}) },
});
export const errorEv = (message: string): JournalEvent => ({ ...base(), event: "error", data: { name: "Error", message } });
export const custom = (data: { type: string; [k: string]: unknown }): JournalEvent => ({ ...base(), event: "custom", data });

export const human = (id: string, content: string, extra: object = {}) => ({ type: "human", id, content, ...extra });
export const ai = (id: string, content: string, tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>) =>
  ({ type: "ai", id, content, name: "model", ...(tool_calls ? { tool_calls } : {}) });
export const toolMsg = (id: string, tool_call_id: string, name: string, content: string, status?: "error") =>
  ({ type: "tool", id, tool_call_id, name, content, ...(status ? { status } : {}) });
