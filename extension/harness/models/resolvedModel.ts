/**
 * A model a run uses, resolved from the config (models/factory.ts resolveModel): plain data, names
 * and where its key comes from, never a key. Its own module because the modules the config is made
 * of carry resolved models too (subagents/config.ts: a custom type's model), while the resolver
 * reads the whole config; the type sits below both.
 */
import type { ThinkingConfig } from "./thinking.js";

export interface ResolvedModel {
  /** The configured name (or the model id for an ad-hoc model). */
  name: string;
  /** The id sent to the provider. */
  model: string;
  baseURL: string | undefined;
  supportsVision: boolean;
  supportsThinking: boolean;
  /** DeerFlow's thinking / reasoning-effort settings (./thinking.ts); absent → none sent. */
  thinking?: ThinkingConfig;
  maxTokens?: number;
  temperature?: number;
  /** Where the key comes from: an env var name, or "inline" for `--api-key`. Never the key itself. */
  apiKeySource: string;
  /** The operator's own `--base-url` endpoint, not a configured model. */
  adHoc?: boolean;
  /** Whose price list estimates this model's cost (a genai-prices provider id; models/pricing.ts). */
  pricingProvider?: string;
  /** DeerFlow's `pricing` block: the model's own prices, which win over any price list. */
  pricing?: ModelPricing;
  /** DeerFlow's `context_window` (prompt + completion tokens), when configured. */
  contextWindow?: number;
}

/** A model's own prices per million tokens (DeerFlow `models[].pricing`). */
export interface ModelPricing {
  currency: string;
  input_per_million: number;
  output_per_million: number;
  input_cache_hit_per_million?: number | null;
}
