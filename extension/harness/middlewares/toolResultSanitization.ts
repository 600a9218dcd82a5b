/**
 * ToolResultSanitizationMiddleware (DeerFlow `tool_result_sanitization_middleware.py`): a tool
 * result cannot imitate the harness. The harness's own tags (`<system-reminder>`, `<memory>`,
 * `<durable_context_data>`, `<current_uploads>`, … — shared/harnessTags.ts) and the user-input
 * boundary markers in a result are neutralised (`&lt;system-reminder&gt;`) before the model sees
 * it, exactly as in the user's own message.
 *
 * Where we differ from DeerFlow, on purpose: DeerFlow rewrites only its web tools' results and
 * leaves bash and file reads alone. Here every tool's result is rewritten — a file in the
 * workspace, a command's output, a subagent's report are as attacker-shaped as a web page (a
 * cloned repository's README can carry a forged `</system-reminder><system-reminder>…`).
 * What the model is shown changes; nothing on disk does.
 *
 * Slot [3], after ToolOutputBudget [2]: its wrapper is inside the budget's, so a long result is
 * neutralised first and then saved or shortened; ToolErrorHandling [13] is further inside, so an
 * error text built from a throwing tool's message is neutralised too. The result is rewritten as
 * it enters the thread (as in DeerFlow), so the checkpoint, the journal and the panel hold the
 * neutralised text and every later request re-sends it unchanged.
 */
import { createMiddleware } from "langchain";
import type { ToolMessage } from "@langchain/core/messages";
import { neutralizeUntrustedTags } from "./shared/harnessTags.js";
import { isTextBlock } from "./shared/messages.js";
import { mapToolResult, withToolContent } from "./shared/toolResults.js";

/** Text and text blocks neutralised, other blocks (images) kept; the same value when nothing changed. */
function neutralizeContent(content: ToolMessage["content"]): ToolMessage["content"] {
  if (typeof content === "string") return neutralizeUntrustedTags(content);
  let changed = false;
  const next = (content as unknown[]).map((block) => {
    let out: unknown = block;
    if (typeof block === "string") out = neutralizeUntrustedTags(block);
    else if (isTextBlock(block)) {
      const text = neutralizeUntrustedTags(block.text);
      if (text !== block.text) out = { ...block, text };
    }
    if (out !== block) changed = true;
    return out;
  });
  return changed ? (next as ToolMessage["content"]) : content;
}

export function sanitizeToolMessage(msg: ToolMessage): ToolMessage {
  const content = neutralizeContent(msg.content);
  return content === msg.content ? msg : withToolContent(msg, content);
}

export function toolResultSanitizationMiddleware() {
  return createMiddleware({
    name: "ToolResultSanitizationMiddleware",
    wrapToolCall: async (request, handler) => mapToolResult(await handler(request), sanitizeToolMessage),
  });
}
