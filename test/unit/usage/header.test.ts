// The panel header's usage line (webview/components/header.ts, model/usage.ts): what the harness
// reported, checked as wire data, in words; details only where non-zero; unknown cost said so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { describeUsage, formatCost } from "../../../webview/components/header.js";
import { NO_USAGE, usageAfterEnd, usageOf } from "../../../webview/model/usage.js";

test("a run's usage in words: cached and reasoning only where non-zero, the estimate marked, unknown cost said so", () => {
  assert.equal(
    describeUsage({ input_tokens: 3000, output_tokens: 175, total_tokens: 3175, cached_tokens: 1000, reasoning_tokens: 30, cost: { amount: 0.008, currency: "USD" } }),
    "3,000 in (1,000 cached) · 175 out (30 reasoning) · ≈ $0.0080 (est.)",
  );
  assert.equal(describeUsage({ input_tokens: 600, output_tokens: 30, total_tokens: 630, cached_tokens: 0, reasoning_tokens: 0, cost: null }), "600 in · 30 out · cost unknown");
  assert.equal(formatCost({ input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: { amount: 12.345, currency: "USD" } }), "≈ $12.35 (est.)");
  assert.equal(formatCost({ input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: { amount: 0, currency: "USD" } }), "≈ $0.00 (est.)");
  assert.equal(formatCost({ input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: { amount: 0.0000005, currency: "USD" } }), "≈ $0.00000050 (est.)", "no exponent notation");
  assert.equal(formatCost({ input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: { amount: 0.0053, currency: "USD" } }), "≈ $0.0053 (est.)");
  assert.equal(formatCost({ input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: { amount: 0.042, currency: "CNY" } }), "≈ 0.04 CNY (est.)", "a configured currency is named");
});

test("wire usage is checked: malformed numbers are no usage, a malformed cost is unknown", () => {
  assert.equal(usageOf({ input_tokens: "3", output_tokens: 1, total_tokens: 4 }), null);
  assert.equal(usageOf(null), null);
  assert.deepEqual(usageOf({ input_tokens: 3, output_tokens: 1, total_tokens: 4, cost: { amount: -1, currency: "USD" } }), { input_tokens: 3, output_tokens: 1, total_tokens: 4, cost: null });
  assert.deepEqual(usageOf({ input_tokens: 3, output_tokens: 1, total_tokens: 4, cost: { amount: 0.5, currency: "dollars" } })?.cost, null);
  // A model's own `pricing` may be in another currency (DeerFlow's `pricing.currency`).
  assert.deepEqual(usageOf({ input_tokens: 3, output_tokens: 1, total_tokens: 4, cost: { amount: 0.5, currency: "CNY" } })?.cost, { amount: 0.5, currency: "CNY" });
});

test("after an end: the run's usage and the thread's total as the harness sent them; an end without usage keeps what was shown", () => {
  const run = { input_tokens: 10, output_tokens: 2, total_tokens: 12, cost: null };
  const after = usageAfterEnd(NO_USAGE, { usage: run, thread_usage: { total: { ...run, total_tokens: 40 }, runs: 3 } });
  assert.deepEqual(after, { run, thread: { ...run, total_tokens: 40 } });
  assert.equal(usageAfterEnd(after, {}), after);
});
