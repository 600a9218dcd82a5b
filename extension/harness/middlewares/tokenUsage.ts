/**
 * TokenUsageMiddleware (DeerFlow `token_usage_middleware.py`): usage per model call, on the message.
 *
 * `@langchain/openai` (with `streamUsage: true`) already puts the provider's numbers on every
 * AIMessage as `usage_metadata`. This middleware adds DeerFlow's step attribution, so a UI can say
 * what the tokens were spent on: `additional_kwargs.token_usage_attribution = {version: 1, kind,
 * shared_attribution, tool_call_ids, actions}` with kind `tool_batch`, `final_answer`, `thinking`,
 * `todo_update` or `subagent_dispatch`.
 *
 * Usage per RUN is summed by the turn runner (runs/runTurn.ts, runs/usage.ts) over the run's AI
 * messages and sent in the final `end` event, as DeerFlow's worker does from its journal.
 *
 * Subagent usage folding (DeerFlow, reference §3.3.9): after a model call, each finished `task`
 * ToolMessage that reports `subagent_token_usage` and is not yet marked is folded into the
 * `usage_metadata` of the AI message that dispatched it, and the ToolMessage is marked
 * `subagent_token_usage_attributed: true`; both are re-emitted by id (the reducer replaces them),
 * so a replay folds nothing twice. The run's usage then reads the folded AI message (latest copy
 * by id) and skips the marked tasks (runs/usage.ts): lead + subagents, each counted once.
 * Only AI messages this run created are folded: one from an earlier run (a `task` call decided
 * in an approval's resume run) would bring that run's whole usage into this run's sum, so its
 * tasks stay unfolded and are added from their events instead.
 *
 * Where we differ from DeerFlow: no log line (the harness has no console; the numbers are on the
 * message and in the end event); write_todos calls are attributed as one `todo_update` action
 * instead of per-item diffs; folding matches the dispatching message by tool-call id only
 * (DeerFlow falls back to message position for id-less messages; ours always carry ids).
 */
import { createMiddleware } from "langchain";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY } from "../runs/usage.js";

export const TOKEN_USAGE_ATTRIBUTION_KEY = "token_usage_attribution";

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);

function describe(call: ToolCall): Record<string, unknown> {
  const args = call.args && typeof call.args === "object" ? (call.args as Record<string, unknown>) : {};
  const id = str(call.id);
  switch (call.name) {
    case "write_todos":
      return { kind: "todo_update", tool_call_id: id };
    case "task":
      return { kind: "subagent", description: str(args.description), subagent_type: str(args.subagent_type), tool_call_id: id };
    case "web_search":
    case "image_search":
      return { kind: "search", tool_name: call.name, query: str(args.query), tool_call_id: id };
    case "present_files":
      return { kind: "present_files", tool_call_id: id };
    case "ask_clarification":
      return { kind: "clarification", tool_call_id: id };
    default:
      return { kind: "tool", tool_name: str(call.name) ?? "unknown", description: str(args.description), tool_call_id: id };
  }
}

export function tokenUsageAttribution(message: AIMessage): Record<string, unknown> {
  const calls = message.tool_calls ?? [];
  const actions = calls.map(describe);
  const first = actions[0]?.kind;
  const kind =
    actions.length === 0
      ? message.text
        ? "final_answer"
        : "thinking"
      : actions.length === 1 && first === "todo_update"
        ? "todo_update"
        : actions.length === 1 && first === "subagent"
          ? "subagent_dispatch"
          : "tool_batch";
  return {
    version: 1,
    kind,
    shared_attribution: actions.length > 1,
    tool_call_ids: calls.map((c) => str(c.id)).filter((id): id is string => id !== null),
    actions,
  };
}


type UsageMetadata = NonNullable<AIMessage["usage_metadata"]>;

/** A copy of the message (same id: the reducer replaces it) with other kwargs or usage. */
function copyAi(message: AIMessage, change: { additional_kwargs?: Record<string, unknown>; usage_metadata?: UsageMetadata }): AIMessage {
  const usage = change.usage_metadata ?? message.usage_metadata;
  return new AIMessage({
    content: message.content,
    ...(message.id ? { id: message.id } : {}),
    ...(message.name ? { name: message.name } : {}),
    additional_kwargs: change.additional_kwargs ?? message.additional_kwargs,
    response_metadata: message.response_metadata,
    ...(usage ? { usage_metadata: usage } : {}),
    tool_calls: message.tool_calls ?? [],
    invalid_tool_calls: message.invalid_tool_calls ?? [],
  });
}

/** The message with its attribution, as a new AIMessage (same id: the reducer replaces it). */
function stamped(message: AIMessage): AIMessage {
  return copyAi(message, { additional_kwargs: { ...message.additional_kwargs, [TOKEN_USAGE_ATTRIBUTION_KEY]: tokenUsageAttribution(message) } });
}

const tokens = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** A finished `task` result's usage still to fold, or undefined. */
function unfoldedTaskUsage(m: BaseMessage): { input: number; output: number; total: number } | undefined {
  if (!ToolMessage.isInstance(m) || m.name !== "task" || !m.id) return undefined;
  const kw = m.additional_kwargs ?? {};
  if (kw[SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY] === true) return undefined;
  const u = kw.subagent_token_usage as Record<string, unknown> | undefined;
  if (!u || typeof u !== "object") return undefined;
  const input = tokens(u.input_tokens);
  const output = tokens(u.output_tokens);
  return { input, output, total: tokens(u.total_tokens) || input + output };
}

/**
 * The fold (see the header): updated copies of the dispatching AI messages (created in this run,
 * `ownIds`) and of the `task` ToolMessages whose usage went into them; [] when there is nothing.
 */
export function foldSubagentUsage(messages: readonly BaseMessage[], ownIds: ReadonlySet<string>): BaseMessage[] {
  const dispatcher = new Map<string, AIMessage>();
  for (const m of messages) {
    if (AIMessage.isInstance(m) && m.id && ownIds.has(m.id)) for (const c of m.tool_calls ?? []) if (c.id) dispatcher.set(c.id, m);
  }
  const folded = new Map<string, { ai: AIMessage; input: number; output: number; total: number }>();
  const marked: ToolMessage[] = [];
  for (const m of messages) {
    const u = unfoldedTaskUsage(m);
    if (!u) continue;
    const tm = m as ToolMessage;
    const ai = dispatcher.get(tm.tool_call_id);
    if (!ai) continue;
    const acc = folded.get(ai.id!) ?? { ai, input: 0, output: 0, total: 0 };
    acc.input += u.input;
    acc.output += u.output;
    acc.total += u.total;
    folded.set(ai.id!, acc);
    marked.push(new ToolMessage({
      content: tm.content,
      id: tm.id!,
      tool_call_id: tm.tool_call_id,
      name: tm.name!,
      ...(tm.status ? { status: tm.status } : {}),
      ...(tm.artifact !== undefined ? { artifact: tm.artifact as unknown } : {}),
      additional_kwargs: { ...tm.additional_kwargs, [SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY]: true },
      response_metadata: tm.response_metadata,
    }));
  }
  const ais = [...folded.values()].map(({ ai, input, output, total }) => {
    const base: UsageMetadata = ai.usage_metadata ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    return copyAi(ai, { usage_metadata: { ...base, input_tokens: base.input_tokens + input, output_tokens: base.output_tokens + output, total_tokens: base.total_tokens + total } });
  });
  return [...ais, ...marked];
}

/** Whether the message carries an attribution that still matches its tool calls. */
function attributed(message: AIMessage): boolean {
  const a = message.additional_kwargs[TOKEN_USAGE_ATTRIBUTION_KEY] as { tool_call_ids?: unknown } | undefined;
  const had = a?.tool_call_ids;
  if (!Array.isArray(had)) return false;
  const ids = (message.tool_calls ?? []).map((c) => str(c.id)).filter((id): id is string => id !== null);
  return had.length === ids.length && ids.every((id, i) => had[i] === id);
}

/** One per run: the lead agent (and so this middleware) is built for each run (runs/worker.ts). */
export function tokenUsageMiddleware() {
  // The AI messages this run's model calls created: the only ones subagent usage is folded into.
  const ownIds = new Set<string>();
  return createMiddleware({
    name: "TokenUsageMiddleware",
    // Stamped where the model's message is created, so it is written to state (and the journal's
    // `updates`) once. DeerFlow stamps in after_model, which writes every AI message twice.
    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      return AIMessage.isInstance(response) ? stamped(response) : response;
    },
    // Only when a later middleware replaced the message and changed its tool calls (LoopDetection
    // stripping them on a hard stop): the attribution must describe what the message asks for.
    afterModel: (state) => {
      const last = state.messages.at(-1);
      const out: BaseMessage[] = [];
      if (last && AIMessage.isInstance(last) && last.id) {
        ownIds.add(last.id);
        if (!attributed(last)) out.push(stamped(last));
      }
      // The `task` results answered since the previous model call (DeerFlow folds in after_model).
      out.push(...foldSubagentUsage(state.messages, ownIds));
      return out.length > 0 ? { messages: out } : undefined;
    },
  });
}
