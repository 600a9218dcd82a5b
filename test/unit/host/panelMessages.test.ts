// The host's boundary with the webview: every message is parsed before anything acts on it, and
// a virtual path from the panel never resolves outside the workspace folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseWebviewMessage } from "../../../extension/host/panel/messages.js";
import { existingHostPathOf, hostPathOf } from "../../../extension/host/panel/paths.js";

test("well-formed panel messages parse", () => {
  for (const m of [
    { type: "ready" },
    { type: "ready", threadId: "t1", lastSeq: 42 },
    { type: "send", text: "hello" },
    { type: "openArtifact", path: "/mnt/user-data/outputs/report.md" },
    { type: "requestImage", sha256: "a".repeat(64) },
    { type: "setPlanMode", enabled: true },
    { type: "continueRun" },
    { type: "setSkillEnabled", name: "brand-guidelines", enabled: false },
    { type: "openSkill", name: "brand-guidelines" },
    { type: "refreshSkills" },
    { type: "refreshMcp" },
    { type: "approveMcp", server: "everything" },
    { type: "showMcpLog", server: "everything" },
  ]) {
    assert.deepEqual(parseWebviewMessage(m), { ok: true, message: m });
  }
});

test("malformed or unknown panel messages are refused with a readable reason", () => {
  for (const [m, why] of [
    [null, /\(no type\)/],
    [{ type: "runShell", command: "rm -rf /" }, /"runShell"/],
    [{ type: "send" }, /text/],
    [{ type: "send", text: "" }, /text/],
    [{ type: "ready", lastSeq: -1 }, /lastSeq/],
    [{ type: "openArtifact", path: "/etc/passwd" }, /path/],
    [{ type: "requestImage", sha256: "../../x" }, /sha256/],
    [{ type: "removeAttachment", index: 1.5 }, /index/],
    [{ type: "setSkillEnabled", name: "x" }, /enabled/],
    [{ type: "openSkill", name: "" }, /name/],
    [{ type: "approveMcp" }, /server/],
    [{ type: "showMcpLog", server: "" }, /server/],
  ] as const) {
    const r = parseWebviewMessage(m);
    assert.equal(r.ok, false, JSON.stringify(m));
    if (!r.ok) assert.match(r.error, why);
  }
});

test("virtual paths map onto the folder and the thread's .deerflow directories", () => {
  const folder = "/ws/project";
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/workspace/src/a.ts"), "/ws/project/src/a.ts");
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/outputs/r.md"), "/ws/project/.deerflow/threads/t1/outputs/r.md");
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/uploads/in.pdf"), "/ws/project/.deerflow/threads/t1/uploads/in.pdf");
});

test("traversal, other areas and bad thread ids map nowhere", () => {
  const folder = "/ws/project";
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/workspace/../../etc/passwd"), undefined);
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/outputs/../../../../../x"), undefined);
  assert.equal(hostPathOf(folder, "t1", "/mnt/user-data/secrets/x"), undefined);
  assert.equal(hostPathOf(folder, "../t1", "/mnt/user-data/outputs/x"), undefined);
  assert.equal(hostPathOf(folder, "t1", "/etc/passwd"), undefined);
});

test("a symlink in the outputs that points outside the folder is not opened", async () => {
  const root = mkdtempSync(join(tmpdir(), "deerflow-host-paths-"));
  const folder = join(root, "ws");
  const outputs = join(folder, ".deerflow", "threads", "t1", "outputs");
  mkdirSync(outputs, { recursive: true });
  writeFileSync(join(root, "secret.txt"), "outside");
  writeFileSync(join(outputs, "ok.md"), "inside");
  symlinkSync(join(root, "secret.txt"), join(outputs, "escape.md"));
  assert.equal(await existingHostPathOf(folder, "t1", "/mnt/user-data/outputs/ok.md"), join(outputs, "ok.md"));
  assert.equal(await existingHostPathOf(folder, "t1", "/mnt/user-data/outputs/escape.md"), undefined);
  assert.equal(await existingHostPathOf(folder, "t1", "/mnt/user-data/outputs/missing.md"), undefined);
});
