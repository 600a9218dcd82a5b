/**
 * Small message helpers shared by the request-shaping middlewares (DeerFlow's
 * `agents/middlewares/message_utils.py` and `utils/messages.py`, narrowed to what we use).
 */
import type { BaseMessage } from "@langchain/core/messages";

/** The text of a message's content: a string, or its text blocks joined by "\n" (DeerFlow's message_content_to_text). */
export function contentText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  const parts: string[] = [];
  for (const block of content as unknown[]) {
    if (typeof block === "string") {
      if (block) parts.push(block);
    } else if (isTextBlock(block) && block.text) {
      parts.push(block.text);
    }
  }
  return parts.join("\n");
}

export function isTextBlock(block: unknown): block is { type: "text"; text: string } {
  return (
    typeof block === "object" &&
    block !== null &&
    (block as { type?: unknown }).type === "text" &&
    typeof (block as { text?: unknown }).text === "string"
  );
}

/** Set by UploadsMiddleware before it prepends `<current_uploads>`: the text the user typed. */
export const ORIGINAL_USER_CONTENT_KEY = "original_user_content";

/**
 * A message the user actually wrote (DeerFlow's is_genuine_user_message): a human message that is
 * not a summary and not a hidden framework message, unless it is the user's hidden answer to a
 * clarification card (`human_input_response`).
 */
export function isGenuineUserMessage(m: BaseMessage): boolean {
  if (m.getType() !== "human") return false;
  if (m.name === "summary") return false;
  const kwargs = m.additional_kwargs;
  if (kwargs.hide_from_ui === true) {
    const reply = kwargs.human_input_response;
    return typeof reply === "object" && reply !== null;
  }
  return true;
}
