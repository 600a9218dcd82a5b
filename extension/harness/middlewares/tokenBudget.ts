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
 * The limits, as DeerFlow's TokenBudgetConfig (config `token_budget.*`, config/sections.ts):
 * `max_tokens` on input + output, and optionally `max_input_tokens` and `max_output_tokens`. After
 * each model reply the highest of those fractions decides (its name, "total", "input" or
 * "output", is the `reason` in DeerFlow's texts):
 *
 * - at `hard_stop_threshold` (default 1.0) the hard stop, as DeerFlow: the model's answer loses
 *   its tool calls, DeerFlow's text is appended, `finish_reason` becomes "stop" and the answer
 *   carries `stop_reason: "token_capped"`, which the run's `end` reports (runs/worker.ts) with
 *   status `success`. No tool call is left unanswered, so the thread's next request is valid.
 * - at `warn_threshold` (default 0.8), once per run, the soft warning: the NEXT model request
 *   carries DeerFlow's "[TOKEN BUDGET WARNING] …" as a hidden HumanMessage named `budget_warning`
 *   at its end, request-only (wrapModelCall): never stored, so the history and every tool
 *   call/result pair stay as they were.
 *
 * The budget comes from the config (`token_budget.enabled` + `max_tokens`, or the project's alias
 * `max_tokens_per_run`), `run --max-tokens` or the extension's `deerflow.maxTokensPerRun`.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY } from "../runs/usage.js";

export const TOKEN_CAPPED = "token_capped";

/** DeerFlow's `warn_threshold` default: the share of the budget at which the model is told to wrap up. */
export const WARN_THRESHOLD = 0.8;

/** Which of the budget's limits a text speaks of (DeerFlow's `reason`). */
export type BudgetReason = "total" | "input" | "output";

/** DeerFlow's `_BUDGET_WARNING_MSG`. */
export function budgetWarningMessage(used: number, budget: number, reason: BudgetReason = "total"): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const percent = ((used / budget) * 100).toFixed(0);
  return `[TOKEN BUDGET WARNING] You have used ${n(used)} of your ${n(budget)} ${reason} token budget (${percent}%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.`;
}

/** DeerFlow's `_BUDGET_EXCEEDED_MSG`. */
export function budgetExceededMessage(used: number, budget: number, reason: BudgetReason = "total"): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return `[TOKEN BUDGET EXCEEDED] The ${reason} token usage (${n(used)}) has exceeded the safety limit (${n(budget)}). Producing final answer with results collected so far.`;
}

/**
 * DeerFlow's `_build_hard_stop_update`: the same answer (same id, so the reducer replaces it)
 * without tool calls, the note appended, `stop_reason: "token_capped"` unless an earlier guard
 * stamped one.
 */
export function tokenCappedAnswer(last: AIMessage, used: number, budget: number, reason: BudgetReason = "total"): AIMessage {
  const note = budgetExceededMessage(used, budget, reason);
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

/** Input and output tokens. */
export interface TokenSplit {
  input: number;
  output: number;
}

/** What a message contributes to a budget: an AI message's input and output, an unfolded subagent result's. */
function tokensOf(m: BaseMessage): TokenSplit {
  if (AIMessage.isInstance(m)) return { input: count(m.usage_metadata?.input_tokens), output: count(m.usage_metadata?.output_tokens) };
  if (ToolMessage.isInstance(m) && m.additional_kwargs?.[SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY] !== true) {
    const u = m.additional_kwargs?.subagent_token_usage as { input_tokens?: unknown; output_tokens?: unknown } | undefined;
    if (u) return { input: count(u.input_tokens), output: count(u.output_tokens) };
  }
  return { input: 0, output: 0 };
}

/** Each message's tokens as they stand (the `baseline` of runTokens), keyed by id (by position when it has none). */
export function tokensByMessage(messages: readonly BaseMessage[]): Map<string, TokenSplit> {
  return new Map(messages.map((m, i) => [m.id ?? `#${i}`, tokensOf(m)]));
}

/**
 * Tokens this run used, input and output: how much each message has grown past `baseline` (what
 * the thread's messages held when the run started). A sum over what the messages say now, not an
 * accumulator: when TokenUsage folds a subagent's usage into its dispatching AI message, the AI
 * message grows by exactly what its `task` result stops counting, and the totals stay the same.
 */
export function runUsage(messages: readonly BaseMessage[], baseline: ReadonlyMap<string, TokenSplit>): TokenSplit {
  const used = { input: 0, output: 0 };
  messages.forEach((m, i) => {
    const now = tokensOf(m);
    const before = baseline.get(m.id ?? `#${i}`) ?? { input: 0, output: 0 };
    used.input += Math.max(0, now.input - before.input);
    used.output += Math.max(0, now.output - before.output);
  });
  return used;
}

/** runUsage's input + output. */
export function runTokens(messages: readonly BaseMessage[], baseline: ReadonlyMap<string, TokenSplit>): number {
  const u = runUsage(messages, baseline);
  return u.input + u.output;
}

/** One run's budget, resolved from the config (config/sections.ts tokenBudgetSettings). */
export interface TokenBudgetSettings {
  /** Total tokens (input + output) one run may use. */
  maxTokens: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  /** Fractions of a limit: the warning, then the hard stop (DeerFlow 0.8 and 1.0). */
  warnThreshold: number;
  hardStopThreshold: number;
}

export interface TokenBudgetOptions extends Partial<Omit<TokenBudgetSettings, "maxTokens">> {
  /** Total tokens (input + output) one run may use; 0 or less = no budget. */
  maxTokens: number;
  /** Tokens the run spent outside its messages so far (its automatic summary calls). */
  spentElsewhere?: () => TokenSplit;
}

/** DeerFlow's `_apply`: the limit closest to (or past) its end, by fraction; the first wins a tie. */
function highest(used: TokenSplit, o: TokenBudgetOptions): { reason: BudgetReason; used: number; limit: number; fraction: number } | undefined {
  const limits: Array<[BudgetReason, number, number | undefined]> = [
    ["total", used.input + used.output, o.maxTokens],
    ["input", used.input, o.maxInputTokens],
    ["output", used.output, o.maxOutputTokens],
  ];
  let top: { reason: BudgetReason; used: number; limit: number; fraction: number } | undefined;
  for (const [reason, n, limit] of limits) {
    if (!limit || limit <= 0) continue;
    const fraction = n / limit;
    if (!top || fraction > top.fraction) top = { reason, used: n, limit, fraction };
  }
  return top;
}

export function tokenBudgetMiddleware(o: TokenBudgetOptions) {
  const warnAt = o.warnThreshold ?? WARN_THRESHOLD;
  const stopAt = o.hardStopThreshold ?? 1;
  // One agent per run (runs/worker.ts); beforeAgent sets it for each run all the same.
  let baseline = new Map<string, TokenSplit>();
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
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last)) return undefined;
      const inRun = runUsage(state.messages, baseline);
      const elsewhere = o.spentElsewhere?.() ?? { input: 0, output: 0 };
      const used = { input: inRun.input + elsewhere.input, output: inRun.output + elsewhere.output };
      if (used.input + used.output <= 0) return undefined;
      const top = highest(used, o);
      if (!top) return undefined;
      if (top.fraction >= stopAt) return { messages: [tokenCappedAnswer(last, top.used, top.limit, top.reason)] };
      if (!warned && top.fraction >= warnAt) {
        warned = true;
        pendingWarning = budgetWarningMessage(top.used, top.limit, top.reason);
      }
      return undefined;
    },
  });
}
