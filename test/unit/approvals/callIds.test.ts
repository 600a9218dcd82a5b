// Issue 21: tool-call ids made unique in the thread before any call is classified, consistently
// in the structured calls and the provider's raw payload; and where a call sits (its message and
// index) once they are.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { locateCall, renameCallIds } from "../../../extension/harness/approvals/callIds.js";
import { DECISION_LIMITS } from "../../../extension/protocol/approvalLimits.js";
import { callHash } from "../../../extension/harness/approvals/fingerprint.js";

const call = (id: string | undefined, command: string) => ({ ...(id === undefined ? {} : { id }), name: "bash", args: { command }, type: "tool_call" as const });
const raw = (id: string, command: string) => ({ id, type: "function" as const, function: { name: "bash", arguments: JSON.stringify({ command }) } });

test("unique ids are left alone (same message object, no update)", () => {
  const ai = new AIMessage({ id: "m1", content: "", tool_calls: [call("a", "1"), call("b", "2")] });
  assert.equal(renameCallIds([new HumanMessage("hi"), ai], 1), undefined);
});

test("a repeated id in one turn: the first keeps it, the later one is renamed in the calls and the raw payload alike", () => {
  const ai = new AIMessage({
    id: "m1",
    content: "",
    tool_calls: [call("x", "echo 1"), call("x", "echo 2")],
    additional_kwargs: { tool_calls: [raw("x", "echo 1"), raw("x", "echo 2")] },
  });
  const out = renameCallIds([ai], 0)!;
  assert.equal(out.id, "m1", "the reducer replaces the message by its id");
  const ids = out.tool_calls!.map((c) => c.id);
  assert.equal(ids[0], "x");
  assert.notEqual(ids[1], "x");
  assert.match(ids[1]!, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual((out.additional_kwargs.tool_calls as Array<{ id: string }>).map((c) => c.id), ids);
  assert.deepEqual(out.tool_calls!.map((c) => c.args), [{ command: "echo 1" }, { command: "echo 2" }]);
});

test("an id used earlier in the thread (a call or a result) is renamed, even the first time in this turn", () => {
  const earlier = new AIMessage({ id: "m1", content: "", tool_calls: [call("call_a", "echo ok")] });
  const result = new ToolMessage({ content: "ok", tool_call_id: "call_a", name: "bash" });
  const later = new AIMessage({ id: "m2", content: "", tool_calls: [call("call_a", "echo PWNED"), call("fresh", "ls")] });
  const out = renameCallIds([earlier, result, new HumanMessage("more"), later], 3)!;
  assert.notEqual(out.tool_calls![0]!.id, "call_a");
  assert.equal(out.tool_calls![1]!.id, "fresh");
  const orphanResult = new ToolMessage({ content: "?", tool_call_id: "ghost", name: "bash" });
  const again = new AIMessage({ id: "m3", content: "", tool_calls: [call("ghost", "ls")] });
  assert.notEqual(renameCallIds([orphanResult, again], 1)!.tool_calls![0]!.id, "ghost");
});

test("missing, blank and over-long ids get names a decision can carry; renamed ids never collide", () => {
  const long = "c".repeat(DECISION_LIMITS.maxIdChars + 1);
  const ai = new AIMessage({ id: "m1", content: "", tool_calls: [call(undefined, "1"), call(" ", "2"), call(long, "3"), call("call_r3", "4"), call("call_r3", "5")] });
  const ids = renameCallIds([ai], 0)!.tool_calls!.map((c) => c.id!);
  assert.equal(new Set(ids).size, ids.length, ids.join(","));
  for (const id of ids) {
    assert.ok(id.trim() !== "" && id.length <= DECISION_LIMITS.maxIdChars, id);
    assert.match(id, /^[A-Za-z0-9_-]+$/);
  }
});

test("locateCall: the latest AI message with the id, and its index there", () => {
  const m1 = new AIMessage({ id: "m1", content: "", tool_calls: [call("a", "1")] });
  const m2 = new AIMessage({ id: "m2", content: "", tool_calls: [call("b", "2"), call("c", "3")] });
  assert.deepEqual(locateCall([m1, m2], "c"), { messageId: "m2", index: 1 });
  assert.equal(locateCall([m1, m2], "zzz"), undefined);
  assert.equal(locateCall([m1, m2], undefined), undefined);
});

test("a call's hash ignores key order and sees every argument", () => {
  assert.equal(callHash("bash", { a: 1, b: { c: 2, d: [1, 2] } }), callHash("bash", { b: { d: [1, 2], c: 2 }, a: 1 }));
  assert.notEqual(callHash("bash", { command: "ls" }), callHash("bash", { command: "ls " }));
  assert.notEqual(callHash("bash", { command: "ls" }), callHash("sh", { command: "ls" }));
});
