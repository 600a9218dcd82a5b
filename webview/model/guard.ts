/**
 * The webview's trust boundary for host messages. The host is ours, but a version skew or a bug
 * must cost a console warning, not a blank panel: anything that does not match HostToWebview's
 * shape is dropped here, before a reducer sees it. Checks are structural and shallow; the
 * reducers tolerate odd payloads inside well-formed envelopes (unknown event data is skipped).
 */
import type { HostToWebview } from "../../extension/protocol/webview.js";
import type { JournalEvent } from "../../extension/protocol/rpc.js";
import { isRecord } from "./messages.js";

const EVENT_NAMES = new Set(["metadata", "values", "updates", "messages", "custom", "error", "end"]);

const str = (v: unknown): v is string => typeof v === "string";
const strOrNull = (v: unknown): boolean => v === null || typeof v === "string";
const arr = (v: unknown): v is unknown[] => Array.isArray(v);

function isThreadSummary(v: unknown): boolean {
  return isRecord(v) && str(v.thread_id) && str(v.workspace_folder) && strOrNull(v.title);
}

export function isJournalEvent(v: unknown): v is JournalEvent {
  if (!isRecord(v) || typeof v.seq !== "number" || !str(v.event) || !EVENT_NAMES.has(v.event)) return false;
  if (v.event === "messages") return arr(v.data);
  if (!isRecord(v.data)) return false;
  if (v.event === "end") return str(v.data.status);
  if (v.event === "custom") return str(v.data.type);
  return true;
}

/** Returns the message if it is well formed (with malformed events filtered out), else null. */
export function parseHostMessage(raw: unknown, warn: (msg: string, detail?: unknown) => void = console.warn): HostToWebview | null {
  if (!isRecord(raw) || !str(raw.type)) {
    warn("DeerFlow panel: ignoring a host message without a type", raw);
    return null;
  }
  const m = raw;
  const ok = ((): boolean => {
    switch (m.type) {
      case "init":
        return arr(m.threads) && m.threads.every(isThreadSummary) && strOrNull(m.threadId) && arr(m.models) &&
          m.models.every((x) => isRecord(x) && str(x.name) && str(x.label)) && strOrNull(m.model) && typeof m.planMode === "boolean";
      case "threads":
        return arr(m.threads) && m.threads.every(isThreadSummary) && strOrNull(m.threadId);
      case "state":
        return isRecord(m.state) && str(m.state.thread_id) && arr(m.state.messages) && typeof m.state.last_seq === "number" &&
          arr(m.state.artifacts) && arr(m.state.viewed_images) && arr(m.state.uploaded_files) && strOrNull(m.state.title) &&
          (m.state.todos === null || arr(m.state.todos));
      case "events":
        return str(m.threadId) && arr(m.events);
      case "status":
        return isRecord(m.status);
      case "attachments":
        return arr(m.files) && m.files.every((f) => isRecord(f) && str(f.name) && typeof f.size === "number");
      case "model":
        return str(m.model) && typeof m.planMode === "boolean";
      case "image":
        return str(m.sha256) && strOrNull(m.dataUrl);
      case "error":
        return str(m.message);
      case "mcpServers":
        return arr(m.servers) && m.servers.every((x) => isRecord(x) && str(x.name) && str(x.source) && str(x.scope) && str(x.state) &&
          (x.reason === undefined || str(x.reason)) && arr(x.tools) && x.tools.every((t) => isRecord(t) && str(t.name) && str(t.tool) && str(t.description)));
      case "skills":
        return arr(m.skills) && m.skills.every((x) => isRecord(x) && str(x.name) && str(x.scope) && str(x.description) && typeof x.enabled === "boolean" && typeof x.user_invocable === "boolean" && typeof x.problems === "number");
      default:
        return false;
    }
  })();
  if (!ok) {
    warn(`DeerFlow panel: ignoring a malformed "${String(m.type)}" message`, raw);
    return null;
  }
  if (m.type === "events") {
    const events = (m.events as unknown[]).filter((e) => {
      const good = isJournalEvent(e);
      if (!good) warn("DeerFlow panel: ignoring a malformed journal event", e);
      return good;
    });
    return { type: "events", threadId: m.threadId as string, events };
  }
  return m as unknown as HostToWebview;
}
