/**
 * SystemMessageCoalescingMiddleware (DeerFlow `system_message_coalescing_middleware.py`): exactly
 * one leading system message per request. Strict OpenAI-compatible backends (vLLM, SGLang, Qwen)
 * and Anthropic reject system messages that are not first, or more than one.
 *
 * createAgent keeps the static prompt in `request.systemMessage` and prepends it at the very last
 * moment; middlewares may have put further SystemMessages into `request.messages` (DeerFlow's
 * dynamic-context reminders). All of them are merged, joined by "\n\n", into `systemMessage`;
 * request-only, the checkpoint keeps its messages. A request without in-history system messages
 * passes through untouched, which keeps provider prefix caches warm.
 */
import { createMiddleware } from "langchain";
import { SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { contentText } from "./shared/messages.js";

/** DeerFlow's marker for the date reminder; only the newest one is worth keeping. */
const DYNAMIC_CONTEXT_REMINDER = "dynamic_context_reminder";

export function coalesceSystemMessages(
  systemMessage: SystemMessage,
  messages: BaseMessage[],
): { systemMessage: SystemMessage; messages: BaseMessage[] } | null {
  const inHistory = messages.filter((m) => m.getType() === "system");
  if (inHistory.length === 0) return null;
  let parts: BaseMessage[] = [...(contentText(systemMessage.content) !== "" ? [systemMessage] : []), ...inHistory];
  const reminders = parts.filter((p) => p.additional_kwargs[DYNAMIC_CONTEXT_REMINDER] === true);
  if (reminders.length > 1) {
    const keep = reminders.at(-1);
    parts = parts.filter((p) => !reminders.includes(p) || p === keep);
  }
  const first = parts[0];
  const kwargs: Record<string, unknown> = {};
  for (const p of parts) Object.assign(kwargs, p.additional_kwargs);
  const merged = new SystemMessage({
    content: parts.map((p) => contentText(p.content)).join("\n\n"),
    ...(first?.id ? { id: first.id } : {}),
    additional_kwargs: kwargs,
  });
  return { systemMessage: merged, messages: messages.filter((m) => m.getType() !== "system") };
}

export function systemMessageCoalescingMiddleware() {
  return createMiddleware({
    name: "SystemMessageCoalescingMiddleware",
    wrapModelCall: (request, handler) => {
      const coalesced = coalesceSystemMessages(request.systemMessage, request.messages);
      return handler(coalesced ? { ...request, ...coalesced } : request);
    },
  });
}
