/**
 * What of a thread goes to extraction (DeerFlow `filter_messages_for_memory`,
 * deermem/core/message_processing.py): the messages the user wrote and the assistant's final
 * answers. No tool calls or results, no hidden reminders (date, memory, todo), no uploads
 * preamble. Bounded (the most recent messages, each capped) and scrubbed with the trust module's
 * scrubber before it is queued: the queue is a database.
 *
 * Upload-only turns (DeerFlow's rule and its test_memory_upload_filtering): a user message that
 * is nothing but files — no text the user typed beside the `<current_uploads>` block — is left
 * out, and so is the final answer that follows it: that answer is about files of this thread
 * only, and remembered it sends later threads looking for files that are not there.
 *
 * Each message carries a key (which message of the thread it is) for the watermark (queue.ts):
 * extraction sends only messages whose key it has not seen.
 */
import { createHash } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { contentText, isGenuineUserMessage, ORIGINAL_USER_CONTENT_KEY } from "../middlewares/shared/messages.js";
import { scrubSecrets } from "../trust/secrets.js";
import type { ConversationMessage } from "./queue.js";

export const MAX_CONVERSATION_MESSAGES = 40;
export const MAX_MESSAGE_CHARS = 4000;

/**
 * A message's identity for the watermark: its id (runs give every message one) with its role and
 * text, hashed. The text is in it because not every provider's ids are unique (some local servers
 * answer every request with the same id): two different answers must never share a key, or the
 * second would be taken as already extracted. DeerFlow `_message_identity` prefers the id alone.
 */
export function messageKey(role: ConversationMessage["role"], id: string | undefined, text: string): string {
  return createHash("sha256").update(`${role}\0${id ?? ""}\0${text}`).digest("hex").slice(0, 32);
}

/** What the user typed (without the uploads block the Uploads middleware prepended). */
function typedText(m: BaseMessage): string {
  const original = m.additional_kwargs[ORIGINAL_USER_CONTENT_KEY];
  return typeof original === "string" ? original : contentText(m.content);
}

/** The message came with uploaded files (runTurn puts them in `additional_kwargs.files`). */
const hasUploads = (m: BaseMessage): boolean => {
  const files = m.additional_kwargs.files;
  return Array.isArray(files) && files.length > 0;
};

export function conversationFor(messages: readonly BaseMessage[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  let skipNextAnswer = false;
  for (const m of messages) {
    if (isGenuineUserMessage(m)) {
      const text = typedText(m);
      if (text.trim()) {
        out.push({ role: "user", content: text, key: messageKey("user", m.id, text) });
        skipNextAnswer = false;
      } else if (hasUploads(m)) {
        // Upload-only: the message and the answer about its files stay out (DeerFlow's skip_next_ai).
        skipNextAnswer = true;
      }
    } else if (AIMessage.isInstance(m) && (m.tool_calls ?? []).length === 0 && m.additional_kwargs.hide_from_ui !== true) {
      const text = contentText(m.content);
      if (!text.trim()) continue;
      if (skipNextAnswer) {
        skipNextAnswer = false;
        continue;
      }
      out.push({ role: "assistant", content: text, key: messageKey("assistant", m.id, text) });
    }
  }
  // Scrubbed before the cut: a key crossing MAX_MESSAGE_CHARS, cut first, would be too short to
  // look like a key and its head would be stored.
  return out.slice(-MAX_CONVERSATION_MESSAGES).map((m) => {
    const content = scrubSecrets(m.content) as string;
    return { role: m.role, content: content.length > MAX_MESSAGE_CHARS ? `${content.slice(0, MAX_MESSAGE_CHARS)}…` : content, ...(m.key ? { key: m.key } : {}) };
  });
}
