/**
 * InputSanitizationMiddleware (DeerFlow `input_sanitization_middleware.py`, issue #3630): user text
 * cannot forge the framework's structured blocks. In the latest genuine user message, blocked tags
 * (`<system>`, `<current_uploads>`, `<memory>`, ...) are HTML-escaped so they read as literal text,
 * and the text is framed by `--- BEGIN USER INPUT ---` / `--- END USER INPUT ---`.
 *
 * First in the chain, so it is the outermost model wrapper: LLM retries re-send the sanitised text.
 * Request-only: the checkpoint keeps what the user typed. Fail-open: an unexpected error here sends
 * the original request rather than failing the turn (DeerFlow does the same).
 *
 * UploadsMiddleware prepends the trusted `<current_uploads>` block and records the typed text under
 * `additional_kwargs.original_user_content`; only that suffix is processed, so the server's block
 * survives while a `<current_uploads>` typed by the user is escaped.
 *
 * The tag list and the escaping are shared/harnessTags.ts's, the same for tool results
 * (ToolResultSanitization) and upload names (Uploads).
 */
import { createMiddleware } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { frameUntrustedText } from "./shared/harnessTags.js";
import { contentText, isGenuineUserMessage, isTextBlock, ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";

/** Text blocks collapse into one sanitised block where the first stood; images keep their order. */
function rebuildContent(content: unknown[], processed: string): unknown[] {
  const isText = (b: unknown) => (typeof b === "string" && b !== "") || (isTextBlock(b) && b.text !== "");
  const first = content.findIndex(isText);
  if (first < 0) return content;
  const out: unknown[] = [];
  content.forEach((b, i) => {
    if (i === first) out.push({ type: "text", text: processed });
    else if (!isText(b)) out.push(b);
  });
  return out;
}

/** The request's messages with the latest genuine user message sanitised, or null when nothing changes. */
export function sanitizeLatestUserInput(messages: BaseMessage[]): BaseMessage[] | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const msg = messages[i]!;
    if (!isGenuineUserMessage(msg)) continue;
    const content = msg.content;
    const text = contentText(content);
    if (!text && typeof content !== "string") return null; // image-only message
    const original: unknown = msg.additional_kwargs[ORIGINAL_USER_CONTENT_KEY];
    let processed: string;
    if (typeof original === "string" && original) {
      const framed = frameUntrustedText(original);
      const at = text.lastIndexOf(original);
      // Only the user's suffix is processed: the server-prepended block before it stays intact.
      processed = framed === original ? text : at >= 0 ? text.slice(0, at) + framed : frameUntrustedText(text);
    } else if (typeof original === "string") {
      processed = text; // an upload with no typed text: nothing of the user's to frame
    } else {
      processed = frameUntrustedText(text);
    }
    if (processed === text) return null;
    const kwargs: Record<string, unknown> = { ...msg.additional_kwargs };
    // Consumers that need the genuine input (regenerate, slash commands) find it here.
    if (typeof original !== "string") kwargs[ORIGINAL_USER_CONTENT_KEY] = text;
    const out = [...messages];
    out[i] = new HumanMessage({
      content: (typeof content === "string" ? processed : rebuildContent(content, processed)) as HumanMessage["content"],
      ...(msg.id ? { id: msg.id } : {}),
      ...(msg.name ? { name: msg.name } : {}),
      additional_kwargs: kwargs,
    });
    return out;
  }
  return null;
}

export function inputSanitizationMiddleware() {
  return createMiddleware({
    name: "InputSanitizationMiddleware",
    wrapModelCall: (request, handler) => {
      let messages: BaseMessage[] | null;
      try {
        messages = sanitizeLatestUserInput(request.messages);
      } catch (err) {
        if (isGraphBubbleUp(err)) throw err;
        messages = null; // fail open, as DeerFlow does: a sanitiser bug must not cost the user the turn
      }
      return handler(messages ? { ...request, messages } : request);
    },
  });
}
