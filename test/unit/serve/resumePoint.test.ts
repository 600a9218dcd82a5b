// Where a Last-Event-ID resumes a serve stream (serve/stream.ts): after a journal row, inside a row
// of message chunks (`<seq>.<i>`), or from the start (-1, the SDK's reconnect after a reload).
import { test } from "node:test";
import assert from "node:assert/strict";
import { messageTuple, resumePoint } from "../../../extension/harness/serve/stream.js";
import type { RunRecord } from "../../../extension/harness/store/runs.js";

test("resumePoint reads the ids serve sends, -1 and nothing as the start, and refuses the rest", () => {
  assert.deepEqual(resumePoint(undefined), { afterSeq: 0 });
  assert.deepEqual(resumePoint("-1"), { afterSeq: 0 });
  assert.deepEqual(resumePoint("17"), { afterSeq: 17 });
  assert.deepEqual(resumePoint("17.2"), { afterSeq: 16, resumeChunk: { seq: 17, after: 2 } });
  assert.deepEqual(resumePoint("1.0"), { afterSeq: 0, resumeChunk: { seq: 1, after: 0 } });
  for (const bad of ["", "x", "-2", "1.2.3", "1e3", "17.", ".2", "9".repeat(16)]) assert.equal(resumePoint(bad), undefined, bad);
});

test("messageTuple is LangGraph's [serialized chunk, metadata] for ai and tool chunks", () => {
  const run = { run_id: "r1", thread_id: "t1" } as RunRecord;
  const [ai, meta] = messageTuple({ type: "ai", id: "m1", content: "hi", node: "model", tool_call_chunks: [{ index: 0, id: "c1", name: "ls", args: "{" }] }, run);
  assert.equal(ai.type, "AIMessageChunk");
  assert.equal(ai.content, "hi");
  assert.deepEqual(ai.tool_call_chunks, [{ type: "tool_call_chunk", id: "c1", name: "ls", args: "{", index: 0 }]);
  assert.deepEqual(meta, { langgraph_node: "model", run_id: "r1", thread_id: "t1", assistant_id: "lead_agent" });
  const [tool] = messageTuple({ type: "tool", id: "m2", content: "out", tool_call_id: "c1" }, run);
  assert.equal(tool.type, "tool");
  assert.equal(tool.tool_call_id, "c1");
});
