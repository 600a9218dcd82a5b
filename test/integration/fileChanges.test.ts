// Issue 13, "Changed files, reviewable and revertible", through the real CLI with the scripted
// model server as the only fake: a run edits a file and adds one through the file tools; its `end`
// lists them, `deerflow changes` gives their shas, `deerflow revert` puts them back. A file edited
// after the run is refused (and kept) while the other reverts; a link planted after the run does
// not carry a revert out of the workspace; a revert waits for the thread's active run; delete
// leaves no row and no before-content behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";
import type { ScriptedReply } from "../fixtures/modelServer.js";
import { runCli, sandboxDirs, spawnCli, tempDir, useModelServer, type Dirs } from "./helpers/cli.js";

const server = useModelServer();

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const W = "/mnt/user-data/workspace";
const BEFORE = "one\ntwo\n";
const AFTER = "one\nTWO\n";
const ADDED = "hello\n";

function runArgs(d: Dirs, threadId: string, prompt: string): string[] {
  return ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--thread", threadId, "--prompt", prompt];
}

/** Reads existing.txt, then edits it and adds sub/new.txt in one parallel batch. */
const editAndAdd: ScriptedReply[] = [
  { toolCalls: [{ name: "read_file", args: { description: "look", path: `${W}/existing.txt` } }] },
  {
    toolCalls: [
      { name: "str_replace", args: { description: "shout", path: `${W}/existing.txt`, old_str: "two", new_str: "TWO" } },
      { name: "write_file", args: { description: "add", path: `${W}/sub/new.txt`, content: ADDED } },
    ],
  },
  { content: "Done." },
];

/** A workspace with existing.txt, and one finished run that edited it and added sub/new.txt. */
async function runThatEdits(threadId = "changes-thread"): Promise<{ d: Dirs; runId: string; end: Record<string, any> }> {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "existing.txt"), BEFORE);
  server.setScript(editAndAdd);
  const r = await runCli(runArgs(d, threadId, "edit please"));
  assert.equal(r.code, 0, r.stderr);
  const end = r.lines.at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.data.status, "success", JSON.stringify(end.data));
  assert.equal(readFileSync(join(d.workspace, "existing.txt"), "utf8"), AFTER);
  assert.equal(readFileSync(join(d.workspace, "sub", "new.txt"), "utf8"), ADDED);
  return { d, runId: end.run_id as string, end };
}

const changes = (d: Dirs, runId: string) => runCli(["changes", ...base(d), "--run", runId]);
const revert = (d: Dirs, runId: string, extra: string[] = []) => runCli(["revert", ...base(d), "--run", runId, ...extra]);

test("a run's edited and added files: listed in its end and by `changes` with their shas, and `revert` restores both", async () => {
  const { d, runId, end } = await runThatEdits();
  assert.deepEqual(end.data.changed_files, [
    { path: `${W}/existing.txt`, status: "modified" },
    { path: `${W}/sub/new.txt`, status: "added" },
  ]);

  const listed = await changes(d, runId);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    listed.lines.map((l) => ({ path: l.path, status: l.status, before_sha256: l.before_sha256, after_sha256: l.after_sha256 })),
    [
      { path: `${W}/existing.txt`, status: "modified", before_sha256: sha(BEFORE), after_sha256: sha(AFTER) },
      { path: `${W}/sub/new.txt`, status: "added", before_sha256: null, after_sha256: sha(ADDED) },
    ],
  );
  assert.equal(listed.lines[0]!.host_path, join(d.workspace, "existing.txt"));

  const r = await revert(d, runId);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.lines.map((l) => [l.path, l.outcome]), [[`${W}/existing.txt`, "reverted"], [`${W}/sub/new.txt`, "reverted"]]);
  assert.equal(readFileSync(join(d.workspace, "existing.txt"), "utf8"), BEFORE);
  assert.equal(existsSync(join(d.workspace, "sub", "new.txt")), false);

  // Again: nothing left to do, and nothing is refused.
  const again = await revert(d, runId);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.lines.map((l) => l.outcome), ["unchanged", "unchanged"]);
  const after = await changes(d, runId);
  assert.ok(after.lines.every((l) => typeof l.reverted_at === "string"));

  const unknown = await changes(d, "no-such-run");
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No run no-such-run/);
  const usage = await runCli(["revert", ...base(d)]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--run ID is required/);
});

test("revert refuses a file edited after the run, says why and keeps it, and still reverts the other (exit 1)", async () => {
  const { d, runId } = await runThatEdits();
  const mine = "one\nTWO\nmy own line\n";
  writeFileSync(join(d.workspace, "existing.txt"), mine);

  const r = await revert(d, runId);

  assert.equal(r.code, 1);
  const byPath = Object.fromEntries(r.lines.map((l) => [l.path, l]));
  assert.equal(byPath[`${W}/existing.txt`]!.outcome, "refused");
  assert.equal(byPath[`${W}/existing.txt`]!.code, "changed_since");
  assert.match(r.stderr, /existing\.txt: changed after the run; revert refused so your later edits are kept/);
  assert.equal(readFileSync(join(d.workspace, "existing.txt"), "utf8"), mine);
  assert.equal(byPath[`${W}/sub/new.txt`]!.outcome, "reverted");
  assert.equal(existsSync(join(d.workspace, "sub", "new.txt")), false);

  // --path picks files; one the run did not change is refused by name.
  const picked = await revert(d, runId, ["--path", `${W}/nope.txt`]);
  assert.equal(picked.code, 1);
  assert.deepEqual(picked.lines.map((l) => [l.path, l.outcome, l.code]), [[`${W}/nope.txt`, "refused", "not_in_run"]]);
});

test("a link planted after the run does not carry a revert outside the workspace", async () => {
  const { d, runId } = await runThatEdits();
  const outside = tempDir("outside");
  // The edited file becomes a link to a file outside holding exactly what the run left; the added
  // file's folder becomes a link to a folder outside holding the added content.
  writeFileSync(join(outside, "existing.txt"), AFTER);
  rmSync(join(d.workspace, "existing.txt"));
  symlinkSync(join(outside, "existing.txt"), join(d.workspace, "existing.txt"));
  mkdirSync(join(outside, "sub"));
  writeFileSync(join(outside, "sub", "new.txt"), ADDED);
  renameSync(join(d.workspace, "sub"), join(d.workspace, "sub-moved"));
  symlinkSync(join(outside, "sub"), join(d.workspace, "sub"));

  const r = await revert(d, runId);

  assert.equal(r.code, 1);
  assert.deepEqual(r.lines.map((l) => [l.path, l.outcome, l.code]), [
    [`${W}/existing.txt`, "refused", "path_denied"],
    [`${W}/sub/new.txt`, "refused", "path_denied"],
  ]);
  assert.equal(readFileSync(join(outside, "existing.txt"), "utf8"), AFTER);
  assert.equal(readFileSync(join(outside, "sub", "new.txt"), "utf8"), ADDED);
  assert.doesNotMatch(r.stdout + r.stderr, new RegExp(outside));
});

test("revert follows no link inside the workspace either, and never writes through a second hard link", async () => {
  const { d, runId } = await runThatEdits();
  const ws = d.workspace;
  // The added file's folder becomes a link to another folder of the workspace holding a file
  // with the very content the run added: a revert that followed it would delete that stranger.
  mkdirSync(join(ws, "decoy"));
  writeFileSync(join(ws, "decoy", "new.txt"), ADDED);
  renameSync(join(ws, "sub"), join(ws, "sub-moved"));
  symlinkSync("decoy", join(ws, "sub"));
  // The edited file gets a second name inside .git: writing the before-content through it would
  // rewrite that hook too (same inode), which no path check can see.
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  linkSync(join(ws, "existing.txt"), join(ws, ".git", "hooks", "pre-commit"));

  const r = await revert(d, runId);

  assert.equal(r.code, 1);
  const byPath = Object.fromEntries(r.lines.map((l) => [l.path, l]));
  assert.equal(byPath[`${W}/existing.txt`]!.outcome, "refused");
  assert.equal(byPath[`${W}/existing.txt`]!.code, "path_denied");
  assert.match(byPath[`${W}/existing.txt`]!.reason, /more than one hard link/);
  assert.equal(byPath[`${W}/sub/new.txt`]!.outcome, "refused");
  assert.match(byPath[`${W}/sub/new.txt`]!.reason, /link/);
  assert.equal(readFileSync(join(ws, "decoy", "new.txt"), "utf8"), ADDED, "the file the link leads to is kept");
  assert.equal(readFileSync(join(ws, ".git", "hooks", "pre-commit"), "utf8"), AFTER, "the hook's bytes are untouched");
  assert.equal(readFileSync(join(ws, "existing.txt"), "utf8"), AFTER);

  // Once the links are gone, the same revert goes through.
  rmSync(join(ws, ".git", "hooks", "pre-commit"));
  rmSync(join(ws, "sub"));
  renameSync(join(ws, "sub-moved"), join(ws, "sub"));
  const again = await revert(d, runId);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.lines.map((l) => [l.path, l.outcome]), [[`${W}/existing.txt`, "reverted"], [`${W}/sub/new.txt`, "reverted"]]);
  assert.equal(readFileSync(join(ws, "existing.txt"), "utf8"), BEFORE);
  assert.equal(existsSync(join(ws, "sub", "new.txt")), false);
});

test("revert is refused while a run of the thread is active, and changes nothing", async () => {
  const { d, runId } = await runThatEdits("busy-changes");
  server.setScript([{ content: "a slow answer", gate: { afterChunks: 2, until: "revert-hold" } }]);
  const active = spawnCli(runArgs(d, "busy-changes", "second"));
  await server.waitForGate("revert-hold");

  const refused = await revert(d, runId);

  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /Thread busy-changes is busy: run [0-9a-f-]+ is running/);
  assert.equal(readFileSync(join(d.workspace, "existing.txt"), "utf8"), AFTER);
  server.gate("revert-hold").open();
  const done = await active.done;
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(done.lines.at(-1)!.data.changed_files, []);
  const r = await revert(d, runId);
  assert.equal(r.code, 0, r.stderr);
});

test("delete removes the thread's change rows and the before-content no other thread needs", async () => {
  const { d, runId } = await runThatEdits("doomed-changes");
  const file = join(d.dataDir, "workspaces", readdirSync(join(d.dataDir, "workspaces"))[0]!, "harness.db");
  const look = () => {
    const db = storageDriver().open(file);
    try {
      return {
        rows: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM run_file_changes").get()!.n,
        before: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM blobs WHERE sha256 = ?").get(sha(BEFORE))!.n,
      };
    } finally {
      db.close();
    }
  };
  assert.deepEqual(look(), { rows: 2, before: 1 });

  const r = await runCli(["delete", ...base(d), "--thread", "doomed-changes"]);

  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(look(), { rows: 0, before: 0 });
  assert.equal(readFileSync(join(d.dataDir, "workspaces", readdirSync(join(d.dataDir, "workspaces"))[0]!, "harness.db")).includes(Buffer.from(runId)), false);
  // The workspace files are the user's: deleting the thread does not revert them.
  assert.equal(readFileSync(join(d.workspace, "existing.txt"), "utf8"), AFTER);
});
