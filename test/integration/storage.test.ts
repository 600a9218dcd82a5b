// Storage on every runtime (issue 9): the two SQLite drivers share one database file across
// processes, and a runtime with no working driver fails with what to do, never a stack trace.
// This file runs on both tiers: on Node 20 this process uses better-sqlite3 and "the other
// runtime" is Node 24 (node:sqlite); on Node 24 the other way round.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli, sandboxDirs, spawnCli, useModelServer } from "./helpers/cli.js";
import type { CliRuntime, Dirs } from "./helpers/cli.js";
import { SERVER, settings, startHarness } from "./helpers/server.js";
import { otherRuntime } from "./helpers/runtimes.js";
import { nodeSqliteAvailable, storageDriver } from "../../extension/harness/store/sqlite/open.js";

const server = useModelServer();
const hasNodeSqlite = nodeSqliteAvailable();

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const runArgs = (d: Dirs, prompt: string, extra: string[] = []) => ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--prompt", prompt, ...extra];

/** A copy of one built bundle alone in a temp folder: no node_modules, so no better-sqlite3. */
function alone(bundle: string): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-alone-"));
  const copy = join(dir, bundle.split("/").at(-1)!);
  copyFileSync(bundle, copy);
  return copy;
}

test("a run started on one runtime is followed, cancelled and continued from the other, on one database file", async () => {
  const other: CliRuntime = { node: otherRuntime().node };
  const d = sandboxDirs();
  server.setScript([{ hang: true }]);
  const first = server.requests.length;
  const running = spawnCli(runArgs(d, "started elsewhere", ["--thread", "cross"]), {}, other);
  const runId = (await running.waitFor((l) => l.event === "metadata")).run_id as string;
  await server.waitForRequests(first + 1);

  // This runtime's driver reads what the other one is writing, live (WAL across drivers).
  const runs = await runCli(["runs", ...base(d), "--thread", "cross"]);
  assert.equal(runs.code, 0, runs.stderr);
  assert.deepEqual(runs.lines.map((r) => [r.run_id, r.status]), [[runId, "running"]]);
  const cancel = await runCli(["cancel", ...base(d), "--run", runId]);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.equal(cancel.lines[0]!.outcome, "cancelled");
  const ended = await running.done;
  assert.equal(ended.lines.at(-1)!.data.status, "interrupted", ended.stderr);

  // Continued here; the other runtime then reads the whole, gap-free journal and the state.
  server.setScript([{ content: "Continued on the second runtime." }]);
  const next = await runCli(runArgs(d, "and here", ["--thread", "cross"]));
  assert.equal(next.code, 0, next.stderr);
  const events = await runCli(["events", ...base(d), "--thread", "cross"], {}, other);
  assert.equal(events.code, 0, events.stderr);
  const seqs = events.lines.map((l) => l.seq as number);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  assert.deepEqual(events.lines.filter((l) => l.event === "end").map((l) => l.data.status), ["interrupted", "success"]);
  const state = await runCli(["state", ...base(d), "--thread", "cross"], {}, other);
  assert.equal(state.code, 0, state.stderr);
  const messages = state.lines[0]!.messages as Array<{ type: string; content: unknown }>;
  assert.deepEqual(messages.filter((m) => m.type === "human").map((m) => m.content), ["started elsewhere", "and here"]);
  assert.equal(messages.at(-1)!.content, "Continued on the second runtime.");
});

test("the CLI without node_modules: node:sqlite where the runtime has it, else exit 1 saying what to do", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "No native module needed." }]);
  const before = server.requests.length;
  const r = await runCli(runArgs(d, "hello"), {}, { script: alone(CLI) });
  if (hasNodeSqlite) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.lines.at(-1)!.data.status, "success");
    assert.equal(r.stderr, "", "node:sqlite loads without a warning on stderr");
  } else {
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^deerflow: Cannot open the harness database: no SQLite driver works on Node 20\.\d+\.\d+/);
    assert.match(r.stderr, /better-sqlite3: Cannot find module 'better-sqlite3'/);
    assert.match(r.stderr, /node:sqlite: node:sqlite is not available in Node 20\.\d+\.\d+ \(it needs Node 22\.13 or later\)/);
    assert.match(r.stderr, /What to do: run DeerFlow on Node 22\.13 or later/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    assert.equal(server.requests.length, before, "nothing ran");
  }
});

test("the harness process logs its storage driver once, and without a driver its initialize fails saying what to do", async () => {
  const normal = startHarness();
  try {
    await normal.request("harness/initialize", { dataDir: sandboxDirs().dataDir, settings: settings(server.url) });
    const logs = normal.notes.filter((n) => n.method === "log/message" && /^storage: /.test(n.params.message as string));
    assert.equal(logs.length, 1);
    assert.match(logs[0]!.params.message as string, new RegExp(`^storage: ${storageDriver().name} on Node ${process.versions.node.replaceAll(".", "\\.")}`));
  } finally {
    await normal.close();
  }

  const h = startHarness({}, alone(SERVER));
  try {
    const init = h.request("harness/initialize", { dataDir: sandboxDirs().dataDir, settings: settings(server.url) });
    if (hasNodeSqlite) {
      await init;
      const log = h.notes.find((n) => n.method === "log/message" && /^storage: /.test(n.params.message as string));
      assert.match(log?.params.message as string, /^storage: node:sqlite on Node \S+ \(better-sqlite3 did not load: Cannot find module 'better-sqlite3'/);
    } else {
      await assert.rejects(init, (err: Error) => /no SQLite driver works on Node 20[\s\S]*What to do/.test(err.message));
    }
  } finally {
    await h.close();
  }
});
