// The panel's side of "Changed files" (issue 13) through the real harness process over JSON-RPC:
// a run's `end` carries changed_files, `changes/list` the shas and host paths, `changes/before`
// the left side of a diff, `changes/revert` one path then the rest, with a refusal for a file the
// user edited since. The scripted model server is the only fake.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { sandboxDirs } from "./helpers/cli.js";
import { errorOf, settings, startHarness } from "./helpers/server.js";

let model: ModelServer;
before(async () => {
  model = await startModelServer();
});
after(async () => {
  await model.close();
});

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const W = "/mnt/user-data/workspace";

test("changes/list, changes/before and changes/revert over RPC; end.changed_files in the journal", async () => {
  const { workspace, dataDir } = sandboxDirs();
  writeFileSync(join(workspace, "a.txt"), "alpha\n");
  writeFileSync(join(workspace, "b.txt"), "beta\n");
  const h = startHarness();
  try {
    await h.request("harness/initialize", { dataDir, settings: settings(model.url) });
    model.setScript([
      { toolCalls: [{ name: "read_file", args: { description: "a", path: `${W}/a.txt` } }, { name: "read_file", args: { description: "b", path: `${W}/b.txt` } }] },
      {
        toolCalls: [
          { name: "write_file", args: { description: "a", path: `${W}/a.txt`, content: "ALPHA\n" } },
          { name: "str_replace", args: { description: "b", path: `${W}/b.txt`, old_str: "beta", new_str: "BETA" } },
          { name: "write_file", args: { description: "c", path: `${W}/c.txt`, content: "gamma\n" } },
        ],
      },
      { content: "Done." },
    ]);
    const { thread_id: threadId } = await h.request("threads/create", { workspaceFolder: workspace });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId, afterSeq: 0 });
    const { run_id: runId } = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt: "edit" });
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === runId);
    assert.equal(end.event === "end" && end.data.status, "success");
    assert.deepEqual(end.event === "end" && end.data.changed_files, [
      { path: `${W}/a.txt`, status: "modified" },
      { path: `${W}/b.txt`, status: "modified" },
      { path: `${W}/c.txt`, status: "added" },
    ]);

    const listed = await h.request("changes/list", { workspaceFolder: workspace, runId });
    assert.deepEqual(
      listed.map((c) => [c.path, c.status, c.before_sha256, c.after_sha256, c.host_path]),
      [
        [`${W}/a.txt`, "modified", sha("alpha\n"), sha("ALPHA\n"), join(workspace, "a.txt")],
        [`${W}/b.txt`, "modified", sha("beta\n"), sha("BETA\n"), join(workspace, "b.txt")],
        [`${W}/c.txt`, "added", null, sha("gamma\n"), join(workspace, "c.txt")],
      ],
    );
    const beforeA = await h.request("changes/before", { workspaceFolder: workspace, runId, path: `${W}/a.txt` });
    assert.deepEqual(beforeA, { path: `${W}/a.txt`, exists: true, base64: Buffer.from("alpha\n").toString("base64") });
    assert.deepEqual(await h.request("changes/before", { workspaceFolder: workspace, runId, path: `${W}/c.txt` }), { path: `${W}/c.txt`, exists: false, base64: null });
    assert.equal((await errorOf(h.request("changes/before", { workspaceFolder: workspace, runId, path: `${W}/zzz.txt` }))).data?.code, "usage");
    assert.equal((await errorOf(h.request("changes/list", { workspaceFolder: workspace, runId: "nope" }))).data?.code, "run_not_found");
    assert.equal((await errorOf(h.raw("changes/before", { workspaceFolder: workspace, runId, path: "a.txt" }))).data?.code, "invalid_params");

    // Revert one file, then the user edits another, then Revert All.
    const one = await h.request("changes/revert", { workspaceFolder: workspace, runId, paths: [`${W}/a.txt`] });
    assert.deepEqual(one.files, [{ path: `${W}/a.txt`, outcome: "reverted" }]);
    assert.equal(readFileSync(join(workspace, "a.txt"), "utf8"), "alpha\n");
    writeFileSync(join(workspace, "b.txt"), "BETA and mine\n");
    const all = await h.request("changes/revert", { workspaceFolder: workspace, runId });
    assert.deepEqual(
      all.files.map((f) => [f.path, f.outcome, f.code]),
      [
        [`${W}/a.txt`, "unchanged", undefined],
        [`${W}/b.txt`, "refused", "changed_since"],
        [`${W}/c.txt`, "reverted", undefined],
      ],
    );
    assert.match(all.files[1]!.reason!, /changed after the run; revert refused so your later edits are kept/);
    assert.equal(readFileSync(join(workspace, "b.txt"), "utf8"), "BETA and mine\n");
    assert.equal(existsSync(join(workspace, "c.txt")), false);
  } finally {
    await h.close();
  }
});
