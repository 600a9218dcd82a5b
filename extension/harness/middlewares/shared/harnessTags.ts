/**
 * The harness's own tags, in one place: every structured block the harness writes into a lead or
 * subagent model's input, and the one way untrusted text is kept from forging them (DeerFlow's
 * `_BLOCKED_TAG_NAMES` and `neutralize_untrusted_tags`, input_sanitization_middleware.py).
 *
 * Untrusted text is everything that did not come from the harness: the user's message
 * (InputSanitization), every tool result — file contents and command output as much as a web page
 * (ToolResultSanitization) — and upload names and outlines (Uploads). A `<system-reminder>` in any
 * of them is HTML-escaped to `&lt;system-reminder&gt;`: still readable, no longer a block.
 *
 * Adding a block the model sees? Put its tag in HARNESS_BLOCK_TAGS (or, for a system-prompt
 * section, in the prompt's PROMPT_SECTION_TAGS). test/unit/middlewares/harnessTags.test.ts renders
 * every block the harness emits and fails on a tag missing here.
 */
import { PROMPT_SECTION_TAGS } from "../../agent/prompt.js";

/**
 * The blocks our middlewares and prompts emit outside the lead's system prompt: DynamicContext's
 * date and memory reminders, Todo's and TerminalResponse's reminders, Uploads, DurableContext,
 * the lead's subagent section and the subagents' own prompts.
 */
const HARNESS_BLOCK_TAGS = [
  "system-reminder", "system_reminder", "current_date", "memory", "current_uploads", "durable_context_data",
  "subagent_system", "working_directory", "guidelines", "tool_restrictions",
] as const;

/** DeerFlow's `_BLOCKED_TAG_NAMES`: its framework's authority blocks and common injection tags. */
const DEERFLOW_BLOCKED_TAG_NAMES = [
  "system-reminder", "system_reminder", "memory", "current_date", "think", "analysis", "role", "soul",
  "self_update", "thinking_style", "clarification_system", "critical_reminders", "response_style",
  "citations", "uploaded_files", "current_uploads", "subagent_system", "skill_system", "skill_index",
  "available_skills", "disabled_skills", "memory_tool_system", "todo_list_system", "durable_context_data",
  "slash_skill_activation", "mcp_routing_hints", "available-deferred-tools", "goal_continuation",
  "background_task_event", "file_editing_workflow", "guidelines", "output_format", "working_directory",
  "tool_restrictions", "system", "instruction", "important", "override", "ignore", "prompt",
] as const;

/**
 * The tags chat transcripts frame tool calls and results with (issue 35): a fetched page that
 * writes `</tool_result>` must not look like the end of its own result.
 */
const TRANSCRIPT_TAGS = ["tool_result", "tool_use", "tool_call", "function_results", "function_calls"] as const;

/** The denylist: ours, the system prompt's sections, DeerFlow's and the transcript tags. */
export const BLOCKED_TAG_NAMES: readonly string[] = [
  ...new Set<string>([...HARNESS_BLOCK_TAGS, ...PROMPT_SECTION_TAGS, ...DEERFLOW_BLOCKED_TAG_NAMES, ...TRANSCRIPT_TAGS]),
];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/**
 * `<tag>`, `</tag>`, `<tag attrs>`, `<tag/>` and a bare `<tag`, any case, spaces allowed inside;
 * longest names first. `\s*(?:\/\s*)?` rather than DeerFlow's `\s*\/?\s*`: two adjacent `\s*` made
 * a `<` followed by a long run of spaces quadratic, and tool results are long.
 */
const BLOCKED_TAG = new RegExp(
  `<\\s*(?:\\/\\s*)?(?:${[...BLOCKED_TAG_NAMES].sort((a, b) => b.length - a.length).map(escapeRe).join("|")})\\b[^>]*>?`,
  "gi",
);

export const USER_INPUT_BEGIN = "--- BEGIN USER INPUT ---";
export const USER_INPUT_END = "--- END USER INPUT ---";
const NEUTRAL_BEGIN = "[BEGIN USER INPUT]";
const NEUTRAL_END = "[END USER INPUT]";
const BOUNDARY = new RegExp(`${escapeRe(USER_INPUT_BEGIN)}|${escapeRe(USER_INPUT_END)}`, "g");

const escapeTags = (text: string) => text.replace(BLOCKED_TAG, (m) => m.replace(/</g, "&lt;").replace(/>/g, "&gt;"));
const neutralizeBoundaries = (text: string) => text.replace(BOUNDARY, (m) => (m === USER_INPUT_BEGIN ? NEUTRAL_BEGIN : NEUTRAL_END));

/** Escape blocked tags and the user-input boundary markers; no framing. Blank text is returned as is. */
export function neutralizeUntrustedTags(text: string): string {
  if (!text.trim()) return text;
  return neutralizeBoundaries(escapeTags(text));
}

/** DeerFlow's frame_untrusted_text: neutralise and wrap in the boundary markers; idempotent; blank text unchanged. */
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
