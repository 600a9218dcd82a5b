// DeerFlow's thinking switch-off conventions (create_chat_model), for a run whose context sets
// thinking_enabled: false (the CLI has no flag for it; the panel sends it in the run context).
import { test } from "node:test";
import assert from "node:assert/strict";
import { shapeThinking } from "../../../extension/harness/models/thinking.js";
import { thinkingFromContext } from "../../../extension/harness/models/factory.js";

const off = { thinkingEnabled: false };

test("thinking off: extra_body thinking → disabled + reasoning_effort minimal (when effort is supported)", () => {
  const m = { supportsThinking: true, supportsReasoningEffort: true, whenThinkingEnabled: { extra_body: { thinking: { type: "enabled" } } } };
  assert.deepEqual(shapeThinking(m, off), { body: { thinking: { type: "disabled" } }, reasoningEffort: "minimal" });
  assert.deepEqual(shapeThinking({ ...m, supportsReasoningEffort: false }, off), { body: { thinking: { type: "disabled" } } });
});

test("thinking off: chat_template_kwargs flipped; Anthropic-style thinking disabled; when_thinking_disabled wins", () => {
  const qwen = { supportsThinking: true, supportsReasoningEffort: false, whenThinkingEnabled: { extra_body: { chat_template_kwargs: { enable_thinking: true, thinking: true } } } };
  assert.deepEqual(shapeThinking(qwen, off).body, { chat_template_kwargs: { thinking: false, enable_thinking: false } });
  const claude = { supportsThinking: true, supportsReasoningEffort: false, thinking: { type: "enabled", budget_tokens: 4096 } };
  assert.deepEqual(shapeThinking(claude, { thinkingEnabled: true }).body, { thinking: { type: "enabled", budget_tokens: 4096 } });
  assert.deepEqual(shapeThinking(claude, off).body, { thinking: { type: "disabled" } });
  assert.deepEqual(shapeThinking({ ...claude, whenThinkingDisabled: { extra_body: { enable_thinking: false } } }, off).body, { enable_thinking: false });
});

test("the run context's reasoning_effort overrides the model's; context keys are read typed", () => {
  const m = { supportsThinking: false, supportsReasoningEffort: true, reasoningEffort: "low" };
  assert.equal(shapeThinking(m, { thinkingEnabled: true, reasoningEffort: "high" }).reasoningEffort, "high");
  assert.deepEqual(shapeThinking(m, { thinkingEnabled: true }), { body: {}, reasoningEffort: "low" });
  assert.deepEqual(thinkingFromContext({ thinking_enabled: false, reasoning_effort: "medium", plan_mode: true }), { thinkingEnabled: false, reasoningEffort: "medium" });
  assert.deepEqual(thinkingFromContext({ thinking_enabled: "yes" }), {});
});
