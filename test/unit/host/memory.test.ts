// The host side of memory without VS Code: the panel's memory line (host/memoryChange.ts) and the memory editor's scope and promote lenses (host/memoryLenses.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { describeMemoryChange } from "../../../extension/host/memoryChange.js";
import type { HarnessToHost } from "../../../extension/protocol/rpc.js";

const notice: HarnessToHost["memory/changed"] = { workspaceFolder: "/w", threadId: "t1", added: 0, removed: 0, sections: [], dropped: 0, facts: 0 };

test("counts what changed, says from which thread, and that it stays in this workspace", () => {
  assert.equal(describeMemoryChange({ ...notice, added: 1 }, "t1"), "Memory updated from this thread: 1 fact learnt. Kept for this workspace only.");
  assert.equal(
    describeMemoryChange({ ...notice, added: 2, sections: ["user.workContext"], removed: 1, dropped: 3 }, "t2"),
    "Memory updated from another thread: 2 facts learnt, 1 summary updated, 1 fact removed, 3 entries not stored (read as an instruction or permission). Kept for this workspace only.",
  );
});

test("the memory editor's lenses: each fact's scope, promotion for a workspace's facts and sections", async () => {
  const { memoryLenses, promoteTargetOf } = await import("../../../extension/host/memoryLenses.js");
  const doc = {
    version: "1.0",
    lastUpdated: "",
    user: { workContext: { summary: "", updatedAt: "" } },
    history: {},
    facts: [
      { id: "fact_g", content: "Global.", scope: "global" },
      { id: "fact_a", content: "Alpha.", scope: "workspace", workspace: "/work/alpha" },
    ],
    workspaces: { "/work/alpha": { user: { workContext: { summary: "Alpha engineer.", updatedAt: "x" }, topOfMind: { summary: "", updatedAt: "" } }, history: {} } },
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const lines = text.split("\n");
  const lenses = memoryLenses(text);
  assert.deepEqual(
    lenses.map((l) => [lines[l.line]!.trim(), l.title, l.promote]),
    [
      ['"id": "fact_g",', "Given to every workspace", undefined],
      ['"id": "fact_a",', "Only in alpha", undefined],
      ['"id": "fact_a",', "Promote to all workspaces", { factId: "fact_a" }],
      ['"workContext": {', "Only in alpha · Promote to all workspaces", { workspace: "/work/alpha", section: "user.workContext" }],
    ],
  );
  assert.ok(lines[lenses[3]!.line - 1]!.includes('"user": {') && lines[lenses[3]!.line - 2]!.includes('"/work/alpha": {'), "the workspace's own section, not the global one");
  assert.deepEqual(memoryLenses("{ not json"), []);
  assert.deepEqual(promoteTargetOf({ factId: "f" }), { factId: "f" });
  assert.equal(promoteTargetOf({ workspace: "/w", section: "user.nope" }), undefined);
  assert.equal(promoteTargetOf("fact"), undefined);
});
