/**
 * SafetyFinishReasonMiddleware (DeerFlow `safety_finish_reason_middleware.py`, issues #3028,
 * #4393): a response the provider stopped for safety (OpenAI-compatible `finish_reason:
 * "content_filter"`, Anthropic `stop_reason: "refusal"`, Gemini `SAFETY`/`RECITATION`...) may carry
 * half-written tool calls. They are stripped, never executed; DeerFlow's explanation is appended to
 * the answer (or fills an otherwise empty one, which strict providers would reject on the next
 * request); `additional_kwargs.safety_termination` records what was dropped (names and count,
 * never the filtered arguments); a `safety_termination` custom event tells live clients to drop
 * "tool starting" placeholders; the run's `end` carries `stop_reason: "safety_capped"`.
 *
 * A filtered answer with visible text and no tool calls is left as it is (DeerFlow: the partial
 * answer reaches the user naturally). The finish reason itself is kept (content_filter stays
 * content_filter). Where we differ: the stop reason is stamped on the message (see
 * ./modelLengthFinishReason.ts), and the detectors are not configurable.
 */
import { createMiddleware } from "langchain";
import { AIMessage } from "@langchain/core/messages";
import { hasVisibleContent } from "./terminalResponse.js";
import { stopSignal, withStopReason } from "./modelLengthFinishReason.js";

export const SAFETY_CAPPED = "safety_capped";

interface SafetyTermination {
  detector: string;
  reason_field: string;
  reason_value: string;
}

/** Python's repr() of a plain string, as DeerFlow's `{value!r}` renders it. */
const pyRepr = (s: string) => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`);

export const safetyExplanation = (t: SafetyTermination, hadToolCalls: boolean) =>
  hadToolCalls
    ? `The model provider stopped this response with a safety-related signal (${t.reason_field}=${pyRepr(t.reason_value)}, detector=${pyRepr(t.detector)}). Any tool calls produced in this turn were suppressed because their arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output.`
    : `The model provider stopped this response with a safety-related signal (${t.reason_field}=${pyRepr(t.reason_value)}, detector=${pyRepr(t.detector)}) and returned no content. Please rephrase your request or start a new conversation.`;

/** DeerFlow's three default detectors, in their order. */
function detect(m: AIMessage): SafetyTermination | undefined {
  const finish = stopSignal(m, "finish_reason");
  if (finish?.toLowerCase() === "content_filter") return { detector: "openai_compatible_content_filter", reason_field: "finish_reason", reason_value: finish };
  const stop = stopSignal(m, "stop_reason");
  if (stop?.toLowerCase() === "refusal") return { detector: "anthropic_refusal", reason_field: "stop_reason", reason_value: stop };
  if (finish && ["SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "RECITATION", "IMAGE_SAFETY"].includes(finish.toUpperCase())) {
    return { detector: "gemini_safety", reason_field: "finish_reason", reason_value: finish };
  }
  return undefined;
}

function appendText(content: AIMessage["content"], text: string): AIMessage["content"] {
  if (content == null || content === "") return text;
  if (typeof content === "string") return `${content}\n\n${text}`;
  return [...content, { type: "text", text: `\n\n${text}` }] as AIMessage["content"];
}

export function safetyFinishReasonMiddleware() {
  return createMiddleware({
    name: "SafetyFinishReasonMiddleware",
    afterModel: (state, runtime) => {
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last)) return undefined;
      const calls = last.tool_calls ?? [];
      const blank = !hasVisibleContent(last);
      if (calls.length === 0 && !blank) return undefined;
      const t = detect(last);
      if (!t) return undefined;
      const names = calls.map((c) => c.name || "unknown");
      const kwargs: Record<string, unknown> = { ...last.additional_kwargs };
      delete kwargs.tool_calls;
      delete kwargs.function_call;
      kwargs.safety_termination = { ...t, suppressed_tool_call_count: names.length, suppressed_tool_call_names: names, extras: {} };
      runtime.writer?.({ type: "safety_termination", ...t, suppressed_tool_call_count: names.length, suppressed_tool_call_names: names, thread_id: runtime.configurable?.thread_id ?? null });
      const patched = withStopReason(last, SAFETY_CAPPED, { content: appendText(last.content, safetyExplanation(t, names.length > 0)), additional_kwargs: kwargs });
      // Safety wins over an earlier stamp: dropped tool calls matter more than a length cap.
      patched.additional_kwargs.stop_reason = SAFETY_CAPPED;
      return { messages: [patched] };
    },
  });
}
