import { test } from "node:test";
import assert from "node:assert/strict";
import { DeliveryCollector } from "../../../extension/harness/runs/delivery.js";

test("the collector knows whether the tools node ran: an answer-only run has nothing to verify in outputs/", () => {
  const c = new DeliveryCollector();
  c.observe({ event: "updates", data: { before_model: { _run_started: true } } });
  c.observe({ event: "updates", data: { model_request: { messages: [{ type: "ai", content: "hi" }] } } });
  c.observe({ event: "values", data: { tools: {} } });
  assert.equal(c.toolsRan, false, "no tools update yet (a values event is not a node's update)");
  c.observe({
    event: "updates",
    data: { tools: [{ artifacts: ["/mnt/user-data/outputs/a.md"], messages: [{ type: "tool", name: "present_files" }] }] },
  });
  assert.equal(c.toolsRan, true);
  assert.deepEqual(c.facts().by_tool, { present_files: ["/mnt/user-data/outputs/a.md"] });
});
