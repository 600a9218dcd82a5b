import { test } from "node:test";
import assert from "node:assert/strict";
import { outcomeLabel, toolOutcome } from "../../../extension/protocol/toolOutcome.js";
import { rejectionMessage } from "../../../extension/harness/approvals/resume.js";
import { toWireMessage } from "../../../extension/harness/runs/wire.js";
import { initialState, reduce } from "../../../webview/store.js";
import type { PanelState } from "../../../webview/store.js";
import type { HostToWebview } from "../../../extension/protocol/webview.js";
import { callState } from "../../../webview/components/toolCall.js";
import { ai, events, resetSeq, stateMsg, toolMsg, update } from "./fixtures.js";

test("a rejection the harness writes reads Rejected with the user's reason, through the wire", () => {
  const wire = toWireMessage(rejectionMessage({ tool_call_id: "c1", name: "write_file" }, "wrong file, use b.txt"));
  const o = toolOutcome({ ...wire, content: typeof wire.content === "string" ? wire.content : "" });
  assert.deepEqual(o, { kind: "rejected", reason: "wrong file, use b.txt" });
  assert.equal(outcomeLabel(o), "Rejected: wrong file, use b.txt");
  const none = toolOutcome({ ...toWireMessage(rejectionMessage({ tool_call_id: "c2", name: "bash" }, undefined)), content: "Rejected by the user: no reason given" });
  assert.equal(outcomeLabel(none), "Rejected: no reason given");
});

test("failed: an error result says its first line (without 'Error:'); a bash exit without the kwarg is read from its last line", () => {
  assert.deepEqual(toolOutcome({ status: "error", content: "Error: File not found: /mnt/user-data/workspace/x\nmore" }), { kind: "failed", detail: "File not found: /mnt/user-data/workspace/x" });
  assert.deepEqual(toolOutcome({ content: "out\nExit Code: 2", name: "bash" }), { kind: "failed", detail: "exit code 2" });
  // Only bash's own format counts: another tool's text that says so is its content.
  assert.deepEqual(toolOutcome({ content: "out\nExit Code: 2", name: "read_file" }), { kind: "done" });
  // A success whose text starts like a rejection is not one (only an error result or the meta is).
  assert.deepEqual(toolOutcome({ content: "Rejected by the user: quoted in a file" }), { kind: "done" });
  const long = toolOutcome({ status: "error", content: "x".repeat(1000) });
  assert.ok(long.kind === "failed" && long.detail.length <= 160);
});

function run(...msgs: HostToWebview[]): PanelState {
  return msgs.reduce(reduce, initialState);
}

test("the panel's cards: a bash exit 254 is failed, a rejected write is rejected, a plain result done", () => {
  resetSeq();
  const s = run(
    stateMsg(),
    events(
      update("model", [ai("a1", "", [{ id: "b", name: "bash", args: { command: "false" } }, { id: "w", name: "write_file", args: { path: "/mnt/user-data/workspace/a" } }, { id: "r", name: "ls", args: {} }])]),
      update("tools", [
        { ...toolMsg("t1", "b", "bash", "boom"), additional_kwargs: { deerflow_exit: { code: 254, timed_out: false } } },
        { ...toolMsg("t2", "w", "write_file", "Rejected by the user: not that file", "error"), additional_kwargs: { deerflow_tool_meta: { error_type: "rejected_by_user" } } },
        toolMsg("t3", "r", "ls", "a\nb"),
      ]),
    ),
  );
  const calls = s.thread?.messages.at(0)?.toolCalls ?? [];
  assert.deepEqual(calls.map((c) => callState(c)), ["error", "rejected", "success"]);
  assert.deepEqual(calls.map((c) => c.result && outcomeLabel(c.result.outcome)), ["Failed (exit code 254)", "Rejected: not that file", "Done"]);
});
