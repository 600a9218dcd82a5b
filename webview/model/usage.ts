/**
 * Tokens and estimated cost for the panel header (issue 15): the last run's usage and the
 * thread's total, as the harness computed them (threads/state `usage`, the `end` event's `usage`
 * and `thread_usage`). The panel never sums or prices anything itself.
 */
import type { ThreadStateView } from "../../extension/protocol/rpc.js";
import type { CostView, UsageView } from "../../extension/protocol/usage.js";

export interface UsageState {
  /** The last run that reported usage. */
  run: UsageView | null;
  /** The thread's total over its runs. */
  thread: UsageView | null;
}

export const NO_USAGE: UsageState = { run: null, thread: null };

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);

/** A usage object from the wire, checked field by field (the journal is data, not trusted types). */
export function usageOf(v: unknown): UsageView | null {
  if (!v || typeof v !== "object") return null;
  const r = v as Record<string, unknown>;
  const input = num(r.input_tokens);
  const output = num(r.output_tokens);
  const total = num(r.total_tokens);
  if (input === undefined || output === undefined || total === undefined) return null;
  const cached = num(r.cached_tokens);
  const reasoning = num(r.reasoning_tokens);
  const c = r.cost as Partial<CostView> | null | undefined;
  const cost = c && typeof c === "object" && num(c.amount) !== undefined && typeof c.currency === "string" && /^[A-Z]{3}$/.test(c.currency) ? { amount: c.amount!, currency: c.currency } : null;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: total,
    ...(cached !== undefined ? { cached_tokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
    cost,
  };
}

export function usageFromState(s: ThreadStateView): UsageState {
  return { run: usageOf(s.usage?.last_run?.usage), thread: usageOf(s.usage?.total) };
}

/** After a run's `end`: its usage and the thread's new total, when it carries them. */
export function usageAfterEnd(prev: UsageState, data: { usage?: unknown; thread_usage?: unknown }): UsageState {
  const run = usageOf(data.usage);
  const thread = usageOf((data.thread_usage as { total?: unknown } | undefined)?.total);
  if (!run && !thread) return prev;
  return { run: run ?? prev.run, thread: thread ?? prev.thread };
}
