/**
 * Tool-call ids made unique in the thread, before any call is classified (issue 21). The model
 * chooses its ids: two calls of one turn may share one, and a later turn may repeat an id from
 * earlier in the thread (some providers number their calls per response). Either would let one
 * decision cover two calls, leave a decision that names the id ambiguous ("decided twice": the
 * thread could not be decided at all), pair a result with the wrong call, or make langchain's
 * router count a new call as already answered. So such ids are renamed, consistently in the AI
 * message (structured calls and the provider's raw payload) before anything else sees them; the
 * first use of an id in the thread keeps it. Also renamed: a missing or blank id and one longer
 * than a decision may name (DECISION_LIMITS.maxIdChars), so every paused call can be decided.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";
import type { CallPosition } from "./fingerprint.js";

/** Providers accept ids of these characters (Anthropic's tool_use ids are the strictest). */
const ID_CHARS = /[^A-Za-z0-9_-]/g;
const BASE_MAX = 64;

function usedBefore(messages: readonly BaseMessage[], end: number): Set<string> {
  const used = new Set<string>();
  for (let i = 0; i < end; i++) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (typeof c.id === "string") used.add(c.id);
    if (ToolMessage.isInstance(m)) used.add(m.tool_call_id);
  }
  return used;
}

function fresh(original: unknown, index: number, taken: Set<string>): string {
  const base = (typeof original === "string" ? original.replace(ID_CHARS, "") : "").slice(0, BASE_MAX) || "call";
  let id = `${base}_r${index}`;
  for (let n = 2; taken.has(id); n++) id = `${base}_r${index}_${n}`;
  return id;
}

/**
 * The AI message at `at` with its call ids unique in the thread, or undefined when they already
 * are. Same message id, so the messages reducer replaces it.
 */
export function renameCallIds(messages: readonly BaseMessage[], at: number): AIMessage | undefined {
  const ai = messages[at];
  if (!ai || !AIMessage.isInstance(ai) || !ai.tool_calls?.length) return undefined;
  const taken = usedBefore(messages, at);
  // The final id of each call, by the original id, in call order: the raw payload follows it.
  const finals = new Map<unknown, string[]>();
  let changed = false;
  const calls = ai.tool_calls.map((c, i) => {
    const ok = typeof c.id === "string" && c.id.trim() !== "" && c.id.length <= DECISION_LIMITS.maxIdChars && !taken.has(c.id);
    const id = ok ? c.id! : fresh(c.id, i, taken);
    taken.add(id);
    if (id !== c.id) changed = true;
    finals.set(c.id, [...(finals.get(c.id) ?? []), id]);
    return id === c.id ? c : { ...c, id };
  });
  if (!changed) return undefined;
  const kwargs: Record<string, unknown> = { ...ai.additional_kwargs };
  if (Array.isArray(kwargs.tool_calls)) {
    const next = new Map([...finals].map(([k, v]) => [k, [...v]]));
    kwargs.tool_calls = (kwargs.tool_calls as unknown[]).map((raw) => {
      if (raw === null || typeof raw !== "object") return raw;
      const id = next.get((raw as { id?: unknown }).id)?.shift();
      return id === undefined ? raw : { ...raw, id };
    });
  }
  return new AIMessage({
    content: ai.content,
    ...(ai.id ? { id: ai.id } : {}),
    ...(ai.name ? { name: ai.name } : {}),
    additional_kwargs: kwargs,
    response_metadata: ai.response_metadata,
    ...(ai.usage_metadata ? { usage_metadata: ai.usage_metadata } : {}),
    tool_calls: calls,
    invalid_tool_calls: ai.invalid_tool_calls ?? [],
  });
}

/** Where the call with this id sits: the latest AI message that has it (ids are unique once renamed). */
export function locateCall(messages: readonly BaseMessage[], callId: string | undefined): CallPosition | undefined {
  if (callId === undefined) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!AIMessage.isInstance(m) || !m.id) continue;
    const index = (m.tool_calls ?? []).findIndex((c) => c.id === callId);
    if (index >= 0) return { messageId: m.id, index };
  }
  return undefined;
}
