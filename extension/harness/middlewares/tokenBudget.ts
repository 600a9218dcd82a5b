/**
 * TokenBudgetMiddleware (DeerFlow `token_budget_middleware.py`, chain slot [29]): a per-run token
 * cap, and the one owner of DeerFlow's "[TOKEN BUDGET EXCEEDED] …" hard stop (the subagents'
 * budget, subagents/budget.ts, uses the same answer).
 *
 * Counting: THIS run's tokens only. `beforeAgent` notes what the thread's messages already held
 * (every AI message's input + output, every subagent result's usage); after each model reply the
 * run's usage is how much the messages grew past that (DeerFlow's seen-map). A `task` result that
 * carries `subagent_token_usage` counts it until TokenUsage folds it into the dispatching AI
 * message (`subagent_token_usage_attributed`), and the AI message counts it from then on: lead
 * and subagents together, each token once.
 *
 * The hard stop, as DeerFlow: once the run used `maxTokens` (input + output), the model's answer
 * loses its tool calls, DeerFlow's text is appended, `finish_reason` becomes "stop" and the answer
 * carries `stop_reason: "token_capped"`, which the run's `end` reports (runs/worker.ts) with status
 * `success`. No tool call is left unanswered, so the thread's next request is valid.
 *
 * The soft warning, as DeerFlow: the first time a model reply brings the run to 80 % of its
 * budget (DeerFlow's default `warn_threshold`), the NEXT model request carries DeerFlow's
 * "[TOKEN BUDGET WARNING] …" as a hidden HumanMessage named `budget_warning` at its end,
 * request-only (wrapModelCall): never stored, so the history and every tool call/result pair
 * stay as they were.
 *
 * Where we differ: DeerFlow's separate input/output caps and its configurable thresholds are not
 * ported; the budget is one total per run (`deerflow.maxTokensPerRun`, config
 * `token_budget.max_tokens_per_run`, `run --max-tokens`), warned at 80 %, capped at 100 %.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY } from "../runs/usage.js";

export const TOKEN_CAPPED = "token_capped";

/** DeerFlow's `warn_threshold` default: the share of the budget at which the model is told to wrap up. */
export const WARN_THRESHOLD = 0.8;

/** DeerFlow's `_BUDGET_WARNING_MSG` for the total budget. */
export function budgetWarningMessage(used: number, budget: number): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const percent = ((used / budget) * 100).toFixed(0);
  return `[TOKEN BUDGET WARNING] You have used ${n(used)} of your ${n(budget)} total token budget (${percent}%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.`;
}

/** DeerFlow's `_BUDGET_EXCEEDED_MSG` for the total budget. */
export function budgetExceededMessage(used: number, budget: number): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return `[TOKEN BUDGET EXCEEDED] The total token usage (${n(used)}) has exceeded the safety limit (${n(budget)}). Producing final answer with results collected so far.`;
}

/**
 * DeerFlow's `_build_hard_stop_update`: the same answer (same id, so the reducer replaces it)
 * without tool calls, the note appended, `stop_reason: "token_capped"` unless an earlier guard
 * stamped one.
 */
export function tokenCappedAnswer(last: AIMessage, used: number, budget: number): AIMessage {
  const note = budgetExceededMessage(used, budget);
  const kwargs: Record<string, unknown> = { ...last.additional_kwargs };
  if (typeof kwargs.stop_reason !== "string") kwargs.stop_reason = TOKEN_CAPPED;
  delete kwargs.tool_calls; // the provider-raw copy of the calls stripped here
  delete kwargs.function_call;
  const content = typeof last.content === "string" ? (last.content ? `${last.content}\n\n${note}` : note) : [...last.content, { type: "text" as const, text: `\n\n${note}` }];
  return new AIMessage({
    content,
    ...(last.id ? { id: last.id } : {}),
    ...(last.name ? { name: last.name } : {}),
    additional_kwargs: kwargs,
    response_metadata: { ...last.response_metadata, finish_reason: "stop" },
    ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
    tool_calls: [],
    invalid_tool_calls: [],
  });
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** What a message contributes to a budget: an AI message's input + output, an unfolded subagent result's total. */
function tokensOf(m: BaseMessage): number {
  if (AIMessage.isInstance(m)) return count(m.usage_metadata?.input_tokens) + count(m.usage_metadata?.output_tokens);
  if (ToolMessage.isInstance(m) && m.additional_kwargs?.[SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY] !== true) {
    const u = m.additional_kwargs?.subagent_token_usage as { input_tokens?: unknown; output_tokens?: unknown } | undefined;
    return u ? count(u.input_tokens) + count(u.output_tokens) : 0;
  }
  return 0;
}

/** Each message's tokens as they stand (the `baseline` of runTokens), keyed by id (by position when it has none). */
export function tokensByMessage(messages: readonly BaseMessage[]): Map<string, number> {
  return new Map(messages.map((m, i) => [m.id ?? `#${i}`, tokensOf(m)]));
}

/**
 * Tokens this run used: how much each message has grown past `baseline` (what the thread's
 * messages held when the run started). A sum over what the messages say now, not an accumulator:
 * when TokenUsage folds a subagent's usage into its dispatching AI message, the AI message grows
 * by exactly what its `task` result stops counting, and the total stays the same.
 */
export function runTokens(messages: readonly BaseMessage[], baseline: ReadonlyMap<string, number>): number {
  let used = 0;
  messages.forEach((m, i) => {
    used += Math.max(0, tokensOf(m) - (baseline.get(m.id ?? `#${i}`) ?? 0));
  });
  return used;
}

export interface TokenBudgetOptions {
  /** Total tokens (input + output) one run may use; 0 or less = no budget. */
  maxTokens: number;
  /** Tokens the run spent outside its messages so far (its automatic summary calls). */
  spentElsewhere?: () => number;
}

export function tokenBudgetMiddleware(o: TokenBudgetOptions) {
  // One agent per run (runs/worker.ts); beforeAgent sets it for each run all the same.
  let baseline = new Map<string, number>();
  let warned = false;
  let pendingWarning: string | undefined;
  return createMiddleware({
    name: "TokenBudgetMiddleware",
    beforeAgent: (state) => {
      baseline = tokensByMessage(state.messages); // the earlier runs': not this run's budget
      warned = false;
      pendingWarning = undefined;
      return undefined;
    },
    wrapModelCall: (request, handler) => {
      const warning = pendingWarning;
      pendingWarning = undefined;
      if (!warning) return handler(request);
      const note = new HumanMessage({ content: warning, name: "budget_warning", additional_kwargs: { hide_from_ui: true } });
      return handler({ ...request, messages: [...request.messages, note] });
    },
    afterModel: (state) => {
      if (o.maxTokens <= 0) return undefined;
      const used = runTokens(state.messages, baseline) + (o.spentElsewhere?.() ?? 0);
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last)) return undefined;
      if (used >= o.maxTokens) return { messages: [tokenCappedAnswer(last, used, o.maxTokens)] };
      if (!warned && used >= o.maxTokens * WARN_THRESHOLD) {
        warned = true;
        pendingWarning = budgetWarningMessage(used, o.maxTokens);
      }
      return undefined;
    },
  });
}
