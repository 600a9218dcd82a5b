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
 */
import { createMiddleware } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { PROMPT_SECTION_TAGS } from "../agent/prompt.js";
import { contentText, isGenuineUserMessage, isTextBlock, ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";

/** DeerFlow's `_BLOCKED_TAG_NAMES`: the framework's authority blocks and common injection tags. */
const DEERFLOW_BLOCKED_TAG_NAMES = [
  "system-reminder", "system_reminder", "memory", "current_date", "think", "analysis", "role", "soul",
  "self_update", "thinking_style", "clarification_system", "critical_reminders", "response_style",
  "citations", "uploaded_files", "current_uploads", "subagent_system", "skill_system", "skill_index",
  "available_skills", "disabled_skills", "memory_tool_system", "todo_list_system", "durable_context_data",
  "slash_skill_activation", "mcp_routing_hints", "available-deferred-tools", "goal_continuation",
  "file_editing_workflow", "guidelines", "output_format", "working_directory", "tool_restrictions",
  "system", "instruction", "important", "override", "ignore", "prompt",
] as const;

/**
 * The denylist: DeerFlow's list plus every tag our own system prompt emits (`PROMPT_SECTION_TAGS`,
 * exported by the prompt module). DeerFlow keeps one hand-written list and a test that its prompt's
 * tags are on it; deriving it here means a tag added to the prompt is escaped without a second edit.
 */
export const BLOCKED_TAG_NAMES: readonly string[] = [...new Set<string>([...DEERFLOW_BLOCKED_TAG_NAMES, ...PROMPT_SECTION_TAGS])];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** `<tag>`, `</tag>`, `<tag attrs>`, `<tag/>` and a bare `<tag`, any case; longest names first. */
const BLOCKED_TAG = new RegExp(
  `<\\s*/?\\s*(?:${[...BLOCKED_TAG_NAMES].sort((a, b) => b.length - a.length).map(escapeRe).join("|")})\\b[^>]*>?`,
  "gi",
);

export const USER_INPUT_BEGIN = "--- BEGIN USER INPUT ---";
export const USER_INPUT_END = "--- END USER INPUT ---";
const NEUTRAL_BEGIN = "[BEGIN USER INPUT]";
const NEUTRAL_END = "[END USER INPUT]";
const BOUNDARY = new RegExp(`${escapeRe(USER_INPUT_BEGIN)}|${escapeRe(USER_INPUT_END)}`, "g");

const escapeTags = (text: string) => text.replace(BLOCKED_TAG, (m) => m.replace(/</g, "&lt;").replace(/>/g, "&gt;"));
const neutralizeBoundaries = (text: string) => text.replace(BOUNDARY, (m) => (m === USER_INPUT_BEGIN ? NEUTRAL_BEGIN : NEUTRAL_END));

/** Escape blocked tags and boundary markers; no framing (DeerFlow's neutralize_untrusted_tags, reused for remote tool results). */
export function neutralizeUntrustedTags(text: string): string {
  if (!text.trim()) return text;
  return neutralizeBoundaries(escapeTags(text));
}

/** DeerFlow's frame_untrusted_text: sanitise and wrap; idempotent; blank text unchanged. */
export function frameUntrustedText(text: string): string {
  if (!text.trim()) return text;
  const escaped = escapeTags(text);
  if (escaped.startsWith(USER_INPUT_BEGIN) && escaped.endsWith(USER_INPUT_END) && escaped.length >= USER_INPUT_BEGIN.length + USER_INPUT_END.length) {
    // Already framed; still neutralise markers inside, or a forged outer frame would smuggle a break-out.
    const inner = escaped.slice(USER_INPUT_BEGIN.length, escaped.length - USER_INPUT_END.length);
    const neutral = neutralizeBoundaries(inner);
    return neutral === inner ? escaped : `${USER_INPUT_BEGIN}${neutral}${USER_INPUT_END}`;
  }
  return `${USER_INPUT_BEGIN}\n${neutralizeBoundaries(escaped)}\n${USER_INPUT_END}`;
}

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
