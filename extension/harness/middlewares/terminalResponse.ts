/**
 * TerminalResponseMiddleware (DeerFlow `terminal_response_middleware.py`, issue #4027): a turn that
 * used tools must end with something the user can read. An empty final answer (no visible text, no
 * tool intent) after a tool result of the current turn is removed and the model is asked once more,
 * with a hidden `terminal_response_recovery` reminder; a second empty answer is replaced by
 * DeerFlow's fallback text, flagged `deerflow_error_fallback`, which ends the run `error` (the
 * worker reads the flag) instead of a success with nothing in it.
 *
 * Where we differ, and why:
 * - DeerFlow decides in `after_model` with `jump_to: "model"`; here the decision is made at
 *   `afterAgent`, which every final answer passes (see ./todo.ts for why, and the turn budget).
 * - DeerFlow keeps the retry budget and the pending reminder in the instance, keyed by (thread,
 *   run). Here they are private state channels reset in `beforeAgent` (we build the agent per run,
 *   and a checkpointed budget survives a crash-and-resume of the same run). The reminder goes into
 *   the request whose last message is the one the removed answer followed, so it is sent once and
 *   never stored.
 * - DeerFlow's run still ends `success` with the fallback text; the issue asks the run to fail
 *   visibly, so ours ends `error` with DeerFlow's `error_reason`-style message (the fallback text).
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { hasToolCallIntentOrError } from "./todo.js";
import { isTextBlock } from "./shared/messages.js";

export const RECOVERY_PROMPT =
  "<system_reminder>\nYour previous response after the tool execution was empty. Review the tool results already present in the conversation and provide a concise, user-visible final response. Do not call another tool unless it is strictly necessary.\n</system_reminder>";
export const EMPTY_RESPONSE_FALLBACK =
  "The model completed the tool run but returned no final response, including after one automatic retry. Please try again or use a different model.";
export const EMPTY_RESPONSE_REASON = "Model returned an empty terminal response after one retry";
/** The AIMessage flag (DeerFlow's) that makes the worker end the run `error` with the message's text. */
export const ERROR_FALLBACK_KEY = "deerflow_error_fallback";

const terminalState = new StateSchema({
  /** Retries spent in this run (DeerFlow: once per run, not per empty message). */
  _terminal_retries: z.number().optional(),
  /** Id of the message the removed empty answer followed: the retry request ends with it. */
  _terminal_recovery_after: z.string().nullable().optional(),
});
type TerminalState = { messages: BaseMessage[]; _terminal_retries?: number; _terminal_recovery_after?: string | null };

/** DeerFlow `_has_visible_content`: non-blank text in a string or a text/output_text block. */
export function hasVisibleContent(m: AIMessage): boolean {
  const content: unknown = m.content;
  if (typeof content === "string") return content.trim().length > 0;
  if (!Array.isArray(content)) return false;
  return content.some((b: unknown) => {
    if (typeof b === "string") return b.trim().length > 0;
    if (isTextBlock(b)) return b.text.trim().length > 0;
    const block = b as { type?: unknown; text?: unknown };
    return block?.type === "output_text" && typeof block.text === "string" && block.text.trim().length > 0;
  });
}

/** DeerFlow `_tool_result_in_current_turn`: a ToolMessage after the latest visible user message. */
function toolResultInCurrentTurn(messages: readonly BaseMessage[]): boolean {
  let user = -1;
  messages.forEach((m, i) => {
    if (HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true) user = i;
  });
  return user >= 0 && messages.slice(user + 1).some((m) => ToolMessage.isInstance(m));
}

export function terminalResponseMiddleware() {
  return createMiddleware({
    name: "TerminalResponseMiddleware",
    stateSchema: terminalState,
    beforeAgent: (state) => {
      const s = state as TerminalState;
      return s._terminal_retries || s._terminal_recovery_after ? { _terminal_retries: 0, _terminal_recovery_after: null } : undefined;
    },
    wrapModelCall: (request, handler) => {
      const after = (request.state as Partial<TerminalState>)._terminal_recovery_after;
      if (!after || request.messages.at(-1)?.id !== after) return handler(request);
      const reminder = new HumanMessage({ content: RECOVERY_PROMPT, name: "terminal_response_recovery", additional_kwargs: { hide_from_ui: true } });
      return handler({ ...request, messages: [...request.messages, reminder] });
    },
    afterAgent: {
      canJumpTo: ["model"],
      hook: (state) => {
        const s = state as TerminalState;
        const last = s.messages.at(-1);
        if (!last || !AIMessage.isInstance(last) || hasVisibleContent(last) || hasToolCallIntentOrError(last)) return undefined;
        if (!toolResultInCurrentTurn(s.messages)) return undefined;
        if (!s._terminal_retries && last.id) {
          const before = s.messages.at(-2)?.id ?? null;
          return { jumpTo: "model", messages: [new RemoveMessage({ id: last.id })], _terminal_retries: 1, _terminal_recovery_after: before };
        }
        const fallback = new AIMessage({
          content: EMPTY_RESPONSE_FALLBACK,
          ...(last.id ? { id: last.id } : {}),
          additional_kwargs: { ...last.additional_kwargs, [ERROR_FALLBACK_KEY]: true, error_reason: EMPTY_RESPONSE_REASON },
          response_metadata: last.response_metadata,
          ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
        });
        return { messages: [fallback], _terminal_recovery_after: null };
      },
    },
  });
}
