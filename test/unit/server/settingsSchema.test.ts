import { test } from "node:test";
import assert from "node:assert/strict";
import { HarnessSettingsZ } from "../../../extension/harness/server/schemas.js";

const base = { models: [], sandbox: { provider: "local", allow_host_commands: false }, workspace_trusted: true };

test("the editor's approval settings: every class the settings offer is accepted (mcp and web too), an unknown one refused", () => {
  // package.json's deerflow.approval.* (host/settings.ts TOOL_CLASSES): a user's mcp or web value must not break harness/configure.
  const all = { read: "auto", write: "ask", protected: "ask", shell: "deny", mcp: "ask", web: "deny", other: "ask" };
  assert.deepEqual(HarnessSettingsZ.parse({ ...base, approval: all }).approval, all);
  assert.equal(HarnessSettingsZ.safeParse({ ...base, approval: { browser: "auto" } }).success, false);
  assert.equal(HarnessSettingsZ.safeParse({ ...base, approval: { mcp: "sometimes" } }).success, false);
});
