/**
 * DanglingToolCallMiddleware (DeerFlow `dangling_tool_call_middleware.py`): before every model
 * request, make the history provider-valid. Strict OpenAI-compatible endpoints answer 400 when an
 * assistant tool call has no tool result right after it (a run killed or cancelled mid-tool), when
 * a tool result has no call (orphan), or when a call's name is empty.
 *
 * Request-only (`wrapModelCall`): the checkpoint keeps the original history; the patch is rebuilt
 * for every request, so a result that arrives later simply replaces the placeholder.
 *
 * Where we differ from DeerFlow, because the JS serializer differs: `@langchain/openai` sends an
 * AIMessage's structured `tool_calls` when there are any and silently leaves `invalid_tool_calls`
 * out; only when both are empty does it fall back to the raw `additional_kwargs.tool_calls`.
 * Python's serializer sends invalid calls too. So a placeholder for an invalid call would be an
 * orphan on the wire here unless the call is serialised as well: we fold invalid calls into the
 * structured list with `{}` arguments (the #4172 shape) and rewrite the raw payload to match.
 */
import { createMiddleware } from "langchain";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";

const UNKNOWN_TOOL_NAME = "unknown_tool";
const SYNTHETIC_ID_PREFIX = "deerflow_synthetic_tool_call_";
/** Issue #2894: invalid write_file payloads can be huge; never echo more than this back. */
const MAX_ERROR_DETAIL = 500;

export const INTERRUPTED_RESULT = "[Tool call was interrupted and did not return a result.]";
export const EMPTY_NAME_RESULT =
  "[Tool call could not be executed because its name was missing or empty. Use one of the available tool names when retrying.]";

type CallSource = "call" | "invalid" | "raw";

interface NormalizedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The model sent no usable name. */
  invalidName: boolean;
  /** The arguments could not be parsed into an object; the parser's message when known. */
  invalidArgs?: { error: string | undefined };
  /** The id was missing or blank and was replaced by a synthetic one. */
  relabelled: boolean;
  /** Name/args/id differ from what the message carries, or the call was not structured. */
  changed: boolean;
}

const validName = (n: unknown): n is string => typeof n === "string" && n.trim().length > 0;
const validId = (id: unknown): id is string => typeof id === "string" && id.trim().length > 0;

function parseObject(raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

interface RawToolCall {
  id?: unknown;
  name?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** All calls of one AIMessage in the view the serializer will send, normalised. */
function normalizeCalls(msg: AIMessage, msgIndex: number): NormalizedCall[] {
  const out: NormalizedCall[] = [];
  const id = (raw: unknown, source: CallSource, pos: number): [string, boolean] =>
    // Valid ids are kept byte for byte, even " call_1 ": providers compare them verbatim.
    validId(raw) ? [raw, false] : [`${SYNTHETIC_ID_PREFIX}${msgIndex}_${source}_${pos}`, true];

  const structured = msg.tool_calls ?? [];
  structured.forEach((tc, pos) => {
    const [callId, relabelled] = id(tc.id, "call", pos);
    const args = typeof tc.args === "object" && tc.args !== null && !Array.isArray(tc.args) ? tc.args : {};
    out.push({
      id: callId,
      name: validName(tc.name) ? tc.name.trim() : UNKNOWN_TOOL_NAME,
      args,
      invalidName: !validName(tc.name),
      relabelled,
      changed: relabelled || !validName(tc.name) || tc.name !== tc.name.trim() || args !== tc.args,
    });
  });
  const invalid = msg.invalid_tool_calls ?? [];
  invalid.forEach((tc, pos) => {
    const [callId, relabelled] = id(tc.id, "invalid", pos);
    out.push({
      id: callId,
      name: validName(tc.name) ? tc.name.trim() : UNKNOWN_TOOL_NAME,
      args: {},
      invalidName: !validName(tc.name),
      invalidArgs: { error: typeof tc.error === "string" && tc.error ? tc.error : undefined },
      relabelled,
      changed: true,
    });
  });
  // The raw payload is only what goes on the wire when both structured views are empty.
  const raw = msg.additional_kwargs.tool_calls as unknown;
  if (structured.length === 0 && invalid.length === 0 && Array.isArray(raw)) {
    (raw as unknown[]).forEach((item, pos) => {
      if (typeof item !== "object" || item === null) return;
      const tc = item as RawToolCall;
      const rawName = validName(tc.function?.name) ? tc.function?.name : tc.name;
      const parsed = parseObject(tc.function?.arguments);
      const [callId, relabelled] = id(tc.id, "raw", pos);
      out.push({
        id: callId,
        name: validName(rawName) ? rawName.trim() : UNKNOWN_TOOL_NAME,
        args: parsed ?? {},
        invalidName: !validName(rawName),
        ...(parsed ? {} : { invalidArgs: { error: undefined } }),
        relabelled,
        changed: true,
      });
    });
  }
  return out;
}

function syntheticContent(call: NormalizedCall): string {
  if (call.invalidName) return EMPTY_NAME_RESULT;
  if (call.invalidArgs) {
    const detail = call.invalidArgs.error?.slice(0, MAX_ERROR_DETAIL) ?? "";
    if (call.name === "write_file") {
      return (
        "[write_file failed before execution: the tool-call arguments were not valid JSON, " +
        "so no file was written. This often happens when the model tries to write a very " +
        "large Markdown file in a single tool call, especially when `content` contains " +
        "unescaped quotes, inline JSON, backslashes, or code fences. Do not retry the same " +
        "large `write_file` payload for this artifact; provide the report/content directly " +
        "as normal assistant text in your next response. If a file write is still needed " +
        `later, split the file into smaller sections instead of one large payload.${detail ? ` Parser error: ${detail}` : ""}]`
      );
    }
    return detail
      ? `[Tool call could not be executed because its arguments were invalid: ${detail}]`
      : "[Tool call could not be executed because its arguments were invalid.]";
  }
  return INTERRUPTED_RESULT;
}

/** The AIMessage as it must be serialised: every call structured, named, with object args. */
function patchedAiMessage(msg: AIMessage, calls: NormalizedCall[]): AIMessage {
  const kwargs: Record<string, unknown> = { ...msg.additional_kwargs };
  if (Array.isArray(kwargs.tool_calls)) {
    kwargs.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
  }
  return new AIMessage({
    content: msg.content,
    ...(msg.id ? { id: msg.id } : {}),
    ...(msg.name ? { name: msg.name } : {}),
    additional_kwargs: kwargs,
    response_metadata: msg.response_metadata,
    ...(msg.usage_metadata ? { usage_metadata: msg.usage_metadata } : {}),
    tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.args, type: "tool_call" as const })),
    invalid_tool_calls: [],
  });
}

/**
 * Tool results with a blank id cannot name their call. Within the turn that issued relabelled
 * calls, a result is claimed only when the choice is forced: one compatible call, or (when every
 * relabelled call of the turn has a result) by position. Otherwise it stays unattributed and is
 * dropped as an orphan: better than inventing a pairing (DeerFlow's `_claim_synthetic_id`).
 */
function relabelResults(messages: BaseMessage[], callsByIndex: Map<number, NormalizedCall[]>): Map<number, string> {
  const claims = new Map<number, string>();
  let open: NormalizedCall[] = [];
  let positional = false;
  messages.forEach((m, i) => {
    const calls = callsByIndex.get(i);
    if (calls) {
      open = calls.filter((c) => c.relabelled);
      let blank = 0;
      for (const next of messages.slice(i + 1)) {
        if (next.getType() === "ai") break;
        if (ToolMessage.isInstance(next) && !validId(next.tool_call_id)) blank++;
      }
      positional = blank === open.length;
      return;
    }
    if (!ToolMessage.isInstance(m) || validId(m.tool_call_id)) return;
    const candidates = open.filter((c) => !validName(m.name) || c.invalidName || c.name === m.name.trim());
    const pick = candidates.length === 1 || (candidates.length > 1 && positional) ? candidates[0] : undefined;
    if (!pick) return;
    open = open.filter((c) => c !== pick);
    claims.set(i, pick.id);
  });
  return claims;
}

/**
 * DeerFlow's `_build_patched_messages` as a pure function: the provider-valid history, or `null`
 * when the history is already valid (then the request is forwarded unchanged).
 */
export function patchToolCallHistory(messages: BaseMessage[]): BaseMessage[] | null {
  const callsByIndex = new Map<number, NormalizedCall[]>();
  messages.forEach((m, i) => {
    if (m.getType() === "ai" && AIMessage.isInstance(m)) {
      const calls = normalizeCalls(m, i);
      if (calls.length > 0) callsByIndex.set(i, calls);
    }
  });
  const claims = relabelResults(messages, callsByIndex);
  const resultId = (m: ToolMessage, i: number): string => claims.get(i) ?? m.tool_call_id;

  const results = new Map<string, Array<{ msg: ToolMessage; index: number }>>();
  messages.forEach((m, i) => {
    if (!ToolMessage.isInstance(m)) return;
    const id = resultId(m, i);
    const queue = results.get(id) ?? [];
    queue.push({ msg: m, index: i });
    results.set(id, queue);
  });

  const out: BaseMessage[] = [];
  messages.forEach((m, i) => {
    if (ToolMessage.isInstance(m)) return; // re-emitted after its call, or an orphan: dropped
    const calls = callsByIndex.get(i);
    if (!calls) {
      out.push(m);
      return;
    }
    const ai = m as AIMessage;
    out.push(calls.some((c) => c.changed) ? patchedAiMessage(ai, calls) : ai);
    for (const call of calls) {
      const found = results.get(call.id)?.shift();
      if (found) {
        const { msg, index } = found;
        const relabel = claims.get(index);
        out.push(
          relabel === undefined
            ? msg
            : new ToolMessage({
                content: msg.content,
                tool_call_id: relabel,
                name: validName(msg.name) ? msg.name : call.name,
                ...(msg.id ? { id: msg.id } : {}),
                ...(msg.status ? { status: msg.status } : {}),
                additional_kwargs: msg.additional_kwargs,
              }),
        );
      } else {
        out.push(new ToolMessage({ content: syntheticContent(call), tool_call_id: call.id, name: call.name, status: "error" }));
      }
    }
  });

  const unchanged = out.length === messages.length && out.every((m, i) => m === messages[i]);
  return unchanged ? null : out;
}

export function danglingToolCallMiddleware() {
  return createMiddleware({
    name: "DanglingToolCallMiddleware",
    wrapModelCall: (request, handler) => {
      const patched = patchToolCallHistory(request.messages);
      return handler(patched ? { ...request, messages: patched } : request);
    },
  });
}
