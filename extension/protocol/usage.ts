/**
 * Token usage and estimated cost (issue 15, "tokens and cost you can see"), as a run's `end`
 * event (`data.usage`), `threads/state` (`usage`), `deerflow runs` and `deerflow state` show them.
 * Type-only: imported by the harness, the host and the webview alike.
 */

/**
 * An estimate: from the model's own `pricing` (DeerFlow's per-million prices, in its currency),
 * else from the bundled genai-prices table (USD); null when neither knows the model.
 */
export interface CostView {
  amount: number;
  /** An ISO code: "USD", or the configured `pricing.currency` (e.g. "CNY"). */
  currency: string;
}

/**
 * Tokens of one run (its lead agent's model calls, its subagents' added). `input_tokens` includes
 * `cached_tokens` (the provider's cache reads) and `output_tokens` includes `reasoning_tokens`,
 * as providers report them; the details are absent when no call reported them.
 */
export interface UsageView {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
  /** Absent: no price was looked up (a run from before cost estimates); null: unknown price. */
  cost?: CostView | null;
}

/** `end.data.usage`: the run's usage; `subagents` splits what each `task` used (by its task id). */
export interface RunUsageView extends UsageView {
  subagents?: Record<string, { input_tokens: number; output_tokens: number; total_tokens: number }>;
  /**
   * The same tokens by the model that spent them (configured names: the lead's, each subagent's,
   * the summary model's), each priced at its own model's rate; the run's `cost` is their sum
   * (null when one is unknown, or when they are in different currencies).
   */
  by_model?: Record<string, UsageView>;
  /** What the run's automatic summarization calls used (already in the totals above). */
  summarization?: { input_tokens: number; output_tokens: number; total_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
}

/** A thread's usage: the sum over its runs that reported usage. */
export interface ThreadUsageView {
  /** Sum over the runs; `cost` is null when any of them had no known price (never a partial sum shown as the total). */
  total: UsageView;
  /** How many runs reported usage. */
  runs: number;
  /** The latest run that reported usage. */
  last_run?: { run_id: string; usage: UsageView };
}
