// Issue 22: denied tools are not offered to the model, and a call with no name or to an unknown
// tool gets DeerFlow's error result (never a card).
import { test } from "node:test";
import assert from "node:assert/strict";
import { invalidToolText, malformedCallResult, permittedTools } from "../../../extension/harness/approvals/toolNames.js";
import { resolvePolicy } from "../../../extension/harness/approvals/policy.js";
import { EMPTY_NAME_RESULT } from "../../../extension/harness/middlewares/danglingToolCall.js";

const tools = ["ls", "read_file", "write_file", "str_replace", "bash", "present_files", "mcp_x"].map((name) => ({ name }));

test("permittedTools: a tool whose class the policy denies is not offered; the others keep their order", () => {
  const names = (p: Parameters<typeof resolvePolicy>[1]) => permittedTools(tools, resolvePolicy("local", p)).offered.map((t) => t.name);
  assert.deepEqual(names({}), tools.map((t) => t.name));
  assert.deepEqual(names({ shell: "deny" }), ["ls", "read_file", "write_file", "str_replace", "present_files", "mcp_x"]);
  assert.deepEqual(names({ write: "deny", other: "deny" }), ["ls", "read_file", "bash", "present_files"]);
  assert.deepEqual(names({ protected: "deny" }), tools.map((t) => t.name), "protected narrows writes by path: the write tools stay");
  const r = permittedTools([...tools, { type: "web_search" }], resolvePolicy("local", { shell: "deny" }));
  assert.ok(r.offered.some((t) => (t as { type?: string }).type === "web_search"), "a provider tool without a name is kept");
  assert.ok(r.names.registered.has("bash") && !r.names.offered.includes("bash"));
});

test("malformed calls: DeerFlow's texts, as error results naming the call", () => {
  const names = { registered: new Set(["ls", "bash"]), offered: ["ls"] };
  const empty = malformedCallResult({ id: "c1", name: "" }, false, names)!;
  assert.equal(empty.content, EMPTY_NAME_RESULT);
  assert.equal(empty.status, "error");
  assert.equal(empty.tool_call_id, "c1");
  assert.equal(malformedCallResult({ id: "c2", name: "  " }, false, undefined)?.content, EMPTY_NAME_RESULT);
  const unknown = malformedCallResult({ id: "c3", name: "rm_rf" }, false, names)!;
  assert.equal(unknown.content, "Error: rm_rf is not a valid tool, try one of [ls].");
  assert.equal(invalidToolText("x", ["a", "b"]), "Error: x is not a valid tool, try one of [a, b].");
  assert.equal(malformedCallResult({ id: "c4", name: "bash" }, true, names), undefined);
  assert.equal(malformedCallResult({ id: "c5", name: "rm_rf" }, false, undefined), undefined, "no request seen: left to the tool node");
});
