/**
 * Token usage per run and per thread (issue 15; DeerFlow's TokenUsage numbers and its worker's
 * completion counters): the one place usage is read off messages and summed.
 *
 * - A message's usage: `@langchain/openai` puts the provider's numbers on every AIMessage as
 *   `usage_metadata`, with `input_token_details.cache_read` (cached input) and
 *   `output_token_details.reasoning` (reasoning output). `input_tokens`/`output_tokens` already
 *   include those details: they are parts, never added on top.
 * - A run's usage: its lead AI messages as they appear in the run's `updates` (a middleware that
 *   replaces a message by id repeats it: counted once, latest wins), plus every finished
 *   subagent's usage (subagents/runTracker.ts), split per task under `subagents`. When
 *   TokenUsageMiddleware has folded a task's usage into the dispatching AI message (DeerFlow: the
 *   task's ToolMessage then carries `subagent_token_usage_attributed: true`), that task is already
 *   in the lead's numbers and is not added again.
 * - By model (`by_model`): the same tokens split by the model that spent them: the lead's own calls
 *   (its AI messages less the subagent usage TokenUsage folded into them), each subagent's under
 *   the model its events name, each summary call's under the summary model.
 * - Cost: estimated once, when the run ends, per model at that model's price (models/pricing.ts);
 *   the run's cost is the sum, unknown when one model's price is unknown.
 * - A thread's usage: the sum over its runs' stored usage (store/runs.ts keeps each run's `end`
 *   usage), for `threads/state` and `deerflow state`.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { CostView, RunUsageView, ThreadUsageView, UsageView } from "../../protocol/usage.js";
import type { SubagentRunTracker } from "../subagents/runTracker.js";
import { estimateCost, sumCosts, type PricedModel } from "../models/pricing.js";

/** DeerFlow's marker on a `task` ToolMessage whose usage was folded into its dispatching AI message. */
export const SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY = "subagent_token_usage_attributed";

export type TokenCounts = Omit<UsageView, "cost">;

/** The `custom` event a summary call's usage travels in (middlewares/summarization.ts writes it, the collector adds it). */
export const SUMMARIZATION_USAGE_EVENT = "summarization_usage";

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** The usage one AI message reports; undefined when it reports none. */
export function messageUsage(m: BaseMessage): TokenCounts | undefined {
  if (!AIMessage.isInstance(m) || !m.usage_metadata) return undefined;
  const u = m.usage_metadata;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  const cached = count(u.input_token_details?.cache_read);
  const reasoning = count(u.output_token_details?.reasoning);
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: count(u.total_tokens) || input + output,
    ...(cached > 0 ? { cached_tokens: cached } : {}),
    ...(reasoning > 0 ? { reasoning_tokens: reasoning } : {}),
  };
}

/** a + b; a detail (cached, reasoning) is present when either side has it. */
export function addUsage(a: TokenCounts | undefined, b: Partial<TokenCounts>): TokenCounts {
  const sum: TokenCounts = {
    input_tokens: (a?.input_tokens ?? 0) + count(b.input_tokens),
    output_tokens: (a?.output_tokens ?? 0) + count(b.output_tokens),
    total_tokens: (a?.total_tokens ?? 0) + count(b.total_tokens),
  };
  const cached = (a?.cached_tokens ?? 0) + count(b.cached_tokens);
  const reasoning = (a?.reasoning_tokens ?? 0) + count(b.reasoning_tokens);
  if (a?.cached_tokens !== undefined || b.cached_tokens !== undefined) sum.cached_tokens = cached;
  if (a?.reasoning_tokens !== undefined || b.reasoning_tokens !== undefined) sum.reasoning_tokens = reasoning;
  return sum;
}

/** The summed usage of messages (each counted once by id, the latest copy winning). */
export function sumMessages(messages: Iterable<BaseMessage>): TokenCounts | undefined {
  const byId = new Map<string, TokenCounts>();
  let anon = 0;
  for (const m of messages) {
    const u = messageUsage(m);
    if (u) byId.set(m.id ?? `anon-${anon++}`, u);
  }
  let sum: TokenCounts | undefined;
  for (const u of byId.values()) sum = addUsage(sum, u);
  return sum;
}

/** a − b, never below zero (the details of `a` kept: b's are not known). */
function subtractUsage(a: TokenCounts, b: Partial<TokenCounts>): TokenCounts {
  return {
    ...a,
    input_tokens: Math.max(0, a.input_tokens - count(b.input_tokens)),
    output_tokens: Math.max(0, a.output_tokens - count(b.output_tokens)),
    total_tokens: Math.max(0, a.total_tokens - count(b.total_tokens)),
  };
}

/** Collects a run's lead usage from the run's `updates` deltas (runs/runTurn.ts feeds it). */
export class RunUsageCollector {
  readonly #byId = new Map<string, BaseMessage>();
  readonly #folded = new Set<string>();
  #anon = 0;
  #summarization: TokenCounts | undefined;
  readonly #summaryByModel = new Map<string, TokenCounts>();

  /** `leadModel`: the configured name of the run's model, which `by_model` files the lead's own calls under. */
  constructor(private readonly leadModel?: string) {}

  /** A `custom` event of the run: a summary call's usage counts toward the run (under its model, when named). */
  observeCustom(data: { type: string; usage?: unknown; model_name?: unknown }): void {
    if (data.type !== SUMMARIZATION_USAGE_EVENT || !data.usage || typeof data.usage !== "object") return;
    this.#summarization = addUsage(this.#summarization, data.usage);
    const model = typeof data.model_name === "string" && data.model_name ? data.model_name : this.leadModel;
    if (model) this.#summaryByModel.set(model, addUsage(this.#summaryByModel.get(model), data.usage));
  }

  add(update: unknown): void {
    if (!update || typeof update !== "object") return;
    for (const node of Object.values(update as Record<string, unknown>)) {
      const messages = (node as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages)) continue;
      for (const m of messages as unknown[]) {
        if (AIMessage.isInstance(m) && m.usage_metadata) this.#byId.set(m.id ?? `anon-${this.#anon++}`, m);
        else if (ToolMessage.isInstance(m) && m.additional_kwargs?.[SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY] === true) this.#folded.add(m.tool_call_id);
      }
    }
  }

  /** The lead's usage so far; undefined when no AI message of the run reported usage. */
  lead(): TokenCounts | undefined {
    return sumMessages(this.#byId.values());
  }

  /**
   * The run's usage: the lead's plus each finished subagent's not already folded into the lead's
   * messages, with the per-task split. No cost yet: the worker adds it (withCost).
   */
  total(subagents?: SubagentRunTracker): RunUsageView | undefined {
    const lead = this.lead();
    const split = subagents?.withUsage(undefined)?.subagents;
    const summarization = this.#summarization;
    if (!split && !summarization) return lead && this.leadModel ? { ...lead, by_model: { [this.leadModel]: lead } } : lead;
    let sum: TokenCounts = lead ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (const [taskId, u] of Object.entries(split ?? {})) if (!this.#folded.has(taskId)) sum = addUsage(sum, u);
    if (summarization) sum = addUsage(sum, summarization);
    const byModel = this.byModel(lead, split ?? {}, subagents);
    return { ...sum, ...(split ? { subagents: split } : {}), ...(summarization ? { summarization } : {}), ...(byModel ? { by_model: byModel } : {}) };
  }

  /** The run's tokens by the model that spent them (see the header); undefined without the lead's name. */
  private byModel(lead: TokenCounts | undefined, split: Record<string, TokenCounts>, subagents?: SubagentRunTracker): Record<string, TokenCounts> | undefined {
    if (!this.leadModel) return undefined;
    const out = new Map<string, TokenCounts>();
    const add = (model: string, u: Partial<TokenCounts>) => out.set(model, addUsage(out.get(model), u));
    // The lead's messages hold the folded tasks' tokens too: those are the subagents' models'.
    let own = lead;
    for (const [taskId, u] of Object.entries(split)) if (own && this.#folded.has(taskId)) own = subtractUsage(own, u);
    if (own) add(this.leadModel, own);
    for (const [taskId, u] of Object.entries(split)) add(subagents?.modelOf(taskId) ?? this.leadModel, u);
    for (const [model, u] of this.#summaryByModel) add(model, u);
    return Object.fromEntries(out);
  }
}

/** Prices by configured model name: the run's models (runs/gateway.ts RunContext.prices). */
export type PriceList = Readonly<Record<string, PricedModel>>;

/**
 * The run's usage with its estimated cost: each `by_model` entry at its own model's price, and the
 * run's cost their sum (null when one is unknown). Without a split, all at `model`'s price.
 */
export function withCost<T extends TokenCounts & { by_model?: Record<string, UsageView> }>(usage: T, model: PricedModel & { name?: string }, prices: PriceList = {}): T & { cost: CostView | null } {
  if (!usage.by_model) return { ...usage, cost: estimateCost(usage, model) };
  const byModel = Object.fromEntries(
    Object.entries(usage.by_model).map(([name, u]) => {
      const priced = prices[name] ?? (name === model.name ? model : undefined);
      return [name, { ...u, cost: priced ? estimateCost(u, priced) : null }];
    }),
  );
  return { ...usage, by_model: byModel, cost: sumCosts(Object.values(byModel).map((u) => u.cost)) };
}

/** A stored run's usage, read defensively (the column holds what an older version wrote too). */
function storedUsage(raw: Record<string, unknown> | null): UsageView | undefined {
  if (!raw || typeof raw.total_tokens !== "number") return undefined;
  const u = addUsage(undefined, raw);
  const cost = raw.cost as CostView | null | undefined;
  const known = cost && typeof cost === "object" && typeof cost.amount === "number" && Number.isFinite(cost.amount);
  // Before per-model prices every cost was in USD.
  return { ...u, cost: known ? { amount: cost.amount, currency: typeof cost.currency === "string" && cost.currency ? cost.currency : "USD" } : null };
}

/** `{usage}` for a thread's view (threads/state, deerflow state); nothing before any run reported usage. */
export function withThreadUsage(runs: ReadonlyArray<{ run_id: string; usage: Record<string, unknown> | null }>): { usage?: ThreadUsageView } {
  const usage = threadUsage(runs);
  return usage ? { usage } : {};
}

/**
 * A thread's usage from its runs (newest first, as RunStore.listByThread returns them). The total
 * cost is the sum only when every run's cost is known; one unknown makes it unknown.
 */
export function threadUsage(runs: ReadonlyArray<{ run_id: string; usage: Record<string, unknown> | null }>): ThreadUsageView | undefined {
  let total: TokenCounts | undefined;
  const costs: Array<CostView | null> = [];
  let n = 0;
  let last: ThreadUsageView["last_run"];
  for (const r of runs) {
    const u = storedUsage(r.usage);
    if (!u) continue;
    n++;
    last ??= { run_id: r.run_id, usage: u };
    total = addUsage(total, u);
    costs.push(u.cost ?? null);
  }
  if (!total) return undefined;
  return {
    total: { ...total, cost: sumCosts(costs) },
    runs: n,
    ...(last ? { last_run: last } : {}),
  };
}
