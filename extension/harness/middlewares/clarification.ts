/**
 * ClarificationMiddleware (DeerFlow `clarification_middleware.py`), always LAST in the chain so
 * its `wrapToolCall` is the innermost: an `ask_clarification` call is answered here, without
 * running the tool, by a ToolMessage holding the formatted question (context first, then the
 * question, then "  1. option" lines) and the structured `human_input` request for the UI card.
 * The run then ends with status success; the user's reply is simply the next run's message.
 *
 * Where we differ: DeerFlow returns `Command(update, goto=END)`. A tool cannot route our agent
 * graph (agent/graph/build.ts keeps only a tool Command's update), so the tool is declared
 * `returnDirect` and the ToolMessage carries `name: "ask_clarification"`, which is what the graph
 * checks after the tools step to end the turn.
 * With parallel tool calls the clarification may not be the last result, so a `beforeModel`
 * hook also ends the run (`jumpTo: "end"`) while a question waits for its answer.
 * The payload sits on `artifact` (DeerFlow) and on `additional_kwargs.human_input`, because
 * the wire form of messages (runs/wire.ts) carries `additional_kwargs` but not `artifact`.
 * The v2 `fields` form and `disable_clarification` are not ported yet.
 */
import { createMiddleware } from "langchain";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { createHash } from "node:crypto";
import { ASK_CLARIFICATION_TOOL_NAME, askClarificationTool } from "../tools/askClarification.js";
import { isGenuineUserMessage } from "./shared/messages.js";

const TYPE_ICONS: Record<string, string> = {
  missing_info: "❓",
  ambiguous_requirement: "🤔",
  approach_choice: "🔀",
  risk_confirmation: "⚠️",
  suggestion: "💡",
};

const XML_TAG = /<\/?[A-Za-z_][\w:.-]*(?:\s[^<>]*?)?\s*\/?>/g;

export interface HumanInputRequest {
  version: 1;
  kind: "human_input_request";
  source: "ask_clarification";
  request_id: string;
  tool_call_id?: string;
  clarification_type: string;
  question: string;
  context?: string | null;
  input_mode: "free_text" | "choice_with_other";
  options?: Array<{ id: string; label: string; value: string }>;
}

/** Python's `str()` for a model-provided scalar (objects as JSON, not "[object Object]"). */
function str(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value) ?? "";
}

function flatten(value: unknown, out: unknown[]): void {
  if (Array.isArray(value)) for (const v of value) flatten(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) flatten(v, out);
  else if (typeof value === "string" || typeof value === "number") out.push(value);
}

/** DeerFlow `_normalize_options`: list, JSON string, plain string or XML-parsed dict → trimmed, de-duplicated labels. */
export function normalizeOptions(raw: unknown): string[] {
  let options: unknown = raw;
  if (typeof options === "string") {
    try {
      options = JSON.parse(options);
    } catch {
      options = [options];
    }
  }
  if (options == null) return [];
  let list: unknown[];
  if (Array.isArray(options)) list = options;
  else if (typeof options === "object") {
    list = [];
    flatten(options, list);
  } else list = [options];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const o of list) {
    const text = str(o).replace(XML_TAG, "").trim();
    if (!text || seen.has(text)) continue;
    seen.add(text);
    out.push(text);
  }
  return out;
}

/** DeerFlow `_format_clarification_message`. */
export function formatClarification(args: Record<string, unknown>): string {
  const question = typeof args.question === "string" ? args.question : "";
  const type = str(args.clarification_type ?? "missing_info");
  const icon = TYPE_ICONS[type] ?? "❓";
  const context = args.context;
  const parts = context ? [`${icon} ${str(context)}`, `\n${question}`] : [`${icon} ${question}`];
  const options = normalizeOptions(args.options);
  if (options.length > 0) {
    parts.push("");
    options.forEach((o, i) => parts.push(`  ${i + 1}. ${o}`));
  }
  return parts.join("\n");
}

/** DeerFlow `_stable_message_id`: retried calls replace instead of appending. */
export function clarificationRequestId(toolCallId: string | undefined, formatted: string): string {
  if (toolCallId) return `clarification:${toolCallId}`;
  return `clarification:${createHash("sha256").update(formatted).digest("hex").slice(0, 16)}`;
}

/** DeerFlow `_build_human_input_payload`, v1 (free text or choice). */
export function humanInputPayload(args: Record<string, unknown>, toolCallId: string | undefined, requestId: string): HumanInputRequest {
  const options = normalizeOptions(args.options);
  const payload: HumanInputRequest = {
    version: 1,
    kind: "human_input_request",
    source: "ask_clarification",
    request_id: requestId,
    clarification_type: str(args.clarification_type ?? "missing_info"),
    question: str(args.question),
    input_mode: options.length > 0 ? "choice_with_other" : "free_text",
  };
  if (toolCallId) payload.tool_call_id = toolCallId;
  if ("context" in args) payload.context = args.context == null ? null : str(args.context);
  if (options.length > 0) payload.options = options.map((o, i) => ({ id: `option-${i + 1}`, label: o, value: o }));
  return payload;
}

export function clarificationMessage(args: Record<string, unknown>, toolCallId: string | undefined): ToolMessage {
  const content = formatClarification(args);
  const requestId = clarificationRequestId(toolCallId, content);
  const payload = humanInputPayload(args, toolCallId, requestId);
  return new ToolMessage({
    id: requestId,
    content,
    tool_call_id: toolCallId ?? "",
    name: ASK_CLARIFICATION_TOOL_NAME,
    artifact: { human_input: payload },
    additional_kwargs: { human_input: payload },
  });
}

/**
 * True when the latest AI turn asked for clarification and the user has not answered yet: its
 * `ask_clarification` result is in, and no genuine user message follows (hidden middleware
 * reminders do not count; a hidden `human_input_response` from the card does).
 */
export function awaitingClarification(messages: readonly BaseMessage[]): boolean {
  let i = messages.length - 1;
  while (i >= 0 && !AIMessage.isInstance(messages[i])) i--;
  if (i < 0) return false;
  const after = messages.slice(i + 1);
  if (after.some(isGenuineUserMessage)) return false;
  return after.some((m) => ToolMessage.isInstance(m) && m.name === ASK_CLARIFICATION_TOOL_NAME && m.status !== "error");
}

export function clarificationMiddleware() {
  return createMiddleware({
    name: "ClarificationMiddleware",
    tools: [askClarificationTool()],
    wrapToolCall: (request, handler) => {
      if (request.toolCall.name !== ASK_CLARIFICATION_TOOL_NAME) return handler(request);
      return clarificationMessage(request.toolCall.args, request.toolCall.id);
    },
    // returnDirect ends the run only when the clarification is the LAST tool result of the step.
    // With parallel calls (ask_clarification first, another tool after it) the router sees the
    // other result and loops back to the model; this stops the run there instead, so the
    // question is never buried under another model turn (the recipe's `jumpTo: "end"` fix).
    beforeModel: {
      canJumpTo: ["end"],
      hook: (state) => (awaitingClarification(state.messages) ? { jumpTo: "end" } : undefined),
    },
  });
}
