/**
 * Message reducers: complete wire messages (from `state` and `updates`), streamed token chunks
 * (`messages` events) and tool results, folded into the ThreadView's ordered message list.
 *
 * Replay safety: a complete message is upserted by id (re-sending it is a no-op); chunks only
 * append to a message that is still streaming, so chunks replayed for a message already known
 * complete are ignored. Together with the seq guard in threadView.ts that keeps a reload idempotent.
 */
import type { WireMessage, WireMessageChunk } from "../../extension/protocol/events.js";
import type { MessageView, ThreadView, ToolCallView, ToolResultView } from "./types.js";
import { outcomeLabel, toolOutcome } from "../../extension/protocol/toolOutcome.js";
import { PMap } from "./pmap.js";
import { Seq } from "./seq.js";

/** Text of string or block content: text blocks joined by "\n" (as the harness's contentText). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const b of content as unknown[]) {
    if (typeof b === "string") parts.push(b);
    else if (isRecord(b) && b.type === "text" && typeof b.text === "string") parts.push(b.text);
  }
  return parts.join("\n");
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fileNames(kwargs: Record<string, unknown> | undefined): string[] {
  const files = kwargs?.files;
  if (!Array.isArray(files)) return [];
  return files.flatMap((f: unknown) => {
    if (typeof f === "string") return [f.split("/").at(-1) ?? f];
    if (isRecord(f) && typeof f.filename === "string") return [f.filename];
    return [];
  });
}

/**
 * Framework messages DeerFlow's UI hides: system prompts, `hide_from_ui` injections (todo
 * reminders, the viewed-image context), and empty human messages. The last covers how a
 * LangGraph RemoveMessage currently reaches the wire (type "human", empty content, the removed id).
 */
function isHidden(m: WireMessage): boolean {
  if (m.type === "system") return true;
  const kw = m.additional_kwargs;
  if (kw?.hide_from_ui === true && !isRecord(kw.human_input_response)) return true;
  if (m.type === "human" && contentText(m.content).trim() === "" && fileNames(kw).length === 0) return true;
  return false;
}

/** The rows rebuilt whole (a row removed): a new index, and a new shape token for the list. */
function withIndex(t: ThreadView, messages: readonly MessageView[]): ThreadView {
  const index: Array<[string, number]> = [];
  const live: string[] = [];
  messages.forEach((m, i) => {
    index.push([m.key, i]);
    if (m.streaming) live.push(m.key);
  });
  return { ...t, messages: Seq.from(messages), index: PMap.from(index), live, rowsShape: {} };
}

/** `live` after row `key` became `m` (it holds the keys of the rows still streaming). */
function liveAfter(live: readonly string[], key: string, streaming: boolean): readonly string[] {
  const has = live.includes(key);
  if (streaming === has) return live;
  return streaming ? [...live, key] : live.filter((k) => k !== key);
}

function replaceAt(t: ThreadView, i: number, m: MessageView): ThreadView {
  return { ...t, messages: t.messages.set(i, m), live: liveAfter(t.live, m.key, m.streaming) };
}

function append(t: ThreadView, m: MessageView): ThreadView {
  return { ...t, messages: t.messages.push(m), index: t.index.set(m.key, t.messages.length), live: liveAfter(t.live, m.key, m.streaming) };
}

function remove(t: ThreadView, key: string): ThreadView {
  if (!t.index.has(key)) return t;
  return withIndex(t, t.messages.filter((m) => m.key !== key));
}

/** Claims call ids for `owner` and moves any result that arrived before its call onto the call. */
function adoptCalls(t: ThreadView, owner: string, calls: ToolCallView[]): { t: ThreadView; calls: ToolCallView[] } {
  let out = t;
  const adopted = calls.map((c) => {
    if (!c.id) return c;
    if (out.callOwner.get(c.id) !== owner) out = { ...out, callOwner: out.callOwner.set(c.id, owner) };
    const early = out.pendingResults.get(c.id);
    if (early && !c.result) {
      out = remove({ ...out, pendingResults: out.pendingResults.delete(c.id) }, orphanKey(c.id));
      return { ...c, result: early };
    }
    return c;
  });
  return { t: out, calls: adopted };
}

function orphanKey(toolCallId: string): string {
  return `tool:${toolCallId}`;
}

/** The view of a complete human/AI message, or null when the UI hides it. Results are attached by the caller. */
export function messageView(m: WireMessage): { key: string; view: MessageView | null } {
  const text = m.type === "human" && typeof m.additional_kwargs?.original_user_content === "string"
    ? m.additional_kwargs.original_user_content
    : contentText(m.content);
  const key = m.id ?? `anon:${m.type}:${text}`;
  if (isHidden(m)) return { key, view: null };
  const toolCalls: ToolCallView[] = (m.tool_calls ?? []).map((c) => ({
    id: c.id,
    name: c.name,
    args: isRecord(c.args) ? c.args : {},
    argsText: "",
    result: undefined,
  }));
  const view: MessageView = { key, role: m.type === "human" ? "human" : "ai", text, streaming: false, toolCalls, files: fileNames(m.additional_kwargs) };
  const stop = m.additional_kwargs?.stop_reason;
  if (m.type === "ai" && typeof stop === "string" && stop) view.stopReason = stop;
  return { key, view };
}

function toolResultOf(m: WireMessage): ToolResultInput {
  return {
    toolCallId: m.tool_call_id ?? "",
    messageId: m.id ?? "",
    content: contentText(m.content),
    status: m.status === "error" ? "error" : "success",
    name: m.name,
    additional_kwargs: m.additional_kwargs,
    subagent: m.name === "task" ? subagentFields(m.additional_kwargs) : undefined,
  };
}

/** A `task` result's DeerFlow status fields, which a subagent card reads when its events are not in view. */
function subagentFields(kw: Record<string, unknown> | undefined): ToolResultView["subagent"] {
  const u = kw?.subagent_token_usage;
  const usage = isRecord(u) && typeof u.total_tokens === "number"
    ? { input_tokens: Number(u.input_tokens) || 0, output_tokens: Number(u.output_tokens) || 0, total_tokens: u.total_tokens }
    : null;
  const status = typeof kw?.subagent_status === "string" ? kw.subagent_status : null;
  return status || usage ? { status, usage } : undefined;
}

function resultView(r: ToolResultInput): ToolResultView {
  const outcome = toolOutcome(r);
  return { messageId: r.messageId, content: r.content, status: r.status, outcome, ...(r.subagent ? { subagent: r.subagent } : {}) };
}

/** Upsert one complete message. Tool messages become the result of their call. */
export function upsertMessage(t: ThreadView, m: WireMessage): ThreadView {
  if ((m.type as string) === "remove") return m.id ? remove(t, m.id) : t;
  if (m.type === "tool") return applyToolResult(t, toolResultOf(m));
  const { key, view } = messageView(m);
  if (!view) return remove(t, key);

  const at = t.index.get(key);
  const prevCalls = new Map((at === undefined ? [] : t.messages.at(at)?.toolCalls ?? []).map((c) => [c.id, c]));
  const adopted = adoptCalls(t, key, view.toolCalls.map((c) => withTask({ ...c, result: prevCalls.get(c.id)?.result }, t.tasks.get(c.id))));
  const next: MessageView = { ...view, toolCalls: adopted.calls };
  const after = adopted.t;
  const i = after.index.get(key);
  if (i === undefined) return append(after, next);
  // A message repeated unchanged (replays, and updates that carry more than they changed) keeps
  // the thread as it is: copying the list for each would make an update O(thread²).
  if (after === t && sameView(t.messages.at(i)!, next)) return t;
  return replaceAt(after, i, next);
}

/** A `task` call keeps its subagent's view (model/tasks.ts) when its message is re-emitted. */
function withTask(c: ToolCallView, task: ToolCallView["task"]): ToolCallView {
  return task ? { ...c, task } : c;
}

function sameView(a: MessageView, b: MessageView): boolean {
  return a.role === b.role && a.text === b.text && a.streaming === b.streaming && a.stopReason === b.stopReason && a.files.join("\n") === b.files.join("\n") &&
    a.toolCalls.length === b.toolCalls.length &&
    a.toolCalls.every((c, k) => {
      const d = b.toolCalls[k]!;
      return c.id === d.id && c.name === d.name && c.argsText === d.argsText && c.result === d.result && c.task === d.task && JSON.stringify(c.args) === JSON.stringify(d.args);
    });
}

function sameResult(a: ToolResultView | undefined, b: ToolResultView): boolean {
  // A result without status fields (its streamed chunk) adds nothing to one that has them.
  const sameSubagent = b.subagent === undefined || (a?.subagent?.status === b.subagent.status && a.subagent.usage?.total_tokens === b.subagent.usage?.total_tokens);
  return a !== undefined && a.messageId === b.messageId && a.content === b.content && a.status === b.status && sameSubagent &&
    outcomeLabel(a.outcome) === outcomeLabel(b.outcome);
}

/**
 * A whole snapshot at once, in one pass (upserting one by one copies the list per message:
 * quadratic, seconds for a 10,000-message thread). Same rules as upsertMessage.
 */
export function buildMessages(t: ThreadView, wire: readonly WireMessage[]): ThreadView {
  const messages: MessageView[] = [];
  const index = new Map<string, number>();
  const callOwner = new Map<string, string>();
  const pendingResults = new Map<string, ToolResultView>();
  const put = (m: MessageView): void => {
    const i = index.get(m.key);
    if (i === undefined) {
      index.set(m.key, messages.length);
      messages.push(m);
    } else {
      messages[i] = m;
    }
  };
  for (const m of wire) {
    if (m.type === "tool") {
      const r = toolResultOf(m);
      const result = resultView(r);
      const owner = callOwner.get(r.toolCallId);
      const i = owner === undefined ? undefined : index.get(owner);
      const msg = i === undefined ? undefined : messages[i];
      if (msg && i !== undefined) {
        messages[i] = { ...msg, toolCalls: msg.toolCalls.map((c) => (c.id === r.toolCallId ? { ...c, result } : c)) };
      } else {
        pendingResults.set(r.toolCallId, result);
        put({ key: orphanKey(r.toolCallId), role: "tool", text: r.content, streaming: false, toolCalls: [], files: [], toolName: r.name ?? "tool" });
      }
      continue;
    }
    if ((m.type as string) === "remove" || m.type === "system") continue;
    const { key, view } = messageView(m);
    if (!view) continue;
    for (const c of view.toolCalls) if (c.id) callOwner.set(c.id, key);
    put(view);
  }
  return {
    ...t,
    messages: Seq.from(messages),
    index: PMap.from(index),
    callOwner: PMap.from(callOwner),
    pendingResults: PMap.from(pendingResults),
    live: [],
    rowsShape: {},
  };
}

export interface ToolResultInput {
  toolCallId: string;
  messageId: string;
  content: string;
  status: "success" | "error";
  name?: string | undefined;
  additional_kwargs?: Record<string, unknown> | undefined;
  subagent?: ToolResultView["subagent"];
}

/** Pairs a result with its call by tool_call_id; an unpaired result is shown as its own row. */
export function applyToolResult(t: ThreadView, r: ToolResultInput): ThreadView {
  const result = resultView(r);
  const owner = t.callOwner.get(r.toolCallId);
  const at = owner === undefined ? undefined : t.index.get(owner);
  const msg = at === undefined ? undefined : t.messages.at(at);
  if (msg && at !== undefined) {
    if (msg.toolCalls.every((c) => c.id !== r.toolCallId || sameResult(c.result, result))) return t;
    const calls = msg.toolCalls.map((c) => (c.id === r.toolCallId ? { ...c, result } : c));
    return replaceAt(t, at, { ...msg, toolCalls: calls });
  }
  const pendingResults = t.pendingResults.set(r.toolCallId, result);
  const row: MessageView = {
    key: orphanKey(r.toolCallId),
    role: "tool",
    text: r.content,
    streaming: false,
    toolCalls: [],
    files: [],
    toolName: r.name ?? "tool",
  };
  const withPending = { ...t, pendingResults };
  const i = withPending.index.get(row.key);
  return i === undefined ? append(withPending, row) : replaceAt(withPending, i, row);
}

/** The message a chunk without an id belongs to: the last one still streaming. */
function lastStreamingKey(t: ThreadView): string | undefined {
  return t.live.at(-1);
}

/** Appends one token chunk to its streaming AI message (created on the first chunk). */
export function applyChunk(t: ThreadView, c: WireMessageChunk): ThreadView {
  if (c.type === "tool") {
    return applyToolResult(t, {
      toolCallId: c.tool_call_id ?? "",
      messageId: c.id,
      content: typeof c.content === "string" ? c.content : contentText(c.content),
      status: "success",
      name: c.name,
    });
  }
  if (c.type !== "ai") return t;
  const key = c.id || lastStreamingKey(t);
  if (!key) return t;
  const at = t.index.get(key);
  const prev = at === undefined ? undefined : t.messages.at(at);
  // Known complete: this chunk is a replay (or late); the complete message already holds it.
  if (prev && !prev.streaming) return t;
  const text = (prev?.text ?? "") + (typeof c.content === "string" ? c.content : "");
  let calls = prev?.toolCalls ?? [];
  if (c.tool_call_chunks && c.tool_call_chunks.length > 0) calls = mergeCallChunks(calls, c.tool_call_chunks);
  if (prev && text === prev.text && calls === prev.toolCalls) return t;
  const adopted = adoptCalls(t, key, calls.slice());
  const view: MessageView = { key, role: "ai", text, streaming: true, toolCalls: adopted.calls, files: [] };
  const i = adopted.t.index.get(key);
  return i === undefined ? append(adopted.t, view) : replaceAt(adopted.t, i, view);
}

type CallChunk = NonNullable<WireMessageChunk["tool_call_chunks"]>[number];

/** Tool-call fragments merge by `index` (OpenAI streaming); a fragment without one extends the last call. */
export function mergeCallChunks(calls: readonly ToolCallView[], chunks: readonly CallChunk[]): ToolCallView[] {
  const out = calls.slice();
  for (const ch of chunks) {
    const i = typeof ch.index === "number" ? ch.index : out.length - 1;
    const cur = i >= 0 ? out[i] : undefined;
    if (!cur) {
      out.push({ id: ch.id ?? "", name: ch.name ?? "", args: undefined, argsText: ch.args ?? "", result: undefined });
      continue;
    }
    out[i] = {
      ...cur,
      id: cur.id || (ch.id ?? ""),
      name: cur.name || (ch.name ?? ""),
      argsText: cur.argsText + (ch.args ?? ""),
    };
  }
  return out;
}

/**
 * A model call that failed mid-stream is retried (an `llm_retry` event): its partial answer was
 * never a message and never will be — the retry streams a new one — so it is dropped.
 */
export function dropStreaming(t: ThreadView): ThreadView {
  if (t.live.length === 0) return t;
  const drop = new Set(t.live);
  return withIndex(t, t.messages.filter((m) => !drop.has(m.key)));
}

/** A run is over: nothing streams any more (a cancelled stream never gets its complete message). */
export function endStreaming(t: ThreadView): ThreadView {
  let out = t;
  for (const key of t.live) {
    const i = out.index.get(key);
    const m = i === undefined ? undefined : out.messages.at(i);
    if (m && i !== undefined) out = replaceAt(out, i, { ...m, streaming: false });
  }
  return out.live.length === 0 ? out : { ...out, live: [] };
}

export function appendError(t: ThreadView, key: string, error: string): ThreadView {
  if (t.index.has(key)) return t;
  return append(t, { key, role: "error", text: error, streaming: false, toolCalls: [], files: [], error });
}
