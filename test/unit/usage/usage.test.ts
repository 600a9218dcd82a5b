// runs/usage.ts: a message's usage (with OpenAI's cached/reasoning details), a run's sum (each
// message once, latest copy wins; subagents added once, folded or not) and a thread's sum.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { addUsage, messageUsage, RunUsageCollector, threadUsage, withCost } from "../../../extension/harness/runs/usage.js";
import { estimateCost } from "../../../extension/harness/models/pricing.js";
import type { RunUsageView } from "../../../extension/protocol/usage.js";
import { SubagentRunTracker } from "../../../extension/harness/subagents/runTracker.js";

const ai = (id: string, input: number, output: number, details: { cached?: number; reasoning?: number } = {}) =>
  new AIMessage({
    id,
    content: "x",
    usage_metadata: {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      ...(details.cached !== undefined ? { input_token_details: { cache_read: details.cached } } : {}),
      ...(details.reasoning !== undefined ? { output_token_details: { reasoning: details.reasoning } } : {}),
    },
  });

test("a message's usage reads cache_read and reasoning; zero or missing details are left out", () => {
  assert.deepEqual(messageUsage(ai("a", 100, 20, { cached: 40, reasoning: 5 })), { input_tokens: 100, output_tokens: 20, total_tokens: 120, cached_tokens: 40, reasoning_tokens: 5 });
  assert.deepEqual(messageUsage(ai("b", 100, 20, { cached: 0 })), { input_tokens: 100, output_tokens: 20, total_tokens: 120 });
  // @langchain/openai writes `cache_read: undefined` when the provider sends no details.
  const undef = new AIMessage({ id: "c", content: "", usage_metadata: { input_tokens: 7, output_tokens: 3, total_tokens: 10, input_token_details: { cache_read: undefined } } });
  assert.deepEqual(messageUsage(undef), { input_tokens: 7, output_tokens: 3, total_tokens: 10 });
  assert.equal(messageUsage(new AIMessage("no usage")), undefined);
});

test("addUsage: details are summed, present when either side had them", () => {
  assert.deepEqual(addUsage({ input_tokens: 1, output_tokens: 2, total_tokens: 3, cached_tokens: 1 }, { input_tokens: 10, output_tokens: 20, total_tokens: 30, reasoning_tokens: 4 }), {
    input_tokens: 11,
    output_tokens: 22,
    total_tokens: 33,
    cached_tokens: 1,
    reasoning_tokens: 4,
  });
});

test("a run's usage: several model calls summed, a message a middleware re-emits counted once (latest copy)", () => {
  const c = new RunUsageCollector();
  c.add({ model_request: { messages: [ai("m1", 1000, 100, { cached: 400, reasoning: 30 })] } });
  c.add({ tools: { messages: [new ToolMessage({ id: "t1", content: "ok", tool_call_id: "call_1" })] } });
  c.add({ model_request: { messages: [ai("m2", 2000, 75, { cached: 600, reasoning: 0 })] } });
  c.add({ LoopDetectionMiddleware: { messages: [ai("m2", 2000, 75, { cached: 600, reasoning: 0 })] } });
  assert.deepEqual(c.total(), { input_tokens: 3000, output_tokens: 175, total_tokens: 3175, cached_tokens: 1000, reasoning_tokens: 30 });
  assert.equal(new RunUsageCollector().total(), undefined, "no usage reported: none, not zeros");
});

test("subagents: added once with the split per task; a task folded into its dispatching AI message is not added again", () => {
  const tracker = new SubagentRunTracker();
  tracker.observe({ type: "task_started", task_id: "call_a" });
  tracker.observe({ type: "task_completed", task_id: "call_a", usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
  tracker.observe({ type: "task_started", task_id: "call_b" });
  tracker.observe({ type: "task_completed", task_id: "call_b", usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30 } });
  const split = { call_a: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, call_b: { input_tokens: 20, output_tokens: 10, total_tokens: 30 } };

  const unfolded = new RunUsageCollector();
  unfolded.add({ model_request: { messages: [ai("d", 100, 20)] } });
  assert.deepEqual(unfolded.total(tracker), { input_tokens: 130, output_tokens: 35, total_tokens: 165, subagents: split });

  // TokenUsage folded call_a into the dispatcher (100+10, 20+5) and marked its result; call_b not (yet).
  const folded = new RunUsageCollector();
  folded.add({ model_request: { messages: [ai("d", 100, 20)] } });
  folded.add({
    TokenUsageMiddleware: {
      messages: [ai("d", 110, 25), new ToolMessage({ id: "r_a", content: "done", tool_call_id: "call_a", additional_kwargs: { subagent_token_usage_attributed: true } })],
    },
  });
  assert.deepEqual(folded.total(tracker), { input_tokens: 130, output_tokens: 35, total_tokens: 165, subagents: split });
});

test("a thread's usage: the sum over its runs, the newest named last; one unknown cost makes the total's cost unknown", () => {
  const runs = [
    { run_id: "r3", usage: { input_tokens: 600, output_tokens: 30, total_tokens: 630, cost: { amount: 0.0018, currency: "USD" } } },
    { run_id: "r2", usage: null },
    { run_id: "r1", usage: { input_tokens: 3000, output_tokens: 175, total_tokens: 3175, cached_tokens: 1000, reasoning_tokens: 30, cost: { amount: 0.008, currency: "USD" } } },
  ];
  assert.deepEqual(threadUsage(runs), {
    total: { input_tokens: 3600, output_tokens: 205, total_tokens: 3805, cached_tokens: 1000, reasoning_tokens: 30, cost: { amount: 0.0098, currency: "USD" } },
    runs: 2,
    last_run: { run_id: "r3", usage: { input_tokens: 600, output_tokens: 30, total_tokens: 630, cost: { amount: 0.0018, currency: "USD" } } },
  });
  const withUnknown = threadUsage([...runs, { run_id: "r0", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, cost: null } }]);
  assert.equal(withUnknown?.total.cost, null);
  assert.equal(withUnknown?.total.total_tokens, 3807);
  // A run stored before cost estimates existed has no `cost`: unknown, not free.
  assert.equal(threadUsage([{ run_id: "old", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }])?.total.cost, null);
  assert.equal(threadUsage([{ run_id: "none", usage: null }]), undefined);
});

test("by model: the lead's own calls (folded subagent tokens taken back out), each subagent under its model, each summary under its model", () => {
  const tracker = new SubagentRunTracker();
  tracker.observe({ type: "task_started", task_id: "call_a", model_name: "cheap" });
  tracker.observe({ type: "task_completed", task_id: "call_a", model_name: "cheap", usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
  const c = new RunUsageCollector("lead");
  c.add({ model_request: { messages: [ai("d", 100, 20)] } });
  // TokenUsage folded call_a into the dispatching message: the message now says 110 / 25.
  c.add({ TokenUsageMiddleware: { messages: [ai("d", 110, 25), new ToolMessage({ id: "r_a", content: "done", tool_call_id: "call_a", additional_kwargs: { subagent_token_usage_attributed: true } })] } });
  c.observeCustom({ type: "summarization_usage", usage: { input_tokens: 50, output_tokens: 7, total_tokens: 57 }, model_name: "summarizer" });
  const total = c.total(tracker)!;
  assert.equal(total.total_tokens, 120 + 15 + 57);
  assert.deepEqual(total.by_model, {
    lead: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
    cheap: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    summarizer: { input_tokens: 50, output_tokens: 7, total_tokens: 57 },
  });
});

test("priced by model: each model at its own price, the run's cost their sum; an unpriced model or a second currency makes it unknown", () => {
  const usd = (input: number, output: number) => ({ model: "m", baseURL: "http://127.0.0.1:1/v1", pricing: { currency: "USD", input_per_million: input, output_per_million: output } });
  const usage: RunUsageView = {
    input_tokens: 3000, output_tokens: 300, total_tokens: 3300,
    by_model: { lead: { input_tokens: 1000, output_tokens: 100, total_tokens: 1100 }, cheap: { input_tokens: 2000, output_tokens: 200, total_tokens: 2200 } },
  };
  const priced = withCost(usage, { name: "lead", ...usd(1000, 2000) }, { lead: usd(1000, 2000), cheap: usd(10, 20) });
  assert.deepEqual(priced.by_model?.lead?.cost, { amount: 1.2, currency: "USD" });
  assert.deepEqual(priced.by_model?.cheap?.cost, { amount: 0.024, currency: "USD" });
  assert.deepEqual(priced.cost, { amount: 1.224, currency: "USD" });
  assert.equal(withCost(usage, { name: "lead", ...usd(1000, 2000) }, { lead: usd(1000, 2000) }).cost, null, "cheap has no price");
  const cny = { model: "m", baseURL: undefined, pricing: { currency: "CNY", input_per_million: 8, output_per_million: 32 } };
  assert.equal(withCost(usage, { name: "lead", ...usd(1, 1) }, { lead: usd(1, 1), cheap: cny }).cost, null, "USD and CNY are never added");
  // DeerFlow's cache-hit price: hits at input_cache_hit_per_million, the rest of the input at the input price.
  const hit = { model: "m", baseURL: undefined, pricing: { currency: "CNY", input_per_million: 8, output_per_million: 32, input_cache_hit_per_million: 0.8 } };
  assert.deepEqual(estimateCost({ input_tokens: 1_000_000, output_tokens: 0, cached_tokens: 500_000 }, hit), { amount: 4.4, currency: "CNY" });
});

test("a task the run stopped keeps its usage so far: task_running's, in the run's sum and in its closing task_cancelled", () => {
  const tracker = new SubagentRunTracker();
  tracker.observe({ type: "task_started", task_id: "call_s", model_name: "cheap" });
  tracker.observe({ type: "task_running", task_id: "call_s", usage: { input_tokens: 300, output_tokens: 30, total_tokens: 330 } });
  const closing = tracker.close("interrupted", "Run cancelled.");
  assert.deepEqual(closing, [{ type: "task_cancelled", task_id: "call_s", error: "Cancelled by user", usage: { input_tokens: 300, output_tokens: 30, total_tokens: 330 }, model_name: "cheap" }]);
  assert.deepEqual(tracker.withUsage({ input_tokens: 10, output_tokens: 1, total_tokens: 11 }), {
    input_tokens: 310, output_tokens: 31, total_tokens: 341, subagents: { call_s: { input_tokens: 300, output_tokens: 30, total_tokens: 330 } },
  });
  // A task that never reported usage closes with none.
  const idle = new SubagentRunTracker();
  idle.observe({ type: "task_started", task_id: "call_i" });
  assert.deepEqual(idle.close("timeout", "Run timed out."), [{ type: "task_cancelled", task_id: "call_i", error: "Cancelled by user", usage: null }]);
});
