// models/pricing.ts: the provider is known only from pricing_provider or the endpoint, never from
// the model name; prices come from genai-prices' bundled table, offline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { estimateCost, pricingProviderOf } from "../../../extension/harness/models/pricing.js";

const AT = new Date("2026-12-01T00:00:00Z");

test("the provider: pricing_provider first, else the base URL against the table's API patterns, else unknown", () => {
  assert.equal(pricingProviderOf({ model: "gpt-4o", baseURL: undefined }), "openai", "no base URL is the OpenAI API");
  assert.equal(pricingProviderOf({ model: "gpt-4o", baseURL: "https://api.openai.com/v1" }), "openai");
  assert.equal(pricingProviderOf({ model: "deepseek-chat", baseURL: "https://api.deepseek.com/v1" }), "deepseek");
  assert.equal(pricingProviderOf({ model: "gpt-4o", baseURL: "http://127.0.0.1:8000/v1" }), undefined, "a local server is nobody's price list");
  assert.equal(pricingProviderOf({ model: "gpt-4o", baseURL: "http://127.0.0.1:8000/v1", pricingProvider: "openai" }), "openai");
  assert.equal(pricingProviderOf({ model: "gpt-4o", baseURL: "https://api.openai.com/v1", pricingProvider: "no-such-provider" }), undefined, "a named provider the table lacks is unknown, not the URL's");
});

test("gpt-4o on OpenAI: input, cached input and output at their own rates (bundled table: $2.50, $1.25, $10 per million)", () => {
  const cost = estimateCost({ input_tokens: 3000, cached_tokens: 1000, output_tokens: 175 }, { model: "gpt-4o", baseURL: undefined }, AT);
  assert.deepEqual(cost, { amount: (2000 * 2.5 + 1000 * 1.25 + 175 * 10) / 1e6, currency: "USD" });
  const uncached = estimateCost({ input_tokens: 1000, output_tokens: 100 }, { model: "gpt-4o", baseURL: undefined }, AT);
  assert.deepEqual(uncached, { amount: 0.0035, currency: "USD" });
});

test("unknown → null: a model the provider's list lacks, an unknown endpoint, the right name on the wrong endpoint", () => {
  const usage = { input_tokens: 1000, output_tokens: 100 };
  assert.equal(estimateCost(usage, { model: "my-own-model", baseURL: undefined }, AT), null);
  assert.equal(estimateCost(usage, { model: "gpt-4o", baseURL: "http://localhost:11434/v1" }, AT), null);
  assert.equal(estimateCost(usage, { model: "gpt-4o", baseURL: "https://example.invalid/v1" }, AT), null);
});

test("cached tokens above the input (a provider's odd report) are capped at the input, never a negative uncached part", () => {
  const cost = estimateCost({ input_tokens: 100, cached_tokens: 500, output_tokens: 0 }, { model: "gpt-4o", baseURL: undefined }, AT);
  assert.deepEqual(cost, { amount: (100 * 1.25) / 1e6, currency: "USD" });
});

test("pricing never touches the network", () => {
  const real = globalThis.fetch;
  let calls = 0;
  globalThis.fetch = () => {
    calls++;
    throw new Error("no network here");
  };
  try {
    assert.ok(estimateCost({ input_tokens: 10, output_tokens: 10 }, { model: "gpt-4o", baseURL: undefined }, AT));
    assert.ok(estimateCost({ input_tokens: 10, output_tokens: 10 }, { model: "deepseek-chat", baseURL: "https://api.deepseek.com" }, AT));
  } finally {
    globalThis.fetch = real;
  }
  assert.equal(calls, 0);
});
