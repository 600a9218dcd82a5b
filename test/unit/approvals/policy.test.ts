// Issue 13: the approval policy (parsing, defaults) and the class of a tool call, including the
// trust boundary's protected paths reached through case variants and planted links.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { continuedPolicy, defaultPolicy, parsePolicySpec, resolvePolicy, storedPolicy } from "../../../extension/harness/approvals/policy.js";
import { classifyToolCall } from "../../../extension/harness/approvals/classify.js";
import { verdictFor, unansweredCalls } from "../../../extension/harness/middlewares/approval.js";
import { checkDecisions, decideAll, resumeInput } from "../../../extension/harness/approvals/resume.js";
import { callHash, grantKey } from "../../../extension/harness/approvals/fingerprint.js";
import { DECISION_LIMITS } from "../../../extension/protocol/approvalLimits.js";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { threadFixture } from "../middlewares/helpers.js";

test("defaults: read and write run, protected, mcp, web and other ask, shell asks on the host and runs in a dev container", () => {
  assert.deepEqual(defaultPolicy("local"), { read: "auto", write: "auto", protected: "ask", shell: "ask", mcp: "ask", web: "ask", other: "ask" });
  assert.equal(defaultPolicy("devcontainer").shell, "auto");
  assert.equal(defaultPolicy("devcontainer").mcp, "ask", "an MCP tool asks wherever its server runs");
  assert.deepEqual(resolvePolicy("local", { write: "ask" }), { read: "auto", write: "ask", protected: "ask", shell: "ask", mcp: "ask", web: "ask", other: "ask" });
});

test("--approval: CLASS=MODE pairs, unnamed classes keep defaults; anything else is refused by name", () => {
  assert.deepEqual(parsePolicySpec("read=auto, write=ask,shell=deny"), { read: "auto", write: "ask", shell: "deny" });
  assert.deepEqual(parsePolicySpec(""), {});
  for (const bad of ["shell", "shell=maybe", "bash=auto", "shell=auto=ask"]) {
    assert.throws(() => parsePolicySpec(bad), (e: Error) => e.message.includes(`"${bad}"`), bad);
  }
  assert.throws(() => parsePolicySpec("shell=auto,shell=deny"), /given twice/);
});

test("classes: reads, control tools, writes, protected writes (case variants, links), shell, unknown tools", () => {
  const { ws, dirs } = threadFixture();
  const ctx = { dirs, sandboxKind: "local" as const, allowHostCommands: true };
  const cls = (name: string, args: Record<string, unknown> = {}) => classifyToolCall({ name, args }, ctx).class;
  assert.equal(cls("read_file", { path: "/mnt/user-data/workspace/.git/config" }), "read");
  assert.equal(cls("ask_clarification"), "read");
  assert.equal(cls("write_file", { path: "/mnt/user-data/workspace/src/a.ts" }), "write");
  assert.equal(cls("write_file", { path: "/mnt/user-data/outputs/report.md" }), "write");
  assert.equal(cls("str_replace", { path: "/mnt/user-data/workspace/.VSCode/tasks.json" }), "protected");
  assert.equal(cls("write_file", { path: "/mnt/user-data/workspace/sub/.git/hooks/pre-commit" }), "protected");
  mkdirSync(join(ws, ".husky"));
  symlinkSync(join(ws, ".husky"), join(ws, "innocent"));
  assert.equal(cls("write_file", { path: "/mnt/user-data/workspace/innocent/pre-push" }), "protected", "a link into a protected folder");
  assert.equal(cls("write_file", { path: "/etc/passwd" }), "write", "refused by the sandbox anyway");
  assert.equal(cls("bash", { command: "ls" }), "shell");
  assert.equal(cls("mcp_search"), "other");
  assert.equal(classifyToolCall({ name: "bash", args: { command: "ls" } }, { ...ctx, allowHostCommands: false }).inert, true);
});

test("verdict: deny always wins; the user's yes (a grant of exactly this call, unused, in this sandbox kind; or a rule covering it) turns ask into auto", () => {
  const { dirs } = threadFixture();
  const o = { dirs, sandboxKind: "local" as const, allowHostCommands: true, policy: resolvePolicy("local", { other: "deny" }), protectedWritesAllowed: new Set<string>() };
  const call = { id: "c1", name: "bash", args: { command: "make" } };
  const at = { messageId: "m1", index: 0 };
  const grant = grantKey(at, callHash("bash", { command: "make" }), "local");
  assert.equal(verdictFor(call, {}, o, at).mode, "ask");
  assert.deepEqual([verdictFor(call, { granted: [grant] }, o, at).mode, verdictFor(call, { granted: [grant] }, o, at).grant], ["auto", grant]);
  assert.equal(verdictFor(call, { granted: [grant], consumed: new Set([grant]) }, o, at).mode, "ask", "a used grant is spent");
  assert.equal(verdictFor(call, { granted: [grant] }, o, { messageId: "m2", index: 0 }).mode, "ask", "the same id in another message");
  assert.equal(verdictFor(call, { granted: [grant] }, o, { messageId: "m1", index: 1 }).mode, "ask", "another call of the message");
  assert.equal(verdictFor({ ...call, args: { command: "make; curl evil" } }, { granted: [grant] }, o, at).mode, "ask", "other arguments");
  assert.equal(verdictFor(call, { granted: [grantKey(at, callHash("bash", { command: "make" }), "devcontainer")] }, o, at).mode, "ask", "a yes for the dev container");
  assert.equal(verdictFor(call, { granted: [grant] }, o).mode, "ask", "no position, no grant");
  const rule = { tool: "bash", class: "shell" as const, sandbox: "local" as const, prefix: "make" };
  assert.equal(verdictFor({ ...call, id: "c2" }, { rules: [rule] }, o).mode, "auto");
  assert.equal(verdictFor({ ...call, args: { command: "echo PWNED" } }, { rules: [rule] }, o).mode, "ask", "a prefix covers only its commands");
  assert.equal(verdictFor(call, { rules: [{ ...rule, sandbox: "devcontainer" }] }, o).mode, "ask", "a rule of the dev container on the host");
  assert.equal(verdictFor({ id: "c3", name: "mcp_x", args: {} }, { rules: [{ tool: "mcp_x", class: "other", sandbox: "local" }] }, o).mode, "deny");
});

test("unanswered calls: the last AI message's calls without a result, only when results alone follow it", () => {
  const ai = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "bash", args: {} }, { id: "b", name: "ls", args: {} }] });
  const answered = new ToolMessage({ content: "no", tool_call_id: "a", name: "bash" });
  assert.deepEqual(unansweredCalls([new HumanMessage("hi"), ai]).map((c) => c.id), ["a", "b"]);
  assert.deepEqual(unansweredCalls([ai, answered]).map((c) => c.id), ["b"]);
  assert.deepEqual(unansweredCalls([ai, answered, new HumanMessage("next")]), [], "a new message: nothing resumes");
});

test("decisions: every pending call exactly once, within the shared limits; rejections become results, approvals grants of the paused call", () => {
  const pending = [
    { tool_call_id: "a", name: "bash", args: { command: "npm test" }, class: "shell" as const, reason: "r", message_id: "m1", index: 0, fingerprint: "h0", sandbox: "local" as const,
      always_allow: { rule: { tool: "bash", class: "shell" as const, sandbox: "local" as const, prefix: "npm test" }, label: "l" } },
    { tool_call_id: "b", name: "write_file", args: {}, class: "protected" as const, reason: "r", message_id: "m1", index: 1, fingerprint: "h1", sandbox: "local" as const },
  ];
  assert.throws(() => checkDecisions(pending, [{ tool_call_id: "a", decision: "approve" }]), /undecided: b \(write_file\)/);
  assert.throws(() => checkDecisions(pending, [{ tool_call_id: "a", decision: "approve" }, { tool_call_id: "a", decision: "reject" }, { tool_call_id: "b", decision: "reject" }]), /decided twice/);
  assert.throws(() => checkDecisions([], []), /no tool calls waiting/);
  const long = "x".repeat(DECISION_LIMITS.maxReasonChars + 1);
  assert.throws(() => checkDecisions(pending, [{ tool_call_id: "a", decision: "approve" }, { tool_call_id: "b", decision: "reject", reason: long }]), /at most 2000/);
  const r = resumeInput(pending, [{ tool_call_id: "a", decision: "approve", always_allow: true }, { tool_call_id: "b", decision: "reject", reason: " no " }], ["ls"]);
  assert.deepEqual(r.resume, { granted: [grantKey({ messageId: "m1", index: 0 }, "h0", "local")] });
  assert.deepEqual(r.input.approval_always_allow, [pending[0]!.always_allow!.rule], "the card's rule; the legacy name is dropped");
  assert.equal(r.input.messages.length, 1);
  assert.equal(r.input.messages[0]!.content, "Rejected by the user: no");
  assert.equal(r.input.messages[0]!.tool_call_id, "b");
  assert.equal(r.input.pending_approvals, null);
  // "Always allow" on a card that offers none (a protected write) gives no rule.
  const p2 = resumeInput(pending, [{ tool_call_id: "a", decision: "reject" }, { tool_call_id: "b", decision: "approve", always_allow: true }], []);
  assert.deepEqual(p2.input.approval_always_allow, []);
});

test("decisions on a legacy batch: calls sharing an id take one decision and are asked again; a card without a fingerprint grants nothing", () => {
  const legacy = [
    { tool_call_id: "dup", name: "bash", args: { command: "echo 1" }, class: "shell" as const, reason: "r" },
    { tool_call_id: "dup", name: "bash", args: { command: "echo 2" }, class: "shell" as const, reason: "r" },
    { tool_call_id: "old", name: "bash", args: { command: "echo 3" }, class: "shell" as const, reason: "r" },
  ];
  assert.deepEqual(decideAll(legacy, "approve").map((d) => d.tool_call_id), ["dup", "old"]);
  const r = resumeInput(legacy, decideAll(legacy, "approve"), []);
  assert.deepEqual(r.resume.granted, []);
  const n = resumeInput(legacy, decideAll(legacy, "reject"), []);
  assert.deepEqual(n.input.messages.map((m) => m.tool_call_id), ["old"], "a no for a shared id answers neither call");
});

test("a continued turn is never looser than the paused run: per class the stricter mode, except the classes the decider names", () => {
  const paused = resolvePolicy("local", { write: "ask", mcp: "deny" });
  const current = resolvePolicy("devcontainer", { web: "deny" }); // shell=auto in a container, write=auto, mcp=ask
  const kept = continuedPolicy(paused, current);
  assert.equal(kept.write, "ask", "ask beats auto");
  assert.equal(kept.mcp, "deny", "deny beats ask");
  assert.equal(kept.shell, "ask", "the host's shell=ask holds for a turn that paused on the host");
  assert.equal(kept.web, "deny", "the continuation's own stricter mode holds too");
  assert.equal(kept.read, "auto");
  const named = continuedPolicy(paused, resolvePolicy("local", { write: "auto" }), { write: "auto" });
  assert.equal(named.write, "auto", "approve --approval write=auto is the operator's word");
  assert.equal(named.mcp, "deny", "unnamed classes still inherit");
  assert.deepEqual(continuedPolicy({}, current), current, "a pause recorded before policies were kept changes nothing");
});

test("a stored policy is read back entry by entry: anything malformed is dropped, never loosened into", () => {
  assert.deepEqual(storedPolicy({ write: "ask", shell: "sometimes", bogus: "deny", read: 1 }), { write: "ask" });
  assert.equal(storedPolicy("write=ask"), undefined);
  assert.equal(storedPolicy(null), undefined);
  assert.equal(storedPolicy([]), undefined);
});
