/**
 * Estimated cost of a model's tokens. First the model's own `pricing` (DeerFlow's `models[].pricing`:
 * `input_per_million`, `output_per_million`, `input_cache_hit_per_million`, `currency`), as DeerFlow's
 * console prices it: cache hits at the hit price (the input price when none is configured), the
 * rest of the input at the input price. Otherwise the price table bundled with
 * `@pydantic/genai-prices`, in USD:
 *
 * Offline by construction: `calcPrice` reads the data shipped in the package; only
 * `updatePrices`/auto-update would fetch newer prices, and nothing here calls them (a closed
 * network, and a run's cost must not depend on a download).
 *
 * Conservative: a price is estimated only when the PROVIDER is known, and never from the model
 * name alone. A local server that serves a model it calls "gpt-4o" is not OpenAI's price list. The
 * provider is, in order:
 *   1. the model entry's `pricing_provider` (a genai-prices provider id, e.g. "openai"): for a
 *      proxy or gateway whose URL says nothing, the user says whose prices apply;
 *   2. the endpoint: the base URL matched against the table's provider API patterns
 *      (api.openai.com → openai, api.deepseek.com → deepseek, …); no base URL is the OpenAI API.
 * Anything else (an unknown provider id, an unmatched URL, a model the provider's list does not
 * have) is `null`: shown as "unknown", never a guessed number.
 */
import { calcPrice, findProvider } from "@pydantic/genai-prices";
import type { CostView, UsageView } from "../../protocol/usage.js";

/** What pricing needs of a resolved model (models/resolvedModel.ts). */
export interface PricedModel {
  /** The model id sent to the provider. */
  model: string;
  baseURL: string | undefined;
  /** The configured genai-prices provider id, if any. */
  pricingProvider?: string;
  /** DeerFlow's per-model prices, which win over the price table. */
  pricing?: { currency: string; input_per_million: number; output_per_million: number; input_cache_hit_per_million?: number | null };
}

/** The OpenAI client's endpoint when no base URL is configured. */
const OPENAI_API = "https://api.openai.com/v1";

/** The genai-prices provider id that prices this model, or undefined when none is known. */
export function pricingProviderOf(m: PricedModel): string | undefined {
  try {
    if (m.pricingProvider) return findProvider({ providerId: m.pricingProvider })?.id;
    return findProvider({ providerApiUrl: m.baseURL ?? OPENAI_API })?.id;
  } catch {
    return undefined;
  }
}

/** The estimated USD cost of `usage` on `m`; null when the provider or the model's price is unknown. */
export function estimateCost(usage: Pick<UsageView, "input_tokens" | "output_tokens" | "cached_tokens">, m: PricedModel, at: Date = new Date()): CostView | null {
  if (m.pricing && (m.pricing.input_per_million > 0 || m.pricing.output_per_million > 0)) return configuredCost(usage, m.pricing);
  const providerId = pricingProviderOf(m);
  if (!providerId) return null;
  // genai-prices: input_tokens is the whole input, cache reads a part of it priced at their own rate.
  const cached = Math.min(usage.cached_tokens ?? 0, usage.input_tokens);
  try {
    const price = calcPrice(
      { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, ...(cached > 0 ? { cache_read_tokens: cached } : {}) },
      m.model,
      { providerId, timestamp: at },
    );
    if (!price || !Number.isFinite(price.total_price)) return null;
    // Rounded to a billionth of a dollar: float noise (0.0030000000000000005) is not a price.
    return { amount: Math.round(price.total_price * 1e9) / 1e9, currency: "USD" };
  } catch {
    // A price entry the library cannot apply to this usage: unknown, not a failed run.
    return null;
  }
}

/** DeerFlow's `_token_cost`: per million tokens, cache hits (clamped into the input) at their own price. */
function configuredCost(usage: Pick<UsageView, "input_tokens" | "output_tokens" | "cached_tokens">, p: NonNullable<PricedModel["pricing"]>): CostView {
  const hits = Math.min(Math.max(usage.cached_tokens ?? 0, 0), usage.input_tokens);
  const hitPrice = p.input_cache_hit_per_million ?? p.input_per_million;
  const amount = ((usage.input_tokens - hits) * p.input_per_million + hits * hitPrice + usage.output_tokens * p.output_per_million) / 1_000_000;
  return { amount: Math.round(amount * 1e9) / 1e9, currency: p.currency.toUpperCase() };
}

/**
 * The sum of costs, each in its currency: null when one is unknown, or when they are in
 * different currencies (DeerFlow disables cost reporting then rather than add CNY to USD).
 */
export function sumCosts(costs: ReadonlyArray<CostView | null>): CostView | null {
  if (costs.length === 0 || costs.some((c) => c === null)) return null;
  const currency = costs[0]!.currency;
  if (costs.some((c) => c!.currency !== currency)) return null;
  const amount = costs.reduce((a, c) => a + c!.amount, 0);
  return { amount: Math.round(amount * 1e9) / 1e9, currency };
}
