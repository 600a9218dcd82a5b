// The `task` result text and status fields, pinned to DeerFlow's (`test_task_tool_core_logic.py`,
// `contracts/subagent_status_contract.json`), and SubagentLimit's slot [27] in the lead chain.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { formatSubagentResult, subagentAdditionalKwargs, boundMetadataText } from "../../../extension/harness/subagents/statusContract.js";
import { buildMiddlewareChain } from "../../../extension/harness/agent/middlewareChain.js";
import { chatModel, threadFixture } from "../middlewares/helpers.js";

test("DeerFlow's result strings for every status and cap", () => {
  const t = (o: Parameters<typeof formatSubagentResult>[0]) => formatSubagentResult(o).content;
  assert.equal(t({ status: "completed", result: "done" }), "Task Succeeded. Result: done");
  assert.equal(t({ status: "completed", result: "part", stopReason: "token_capped" }), "Task Succeeded (capped: token budget). Result: part");
  assert.equal(t({ status: "completed", result: "part", stopReason: "turn_capped" }), "Task Succeeded (capped: turn budget). Result: part");
  assert.equal(t({ status: "failed", error: "boom" }), "Task failed. Error: boom");
  assert.equal(t({ status: "failed", error: "Reached max_turns=3", stopReason: "turn_capped" }), "Task failed (capped: turn budget). Error: Reached max_turns=3");
  assert.equal(t({ status: "failed", stopReason: "loop_capped" }), "Task failed (capped: repeated tool-call loop).");
  assert.equal(t({ status: "cancelled", error: "Cancelled by user" }), "Task cancelled by user. Error: Cancelled by user");
  assert.equal(t({ status: "timed_out", error: "timeout" }), "Task timed out. Error: timeout");
  assert.equal(t({ status: "timed_out" }), "Task timed out.");
});

test("status fields: brief and digest only for completed, error only otherwise, stop reason and usage when given", () => {
  const ok = subagentAdditionalKwargs({ status: "completed", result: "done", stopReason: "token_capped", modelName: " m ", usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } }, undefined);
  assert.deepEqual(ok, {
    subagent_status: "completed",
    subagent_result_brief: "done",
    subagent_result_sha256: createHash("sha256").update("done").digest("hex"),
    subagent_stop_reason: "token_capped",
    subagent_model_name: "m",
    subagent_token_usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  });
  const failed = subagentAdditionalKwargs({ status: "failed", result: "ignored" }, "boom");
  assert.deepEqual(failed, { subagent_status: "failed", subagent_error: "boom" });
  const long = boundMetadataText("x".repeat(5000));
  assert.equal(long.length, 2000);
  assert.ok(long.includes("\n...\n"));
});

test("SubagentLimit sits at slot [27]: after SystemMessageCoalescing, before LoopDetection; only with subagents", () => {
  const { dirs, blobs } = threadFixture();
  const base = { dirs, blobs, model: chatModel("http://127.0.0.1:9/v1"), supportsVision: false, planMode: false };
  assert.ok(!buildMiddlewareChain(base).some((m) => m.name === "SubagentLimitMiddleware"));
  const names = buildMiddlewareChain({ ...base, subagentLimit: { maxConcurrent: 3, maxTotal: 6 } }).map((m) => m.name);
  const at = (n: string) => names.indexOf(n);
  assert.ok(at("SystemMessageCoalescingMiddleware") < at("SubagentLimitMiddleware"), names.join(", "));
  assert.ok(at("SubagentLimitMiddleware") < at("LoopDetectionMiddleware"), names.join(", "));
});
