// The wire shapes every consumer (CLI, journal, panel) reads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { toWireMessage, wireValue } from "../../../extension/harness/runs/wire.js";

test("messages keep DeerFlow's field names; provider-raw duplicates are dropped", () => {
  const ai = new AIMessage({ id: "a1", content: "", tool_calls: [{ id: "c1", name: "ls", args: { path: "/mnt/user-data" } }], additional_kwargs: { tool_calls: [{ raw: true }] } as never });
  assert.deepEqual(toWireMessage(ai), { type: "ai", id: "a1", content: "", tool_calls: [{ id: "c1", name: "ls", args: { path: "/mnt/user-data" } }] });
  const tool = new ToolMessage({ id: "t1", content: "Error: no", tool_call_id: "c1", name: "ls", status: "error" });
  assert.deepEqual(toWireMessage(tool), { type: "tool", id: "t1", content: "Error: no", name: "ls", tool_call_id: "c1", status: "error" });
  assert.deepEqual(toWireMessage(new HumanMessage({ id: "h", content: "hi" })), { type: "human", id: "h", content: "hi" });
});

test("a RemoveMessage is a `remove` of its id, never a blank human message", () => {
  assert.deepEqual(toWireMessage(new RemoveMessage({ id: "view-image-context:1" })), { type: "remove", id: "view-image-context:1", content: [] });
  assert.deepEqual(wireValue({ node: { messages: [new RemoveMessage({ id: "x" })] } }), { node: { messages: [{ type: "remove", id: "x", content: [] }] } });
});
