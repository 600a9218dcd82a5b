// changes/tracker.ts and changes/revert.ts on a real database and real folders, for what the CLI
// tests cannot script: a file bash removed after a tool wrote it (settle records "deleted", revert
// recreates it), a protected path the run wrote (reverted only with the user's explicit consent),
// a write that never finished, a write the boundary refused (no change), and a first write's
// before-content kept across later writes.
import { describe, it, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWorkspaceStore, type WorkspaceStore } from "../../../extension/harness/store/db.js";
import { createRunStore, type RunStore } from "../../../extension/harness/store/runs.js";
import { changedFiles } from "../../../extension/harness/store/fileChanges.js";
import { HostFiles } from "../../../extension/harness/sandbox/files.js";
import type { ThreadDirs } from "../../../extension/harness/threads/threadDirs.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { TrackedFiles } from "../../../extension/harness/changes/tracker.js";
import { revertRun } from "../../../extension/harness/changes/revert.js";
import { listChanges } from "../../../extension/harness/changes/view.js";
import { HarnessError } from "../../../extension/harness/errors.js";

const W = "/mnt/user-data/workspace";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

let dir: string;
let workspace: string;
let store: WorkspaceStore;
let runs: RunStore;
let dirs: ThreadDirs;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "deerflow-changes-"));
  workspace = join(dir, "workspace");
  mkdirSync(workspace);
  store = openWorkspaceStore({ dataDir: join(dir, "data"), workspaceFolder: workspace });
  runs = createRunStore(store.db);
  store.threads.create({ threadId: "t1", workspaceFolder: store.workspaceFolder });
  dirs = ensureThreadDirs(store.workspaceFolder, "t1");
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function startedRun(runId: string): TrackedFiles {
  runs.insertPending({ run_id: runId, thread_id: "t1", multitask_strategy: "reject", model: "m", input: {}, context: {} });
  return new TrackedFiles(new HostFiles(dirs), { store: store.fileChanges, dirs, runId });
}

function ended(runId: string): void {
  runs.finish(runId, ["pending", "running"], "success");
  runs.markEnded(runId);
}

const file = (name: string) => join(store.workspaceFolder, name);

describe("TrackedFiles", () => {
  it("keeps the first write's before-content; settle sees what bash did after; revert recreates a deleted file", async () => {
    writeFileSync(file("kept.txt"), "v0\n");
    writeFileSync(file("gone.txt"), "old\n");
    const files = startedRun("r1");
    await files.writeFile(`${W}/kept.txt`, "v1\n");
    await files.writeFile(`${W}/kept.txt`, "v2\n", true);
    await files.replaceInFile(`${W}/gone.txt`, "old", "new", false);
    // Recorded after each write, before the run ends.
    assert.deepEqual(changedFiles(store.fileChanges, "r1"), [
      { path: `${W}/gone.txt`, status: "modified" },
      { path: `${W}/kept.txt`, status: "modified" },
    ]);
    rmSync(file("gone.txt")); // what a bash command might do

    assert.deepEqual(await files.settle(), [
      { path: `${W}/gone.txt`, status: "deleted" },
      { path: `${W}/kept.txt`, status: "modified" },
    ]);
    ended("r1");
    const listed = listChanges(store, runs, "r1");
    assert.deepEqual(listed.map((c) => [c.path, c.before_sha256, c.after_sha256]), [
      [`${W}/gone.txt`, sha("old\n"), null],
      [`${W}/kept.txt`, sha("v0\n"), sha("v1\nv2\n")],
    ]);

    const result = revertRun(store, runs, { runId: "r1" });
    assert.deepEqual(result.files.map((f) => f.outcome), ["reverted", "reverted"]);
    assert.equal(readFileSync(file("gone.txt"), "utf8"), "old\n");
    assert.equal(readFileSync(file("kept.txt"), "utf8"), "v0\n");
  });

  it("a write the trust boundary refuses records no change", async () => {
    const files = startedRun("r2");
    await assert.rejects(files.writeFile(`${W}/.git/hooks/pre-commit`, "evil"), (err: unknown) => err instanceof HarnessError && err.code === "path_protected");
    await assert.rejects(files.writeFile(`${W}/../escape.txt`, "x"));
    assert.deepEqual(await files.settle(), []);
    assert.equal(existsSync(file(".git/hooks/pre-commit")), false);
  });

  it("a protected path the run wrote with approval reverts only with allowProtected", () => {
    mkdirSync(file(".vscode"));
    writeFileSync(file(".vscode/settings.json"), '{"a":1}\n');
    // What the tracker records for a protected write the user approved (the approval middleware's
    // write itself is tested with it): the rule, the before-content, the after-state.
    startedRun("r3");
    const key = { threadId: "t1", runId: "r3", path: `${W}/.vscode/settings.json` };
    store.fileChanges.recordBefore(key, Buffer.from("{}\n"), "vscode");
    store.fileChanges.recordAfter(key, sha('{"a":1}\n'));
    ended("r3");
    assert.equal(listChanges(store, runs, "r3")[0]!.protected_rule, "vscode");

    const refused = revertRun(store, runs, { runId: "r3" });
    assert.equal(refused.files[0]!.outcome, "refused");
    assert.equal(refused.files[0]!.code, "protected");
    assert.match(refused.files[0]!.reason!, /--allow-protected/);
    assert.equal(readFileSync(file(".vscode/settings.json"), "utf8"), '{"a":1}\n');

    const done = revertRun(store, runs, { runId: "r3", allowProtected: true });
    assert.equal(done.files[0]!.outcome, "reverted");
    assert.equal(readFileSync(file(".vscode/settings.json"), "utf8"), "{}\n");
  });

  it("a path that became protected since the run is refused even with allowProtected", async () => {
    const files = startedRun("r4");
    await files.writeFile(`${W}/cfg/x.json`, "1\n");
    await files.settle();
    ended("r4");
    rmSync(file("cfg"), { recursive: true });
    mkdirSync(file(".git"));
    writeFileSync(file(".git/x.json"), "1\n");
    symlinkSync(file(".git"), file("cfg"));
    const r = revertRun(store, runs, { runId: "r4", allowProtected: true });
    assert.equal(r.files[0]!.code, "protected");
    assert.equal(readFileSync(file(".git/x.json"), "utf8"), "1\n");
  });

  it("a write whose after-state was never recorded is refused; a busy thread refuses the whole revert", () => {
    store.fileChanges.recordBefore({ threadId: "t1", runId: "r5", path: `${W}/half.txt` }, null, null);
    runs.insertPending({ run_id: "r5", thread_id: "t1", multitask_strategy: "reject", model: "m", input: {}, context: {} });
    assert.throws(() => revertRun(store, runs, { runId: "r5" }), (err: unknown) => err instanceof HarnessError && err.code === "thread_busy");
    ended("r5");
    const r = revertRun(store, runs, { runId: "r5" });
    assert.deepEqual(r.files.map((f) => [f.outcome, f.code]), [["refused", "after_unknown"]]);
    assert.throws(() => revertRun(store, runs, { runId: "nope" }), (err: unknown) => err instanceof HarnessError && err.code === "run_not_found");
  });
});
