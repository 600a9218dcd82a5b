/**
 * LangChain messages → the LM API's (protocol/lm.ts LmMessage), for one request.
 *
 * - The system prompt goes first as a User message. The stable API has only User and Assistant
 *   (a System role needs the `languageModelSystem` proposal). Cline and Roo send it as an Assistant
 *   message instead; we do not, because the model would read our instructions as words it said
 *   itself, and a conversation that starts with the assistant is refused by some providers.
 * - Consecutive messages of one role are merged into one (a tool turn's results, the system
 *   prompt and the first prompt): providers behind Copilot (Anthropic's among them) want the roles
 *   to alternate.
 * - A tool result is a User message part, as the API wants; images are not sent (a vscode.lm
 *   model is not marked as taking images, so view_image is not offered): a placeholder says so.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { LmMessage, LmPart } from "../../../protocol/lm.js";
import { contentText } from "../../middlewares/shared/messages.js";

/** How our tool names appear to the model (tools.ts): our name → the LM name. */
export type LmName = (ours: string) => string;

function hasImage(content: BaseMessage["content"]): boolean {
  return Array.isArray(content) && content.some((b) => typeof b === "object" && b !== null && ["image_url", "image"].includes((b as { type?: string }).type ?? ""));
}

function partsOf(m: BaseMessage, lmName: LmName): { role: LmMessage["role"]; parts: LmPart[] } {
  const text = contentText(m.content) + (hasImage(m.content) ? "\n[An image was attached here; this model is not sent images.]" : "");
  if (ToolMessage.isInstance(m)) return { role: "user", parts: [{ type: "tool_result", callId: m.tool_call_id, text: text || "(no output)" }] };
  if (AIMessage.isInstance(m)) {
    const parts: LmPart[] = text ? [{ type: "text", text }] : [];
    for (const call of m.tool_calls ?? []) {
      parts.push({ type: "tool_call", callId: call.id ?? "", name: lmName(call.name), input: (call.args ?? {}) as Record<string, unknown> });
    }
    return { role: "assistant", parts };
  }
  // system, human, anything else: the user speaks.
  return { role: "user", parts: text ? [{ type: "text", text }] : [] };
}

export function toLmMessages(messages: readonly BaseMessage[], lmName: LmName = (n) => n): LmMessage[] {
  const out: LmMessage[] = [];
  for (const m of messages) {
    const { role, parts } = partsOf(m, lmName);
    if (parts.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...parts);
    else out.push({ role, content: parts });
  }
  return out;
}
