// middlewares/tokenBudget.ts: what a run has used (this run's growth only) and DeerFlow's hard stop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { budgetExceededMessage, budgetWarningMessage, runTokens, runUsage, tokenCappedAnswer, tokensByMessage } from "../../../extension/harness/middlewares/tokenBudget.js";
import { budgetExceededMessage as subagentWording } from "../../../extension/harness/subagents/budget.js";
import { buildMiddlewareChain } from "../../../extension/harness/agent/middlewareChain.js";
import { chatModel, threadFixture } from "../middlewares/helpers.js";

const ai = (id: string, input: number, output: number, extra: Partial<ConstructorParameters<typeof AIMessage>[0] & object> = {}) =>
  new AIMessage({ id, content: "", usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output }, ...extra });

test("DeerFlow's wording, one owner: the subagents' budget says the same", () => {
  assert.equal(
    budgetExceededMessage(1234567, 1000000),
    "[TOKEN BUDGET EXCEEDED] The total token usage (1,234,567) has exceeded the safety limit (1,000,000). Producing final answer with results collected so far.",
  );
  assert.equal(subagentWording, budgetExceededMessage);
  assert.equal(
    budgetWarningMessage(850, 1000),
    "[TOKEN BUDGET WARNING] You have used 850 of your 1,000 total token budget (85%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.",
  );
});

test("runTokens counts growth past the baseline: earlier runs' messages are not this run's; a subagent's usage counts once, folded or not", () => {
  const earlier = [new HumanMessage({ id: "h0", content: "before" }), ai("old", 500, 100)];
  const baseline = tokensByMessage(earlier); // beforeAgent
  assert.equal(runTokens(earlier, baseline), 0);
  const now = [...earlier, new HumanMessage({ id: "h1", content: "now" }), ai("m1", 100, 20, { tool_calls: [{ id: "call_t", name: "task", args: {}, type: "tool_call" }] })];
  assert.equal(runTokens(now, baseline), 120);
  // The task's result reports the subagent's usage (not folded yet): counted from the result.
  const usage = { input_tokens: 40, output_tokens: 10, total_tokens: 50 };
  const result = new ToolMessage({ id: "r1", content: "ok", tool_call_id: "call_t", name: "task", additional_kwargs: { subagent_token_usage: usage } });
  assert.equal(runTokens([...now, result, ai("m2", 30, 5)], baseline), 120 + 50 + 35);
  // TokenUsage folds it into m1 and marks the result: m1 grows by what the result stops counting.
  const marked = new ToolMessage({ id: "r1", content: "ok", tool_call_id: "call_t", name: "task", additional_kwargs: { subagent_token_usage: usage, subagent_token_usage_attributed: true } });
  assert.equal(runTokens([...earlier, now[2]!, ai("m1", 140, 30), marked, ai("m2", 30, 5)], baseline), 120 + 50 + 35);
  // An earlier run's message that grows (DeerFlow folds late usage into it) counts by its growth.
  assert.equal(runTokens([earlier[0]!, ai("old", 520, 110)], baseline), 30);
});

test("the hard stop: tool calls stripped (and their provider copy), the note appended, finish_reason stop, stop_reason token_capped, same id", () => {
  const last = ai("m9", 80, 20, {
    content: "Looking again.",
    tool_calls: [{ id: "call_x", name: "ls", args: { path: "/" }, type: "tool_call" }],
    additional_kwargs: { tool_calls: [{ id: "call_x", type: "function", function: { name: "ls", arguments: "{}" } }], token_usage_attribution: { kind: "tool_batch" } },
    response_metadata: { finish_reason: "tool_calls" },
  });
  const capped = tokenCappedAnswer(last, 250, 200);
  assert.equal(capped.id, "m9");
  assert.deepEqual(capped.tool_calls, []);
  assert.equal(capped.additional_kwargs.tool_calls, undefined);
  assert.equal(capped.additional_kwargs.stop_reason, "token_capped");
  assert.equal(capped.response_metadata.finish_reason, "stop");
  assert.equal(capped.content, `Looking again.\n\n${budgetExceededMessage(250, 200)}`);
  assert.deepEqual(capped.usage_metadata, last.usage_metadata, "its own usage kept");
  // An earlier guard's stop reason stands.
  const length = ai("m10", 1, 1, { content: "cut", additional_kwargs: { stop_reason: "model_length_capped" } });
  assert.equal(tokenCappedAnswer(length, 9, 5).additional_kwargs.stop_reason, "model_length_capped");
});

test("TokenBudget sits at slot [29]: after LoopDetection, before TerminalResponse; only with a budget above 0", () => {
  const { dirs, blobs } = threadFixture();
  const base = { dirs, blobs, model: chatModel("http://127.0.0.1:9/v1"), supportsVision: false, planMode: false };
  assert.ok(!buildMiddlewareChain(base).some((m) => m.name === "TokenBudgetMiddleware"));
  assert.ok(!buildMiddlewareChain({ ...base, tokenBudget: { maxTokens: 0 } }).some((m) => m.name === "TokenBudgetMiddleware"));
  const names = buildMiddlewareChain({ ...base, tokenBudget: { maxTokens: 1000 } }).map((m) => m.name);
  const at = (n: string) => names.indexOf(n);
  assert.ok(at("LoopDetectionMiddleware") >= 0 && at("LoopDetectionMiddleware") < at("TokenBudgetMiddleware"), names.join(", "));
  assert.ok(at("TokenBudgetMiddleware") < at("TerminalResponseMiddleware"), names.join(", "));
});

test("DeerFlow's input and output limits: runUsage splits the run's tokens, and the texts name the limit that decided", () => {
  const baseline = tokensByMessage([]);
  const msgs = [
    new AIMessage({ id: "a", content: "x", usage_metadata: { input_tokens: 900, output_tokens: 40, total_tokens: 940 } }),
    new ToolMessage({ id: "t", content: "r", tool_call_id: "c", name: "task", additional_kwargs: { subagent_token_usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 } } }),
  ];
  assert.deepEqual(runUsage(msgs, baseline), { input: 1000, output: 50 });
  assert.equal(
    budgetExceededMessage(1000, 800, "input"),
    "[TOKEN BUDGET EXCEEDED] The input token usage (1,000) has exceeded the safety limit (800). Producing final answer with results collected so far.",
  );
  assert.match(budgetWarningMessage(45, 50, "output"), /^\[TOKEN BUDGET WARNING\] You have used 45 of your 50 output token budget \(90%\)\./);
});
