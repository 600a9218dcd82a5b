/**
 * SubagentLimitMiddleware (DeerFlow `subagent_limit_middleware.py`, reference §3.3.15; slot [27]):
 * `afterModel` keeps the first `maxConcurrent` `task` calls of a response (other calls untouched)
 * and no more than what is left of the run's `maxTotal`. Excess calls are dropped from the AI
 * message (same id, so the reducer replaces it; the provider-raw `additional_kwargs.tool_calls`
 * are synced, and removed when none is left, as DeerFlow's `clone_ai_message_with_tool_calls`:
 * `@langchain/openai` would send an empty `tool_calls: []`, which OpenAI refuses with a 400 on every
 * later request of the thread), which DeerFlow does silently: only its log says so. When the run's total is already
 * spent, DeerFlow's "[SUBAGENT LIMIT REACHED] …" is appended to the answer, `finish_reason` becomes
 * "stop" once no call is left, and the run stops with `subagent_limit_capped`.
 *
 * Differences on purpose: DeerFlow counts this run's delegations in its durable `delegations`
 * ledger; we have no ledger, and the agent (so this instance) is built per run, so the count is
 * kept here. DeerFlow stamps the stop reason on the runtime context; we stamp it on the answer
 * (`additional_kwargs.stop_reason`, as ModelLength/Safety/LoopDetection do) and the worker reads
 * it from the final message.
 */
import { createMiddleware } from "langchain";
import { AIMessage } from "@langchain/core/messages";

export const SUBAGENT_LIMIT_CAPPED = "subagent_limit_capped";

export const TOTAL_LIMIT_STOP_MSG =
  "[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. " +
  "Continue using the subagent results already collected, execute remaining simple work " +
  "directly, or summarize the remaining work instead of launching more subagents.";

export interface SubagentLimitOptions {
  maxConcurrent: number;
  maxTotal: number;
}

function appendText(content: AIMessage["content"], text: string): AIMessage["content"] {
  if (typeof content === "string") return content ? `${content}\n\n${text}` : text;
  return [...content, { type: "text", text: `\n\n${text}` }];
}

export function subagentLimitMiddleware(o: SubagentLimitOptions) {
  // `task` calls this run kept so far (one agent per run: see above).
  let used = 0;
  return createMiddleware({
    name: "SubagentLimitMiddleware",
    afterModel: (state) => {
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
      const taskIdx = last.tool_calls.flatMap((c, i) => (c.name === "task" ? [i] : []));
      if (taskIdx.length === 0) return undefined;
      const remaining = Math.max(0, o.maxTotal - used);
      const allowed = Math.min(o.maxConcurrent, remaining);
      if (taskIdx.length <= allowed) {
        used += taskIdx.length;
        return undefined;
      }
      used += allowed;
      const drop = new Set(taskIdx.slice(allowed));
      const calls = last.tool_calls.filter((_, i) => !drop.has(i));
      const keptIds = new Set(calls.map((c) => c.id));
      const kwargs: Record<string, unknown> = { ...last.additional_kwargs };
      if (Array.isArray(kwargs.tool_calls)) {
        const raw = (kwargs.tool_calls as Array<{ id?: string }>).filter((c) => keptIds.has(c.id));
        if (raw.length > 0) kwargs.tool_calls = raw;
        else delete kwargs.tool_calls;
      }
      if (calls.length === 0) delete kwargs.function_call;
      const exhausted = remaining === 0;
      if (exhausted && typeof kwargs.stop_reason !== "string") kwargs.stop_reason = SUBAGENT_LIMIT_CAPPED;
      const metadata = { ...last.response_metadata, ...(exhausted && calls.length === 0 ? { finish_reason: "stop" } : {}) };
      return {
        messages: [
          new AIMessage({
            content: exhausted ? appendText(last.content, TOTAL_LIMIT_STOP_MSG) : last.content,
            ...(last.id ? { id: last.id } : {}),
            ...(last.name ? { name: last.name } : {}),
            additional_kwargs: kwargs,
            response_metadata: metadata,
            ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
            tool_calls: calls,
            invalid_tool_calls: last.invalid_tool_calls ?? [],
          }),
        ],
      };
    },
  });
}
