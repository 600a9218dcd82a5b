/**
 * ModelLengthFinishReasonMiddleware (DeerFlow `model_length_finish_reason_middleware.py`, issue
 * #4271): a final answer the provider cut at its output limit (`finish_reason: "length"`, Gemini
 * `MAX_TOKENS`, Anthropic `stop_reason: "max_tokens"`) is not a clean completion. The content is
 * kept untouched (never reparsed into a tool call); the run's `end` carries
 * `stop_reason: "model_length_capped"`.
 *
 * Only a terminal answer with visible text counts: one with tool intent is left to the tool path,
 * an empty one to TerminalResponse / Safety. DeerFlow stamps the reason on the run's runtime
 * context; we stamp it on the answer itself (`additional_kwargs.stop_reason`, same id, so the
 * reducer replaces it) and the worker reads it from the final message: the reason is then also in
 * the thread's state, next to the text it qualifies. DeerFlow has no user-facing text for this cap
 * (the UI renders the stop reason), so none is added.
 */
import { createMiddleware } from "langchain";
import { AIMessage } from "@langchain/core/messages";
import { hasToolCallIntentOrError } from "./todo.js";
import { hasVisibleContent } from "./terminalResponse.js";

export const MODEL_LENGTH_CAPPED = "model_length_capped";

/** A provider stop signal, read where adapters put it: response_metadata first, then additional_kwargs (DeerFlow `_get_metadata_value`). */
export function stopSignal(m: AIMessage, field: string): string | undefined {
  for (const container of [m.response_metadata, m.additional_kwargs] as Array<Record<string, unknown> | undefined>) {
    const v = container?.[field];
    if (typeof v === "string" && v) return v;
  }
  return undefined;
}

/** DeerFlow's default detectors: OpenAI-compatible `length`, Gemini `MAX_TOKENS`, Anthropic `max_tokens`. */
function lengthCapped(m: AIMessage): boolean {
  const finish = stopSignal(m, "finish_reason")?.toLowerCase();
  const stop = stopSignal(m, "stop_reason")?.toLowerCase();
  return finish === "length" || finish === "max_tokens" || stop === "max_tokens";
}

/** The same answer (same id) with `stop_reason` stamped, unless an earlier guard stamped one. */
export function withStopReason(m: AIMessage, reason: string, patch: Partial<{ content: AIMessage["content"]; additional_kwargs: Record<string, unknown> }> = {}): AIMessage {
  const kwargs = { ...(patch.additional_kwargs ?? m.additional_kwargs) };
  if (typeof kwargs.stop_reason !== "string") kwargs.stop_reason = reason;
  return new AIMessage({
    content: patch.content ?? m.content,
    ...(m.id ? { id: m.id } : {}),
    ...(m.name ? { name: m.name } : {}),
    additional_kwargs: kwargs,
    response_metadata: m.response_metadata,
    ...(m.usage_metadata ? { usage_metadata: m.usage_metadata } : {}),
    tool_calls: [],
    invalid_tool_calls: [],
  });
}

export function modelLengthFinishReasonMiddleware() {
  return createMiddleware({
    name: "ModelLengthFinishReasonMiddleware",
    afterModel: (state) => {
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last) || hasToolCallIntentOrError(last) || !hasVisibleContent(last)) return undefined;
      if (!lengthCapped(last) || typeof last.additional_kwargs?.stop_reason === "string") return undefined;
      return { messages: [withStopReason(last, MODEL_LENGTH_CAPPED)] };
    },
  });
}
