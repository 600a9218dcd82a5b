// Issue 21 item 7: the panel and runs/decide agree on a decision's limits, because both read them
// from protocol/approvalLimits.ts: what the host accepts from the webview is never refused by the
// harness, and what the harness would refuse never leaves the host. The CLI's path (checkDecisions)
// applies the same reason limit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseWebviewMessage } from "../../../extension/host/panel/messages.js";
import { paramsSchemas } from "../../../extension/harness/server/schemas.js";
import { checkDecisions } from "../../../extension/harness/approvals/resume.js";
import { DECISION_LIMITS } from "../../../extension/protocol/approvalLimits.js";

const L = DECISION_LIMITS;
type Decision = { tool_call_id: string; decision: "approve" | "reject"; reason?: string };
const decisions = (n: number, over: Partial<Decision> = {}): Decision[] => Array.from({ length: n }, (_, i) => ({ tool_call_id: `c${i}`, decision: "reject", ...over }));

function verdicts(list: Decision[]): { panel: boolean; rpc: boolean } {
  const panel = parseWebviewMessage({ type: "decide", threadId: "t1", decisions: list }).ok;
  const rpc = paramsSchemas["runs/decide"].safeParse({ workspaceFolder: "/w", threadId: "t1", decisions: list }).success;
  return { panel, rpc };
}

test("a decision at every limit passes both the panel's check and runs/decide's; one past any limit fails both", () => {
  const cases: Array<[string, Decision[], boolean]> = [
    ["as many decisions as a turn may wait on", decisions(L.maxPending), true],
    ["one decision more", decisions(L.maxPending + 1), false],
    ["the longest reason", decisions(1, { reason: "r".repeat(L.maxReasonChars) }), true],
    ["a reason one character longer", decisions(1, { reason: "r".repeat(L.maxReasonChars + 1) }), false],
    ["the longest id", decisions(1, { tool_call_id: "i".repeat(L.maxIdChars) }), true],
    ["an id one character longer", decisions(1, { tool_call_id: "i".repeat(L.maxIdChars + 1) }), false],
  ];
  for (const [what, list, ok] of cases) assert.deepEqual(verdicts(list), { panel: ok, rpc: ok }, what);
});

test("the CLI's decisions meet the same reason limit", () => {
  const pending = [{ tool_call_id: "c0", name: "bash", args: {}, class: "shell" as const, reason: "r" }];
  assert.doesNotThrow(() => checkDecisions(pending, decisions(1, { reason: "r".repeat(L.maxReasonChars) })));
  assert.throws(() => checkDecisions(pending, decisions(1, { reason: "r".repeat(L.maxReasonChars + 1) })), /at most 2000 are kept/);
});
