// Issue 13, the panel's review boundary: the review messages a webview may send (decide, diffs,
// reverts) parse only when well formed, a hostile one is refused with a reason; what the journal
// says a thread waits on; and the webview's own check of the host's review messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseWebviewMessage } from "../../../extension/host/panel/messages.js";
import { describeCalls, pendingAfter } from "../../../extension/host/review/pending.js";
import type { PendingApproval } from "../../../extension/protocol/approvals.js";
import type { JournalEvent } from "../../../extension/protocol/rpc.js";
import { parseReviewMessage } from "../../../webview/components/reviewGuard.js";

const call: PendingApproval = { tool_call_id: "call_1", name: "bash", args: { description: "d", command: "npm test" }, class: "shell", reason: "runs a command on this machine: npm test" };
const base = { thread_id: "t", run_id: "r", seq: 1, ts: 0 };
const ev = (e: Record<string, unknown>): JournalEvent => ({ ...base, ...e }) as unknown as JournalEvent;

test("well-formed review messages parse", () => {
  for (const m of [
    { type: "decide", threadId: "t1", decisions: [{ tool_call_id: "c1", decision: "approve", always_allow: true }, { tool_call_id: "c2", decision: "reject", reason: "no" }] },
    { type: "openProposedDiff", threadId: "t1", toolCallId: "c1" },
    { type: "openChangeDiff", runId: "r1", path: "/mnt/user-data/workspace/a.txt" },
    { type: "revertChanges", runId: "r1" },
    { type: "revertChanges", runId: "r1", paths: ["/mnt/user-data/workspace/a.txt"] },
  ]) {
    assert.deepEqual(parseWebviewMessage(m), { ok: true, message: m });
  }
});

test("malformed or hostile review messages are refused with a readable reason", () => {
  for (const [m, why] of [
    [{ type: "decide", threadId: "t1", decisions: [] }, /decisions/],
    [{ type: "decide", threadId: "t1", decisions: [{ tool_call_id: "c1", decision: "maybe" }] }, /decision/],
    [{ type: "decide", threadId: "t1", decisions: [{ tool_call_id: "c1", decision: "approve", run: "rm -rf /" }] }, /run|key/i],
    [{ type: "decide", decisions: [{ tool_call_id: "c1", decision: "approve" }] }, /threadId/],
    [{ type: "openProposedDiff", threadId: "t1" }, /toolCallId/],
    [{ type: "openChangeDiff", runId: "r1", path: "/etc/passwd" }, /path/],
    [{ type: "revertChanges", runId: "r1", paths: ["../../x"] }, /paths/],
    [{ type: "revertChanges", runId: "" }, /runId/],
  ] as const) {
    const r = parseWebviewMessage(m);
    assert.equal(r.ok, false, JSON.stringify(m));
    if (!r.ok) assert.match(r.error, why);
  }
});

test("the journal sets the cards on a pause and clears them on a decision or a later run", () => {
  assert.deepEqual(pendingAfter(ev({ event: "custom", data: { type: "approval_requested", approvals: [call, { bogus: true }] } })), [call], "malformed entries are dropped");
  assert.deepEqual(pendingAfter(ev({ event: "end", data: { status: "success", stop_reason: "approval", pending_approvals: [call] } })), [call]);
  assert.deepEqual(pendingAfter(ev({ event: "custom", data: { type: "approval_decided", decisions: [] } })), []);
  assert.deepEqual(pendingAfter(ev({ event: "metadata", data: { run_id: "r2" } })), []);
  assert.deepEqual(pendingAfter(ev({ event: "end", data: { status: "success" } })), []);
  assert.equal(pendingAfter(ev({ event: "custom", data: { type: "task_running" } })), undefined, "other events say nothing");
  assert.equal(pendingAfter(ev({ event: "values", data: {} })), undefined);
});

test("a notification names the first call and how many more", () => {
  assert.equal(describeCalls([call]), "bash: npm test");
  assert.equal(describeCalls([call, { ...call, tool_call_id: "c2" }]), "bash: npm test (+1 more)");
  assert.match(describeCalls([{ ...call, args: { command: "x".repeat(200) } }]), /^bash: x{59}…$/);
});

test("the webview takes only well-formed review messages and leaves the others to the store's guard", () => {
  const quiet = () => undefined;
  assert.deepEqual(parseReviewMessage({ type: "approvals", threadId: "t", pending: [call] }, quiet), { type: "approvals", threadId: "t", pending: [call] });
  const changes = { type: "changes", threadId: "t", runs: [{ run_id: "r", created_at: "2026-01-01T00:00:00Z", files: [{ path: "/mnt/user-data/workspace/a", status: "added", reverted: false }] }] };
  assert.deepEqual(parseReviewMessage(changes, quiet), changes);
  assert.equal(parseReviewMessage({ type: "approvals", threadId: "t", pending: [{ name: "bash" }] }, quiet), null);
  assert.equal(parseReviewMessage({ type: "reverted", runId: "r", files: [{ path: 1 }] }, quiet), null);
  assert.equal(parseReviewMessage({ type: "state", state: {} }, quiet), null, "not a review message");
});
