/**
 * TokenUsageMiddleware (DeerFlow `token_usage_middleware.py`): usage per model call, on the message.
 *
 * `@langchain/openai` (with `streamUsage: true`) already puts the provider's numbers on every
 * AIMessage as `usage_metadata`. This middleware adds DeerFlow's step attribution, so a UI can say
 * what the tokens were spent on: `additional_kwargs.token_usage_attribution = {version: 1, kind,
 * shared_attribution, tool_call_ids, actions}` with kind `tool_batch`, `final_answer`, `thinking`,
 * `todo_update` or `subagent_dispatch`.
 *
 * Usage per RUN is summed by the turn runner (runs/runTurn.ts) over the run's AI messages and sent
 * in the final `end` event, as DeerFlow's worker does from its journal.
 *
 * Where we differ from DeerFlow: no log line (the harness has no console; the numbers are on the
 * message and in the end event); write_todos calls are attributed as one `todo_update` action
 * instead of per-item diffs; no subagent usage folding (no subagents yet).
 */
import { createMiddleware } from "langchain";
import { AIMessage } from "@langchain/core/messages";

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

/** The message with its attribution, as a new AIMessage (same id: the reducer replaces it). */
function stamped(message: AIMessage): AIMessage {
  return new AIMessage({
    content: message.content,
    ...(message.id ? { id: message.id } : {}),
    ...(message.name ? { name: message.name } : {}),
    additional_kwargs: { ...message.additional_kwargs, [TOKEN_USAGE_ATTRIBUTION_KEY]: tokenUsageAttribution(message) },
    response_metadata: message.response_metadata,
    ...(message.usage_metadata ? { usage_metadata: message.usage_metadata } : {}),
    tool_calls: message.tool_calls ?? [],
    invalid_tool_calls: message.invalid_tool_calls ?? [],
  });
}

/** Whether the message carries an attribution that still matches its tool calls. */
function attributed(message: AIMessage): boolean {
  const a = message.additional_kwargs[TOKEN_USAGE_ATTRIBUTION_KEY] as { tool_call_ids?: unknown } | undefined;
  const had = a?.tool_call_ids;
  if (!Array.isArray(had)) return false;
  const ids = (message.tool_calls ?? []).map((c) => str(c.id)).filter((id): id is string => id !== null);
  return had.length === ids.length && ids.every((id, i) => had[i] === id);
}

export function tokenUsageMiddleware() {
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
      if (!last || !AIMessage.isInstance(last) || !last.id || attributed(last)) return undefined;
      return { messages: [stamped(last)] };
    },
  });
}
