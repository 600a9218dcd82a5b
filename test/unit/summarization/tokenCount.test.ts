// Token counting (models/tokenCount.ts): js-tiktoken for OpenAI models it knows, the chars/4
// estimate otherwise, and which one a model gets logged once per model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { encodingNameFor, tokenCounterFor } from "../../../extension/harness/models/tokenCount.js";
import { setDiagnostics } from "../../../extension/harness/diagnostics.js";

const lines: string[] = [];
setDiagnostics({ info: (m) => lines.push(m), warn: (m) => lines.push(m) });

test("OpenAI model ids map to their encoding, dated and prefixed ids included; others to none", () => {
  assert.equal(encodingNameFor("gpt-4o-mini"), "o200k_base");
  assert.equal(encodingNameFor("gpt-4.1-mini-2099-01-01"), "o200k_base");
  assert.equal(encodingNameFor("openai/gpt-5-mini"), "o200k_base");
  assert.equal(encodingNameFor("gpt-4-0613"), "cl100k_base");
  assert.equal(encodingNameFor("gpt-3.5-turbo"), "cl100k_base");
  assert.equal(encodingNameFor("deepseek-chat"), undefined);
  assert.equal(encodingNameFor("gpt-4ish"), undefined);
});

test("a known model is counted with its tokenizer, an unknown one estimated, each choice logged once", async () => {
  lines.length = 0;
  const real = await tokenCounterFor("gpt-4o");
  const again = await tokenCounterFor("gpt-4o");
  // "hello world" is 2 o200k tokens; each message adds 4 for the chat framing.
  assert.equal(real([new HumanMessage("hello world")]), 6);
  assert.equal(again([new HumanMessage("hello world"), new AIMessage("hello world")]), 12);
  // Special-token text in user content is counted as text, never an error.
  assert.ok(real([new HumanMessage("<|endoftext|>")]) > 4);
  const estimate = await tokenCounterFor("qwen-max");
  assert.equal(estimate([new HumanMessage("x".repeat(40))]), 10);
  assert.deepEqual(lines, [
    'token counts for model "gpt-4o" use its tokenizer (js-tiktoken o200k_base)',
    'token counts for model "qwen-max" are estimated (4 characters a token): no tokenizer is known for it',
  ]);
});
