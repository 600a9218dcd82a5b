/**
 * What of a thread goes to extraction (DeerFlow `MemoryMiddleware`'s filter): the messages the
 * user wrote and the assistant's final answers. No tool calls or results, no hidden reminders
 * (date, memory, todo), no uploads preamble. Bounded (the most recent messages, each capped) and
 * scrubbed with startRun's scrubber before it is queued: the queue is a database.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { contentText, isGenuineUserMessage, ORIGINAL_USER_CONTENT_KEY } from "../middlewares/shared/messages.js";
import { scrubSecrets } from "../sandbox/trust/secrets.js";
import type { ConversationMessage } from "./queue.js";

export const MAX_CONVERSATION_MESSAGES = 40;
export const MAX_MESSAGE_CHARS = 4000;

export function conversationFor(messages: readonly BaseMessage[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const m of messages) {
    if (isGenuineUserMessage(m)) {
      const original = m.additional_kwargs[ORIGINAL_USER_CONTENT_KEY];
      const text = typeof original === "string" ? original : contentText(m.content);
      if (text.trim()) out.push({ role: "user", content: text });
    } else if (AIMessage.isInstance(m) && (m.tool_calls ?? []).length === 0 && m.additional_kwargs.hide_from_ui !== true) {
      const text = contentText(m.content);
      if (text.trim()) out.push({ role: "assistant", content: text });
    }
  }
  // Scrubbed before the cut: a key crossing MAX_MESSAGE_CHARS, cut first, would be too short to
  // look like a key and its head would be stored.
  return out.slice(-MAX_CONVERSATION_MESSAGES).map((m) => {
    const content = scrubSecrets(m.content) as string;
    return { role: m.role, content: content.length > MAX_MESSAGE_CHARS ? `${content.slice(0, MAX_MESSAGE_CHARS)}…` : content };
  });
}
