// Summarization triggers (middlewares/summarization.ts): tokens, messages and fraction with
// DeerFlow's OR semantics; a fraction without a known context window is ignored, with one log line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HumanMessage } from "@langchain/core/messages";
import { shouldSummarize, summarizationSettings, SummarizationConfigZ } from "../../../extension/harness/middlewares/summarization.js";
import { setDiagnostics } from "../../../extension/harness/diagnostics.js";

const warnings: string[] = [];
setDiagnostics({ info: () => undefined, warn: (m) => warnings.push(m) });
const three = [new HumanMessage("a"), new HumanMessage("b"), new HumanMessage("c")];

test("any one trigger crossed is enough (OR)", () => {
  const triggers = [{ type: "tokens" as const, value: 1000 }, { type: "messages" as const, value: 3 }];
  assert.equal(shouldSummarize(three, 10, triggers, undefined, "m"), true, "messages crossed, tokens not");
  assert.equal(shouldSummarize(three.slice(0, 2), 1000, triggers, undefined, "m"), true, "tokens crossed, messages not");
  assert.equal(shouldSummarize(three.slice(0, 2), 999, triggers, undefined, "m"), false);
  assert.equal(shouldSummarize(three, 10_000, [], undefined, "m"), false, "no trigger: never automatic");
});

test("fraction: of the known context window; without one it is ignored and said once per model", () => {
  const fraction = [{ type: "fraction" as const, value: 0.5 }];
  assert.equal(shouldSummarize(three, 64_000, fraction, 128_000, "gpt-4o"), true);
  assert.equal(shouldSummarize(three, 63_999, fraction, 128_000, "gpt-4o"), false);
  warnings.length = 0;
  assert.equal(shouldSummarize(three, 10_000_000, fraction, undefined, "local-llm"), false);
  assert.equal(shouldSummarize(three, 10_000_000, fraction, undefined, "local-llm"), false);
  assert.deepEqual(warnings, ['summarization: the "fraction" trigger is ignored for model "local-llm": its context window is unknown']);
});

test("the config section: DeerFlow's keys, one trigger or a list, bad values refused with the field", () => {
  assert.deepEqual(summarizationSettings(SummarizationConfigZ.parse({ enabled: true, trigger: { type: "messages", value: 50 } })).trigger, [{ type: "messages", value: 50 }]);
  assert.deepEqual(summarizationSettings(SummarizationConfigZ.parse({ enabled: true, trigger: null })).trigger, []);
  assert.deepEqual(summarizationSettings(SummarizationConfigZ.parse({ enabled: true })).trigger, [{ type: "tokens", value: 32000 }]);
  assert.equal(summarizationSettings(SummarizationConfigZ.parse({ enabled: true, trim_tokens_to_summarize: null })).trimTokensToSummarize, null);
  assert.equal(SummarizationConfigZ.safeParse({ trigger: [{ type: "fraction", value: 1.5 }] }).success, false);
  assert.equal(SummarizationConfigZ.safeParse({ keep: { type: "fraction", value: 0.3 } }).success, false, "keep is messages or tokens");
  assert.equal(SummarizationConfigZ.safeParse({ summary_prompt: "no placeholder" }).success, false);
  assert.equal(SummarizationConfigZ.safeParse({ unknown_key: 1 }).success, false);
});
