// Delivery receipts through the real CLI (DeerFlow test_run_worker_delivery.py): a run counts what
// present_files returned in THIS run — a re-presented path included — and every ending (success,
// error, cancel, timeout) journals exactly one `run.delivery` receipt before its `end`.
// Waits are on events (stdout lines, the model server's requests, process exit), never on timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, sandboxDirs, spawnCli, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const runArgs = (d: Dirs, prompt: string, extra: string[] = []) => ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--prompt", prompt, ...extra];
const REPORT = "/mnt/user-data/outputs/report.md";

type Line = Record<string, any>;

/** The run's single receipt, checked to come before its `end` (the last line). */
function receiptOf(lines: Line[]): Record<string, any> {
  const receipts = lines.filter((l) => l.event === "custom" && l.data?.type === "run.delivery");
  assert.equal(receipts.length, 1, "exactly one receipt per run");
  assert.equal(lines.at(-1)!.event, "end");
  assert.ok(receipts[0]!.seq < lines.at(-1)!.seq, "the receipt is journaled before the end");
  return receipts[0]!.data;
}

const writeAndPresent = (content: string) => [
  { toolCalls: [{ name: "write_file", args: { description: "w", path: REPORT, content } }] },
  { toolCalls: [{ name: "present_files", args: { filepaths: [REPORT] } }] },
  { content: "Here it is." },
];

test("a second run that rewrites and re-presents outputs/report.md succeeds: this run's present_files results count", async () => {
  const d = sandboxDirs();
  server.setScript(writeAndPresent("# First"));
  const first = await runCli(runArgs(d, "write the report", ["--thread", "re-present"]));
  assert.equal(first.code, 0, first.stderr);
  const r1 = receiptOf(first.lines);
  assert.deepEqual({ presented: r1.presented, paths: r1.paths, by_tool: r1.by_tool }, { presented: 1, paths: [REPORT], by_tool: { present_files: [REPORT] } });

  // The second run reads the report first (the read-before-write gate), rewrites it, presents it again.
  server.setScript([
    { toolCalls: [{ name: "read_file", args: { description: "r", path: REPORT } }] },
    ...writeAndPresent("# Second, updated"),
  ]);
  const second = await runCli(runArgs(d, "update the report", ["--thread", "re-present"]));
  assert.equal(second.code, 0, `${second.stderr}${JSON.stringify(second.lines.at(-1))}`);
  assert.equal(second.lines.at(-1)!.data.status, "success");
  const r2 = receiptOf(second.lines);
  assert.equal(r2.presented, 1);
  assert.deepEqual(r2.paths, [REPORT]);
  assert.deepEqual(r2.by_tool, { present_files: [REPORT] });
  assert.deepEqual(r2.produced_paths, [REPORT]);
  assert.deepEqual(r2.matched_paths, [REPORT]);
  assert.equal(r2.stage, "presented");
  assert.equal(r2.satisfied, true);
});

test("a run that produced nothing gets the empty receipt", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "Nothing to write." }]);
  const r = await runCli(runArgs(d, "hello"));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(receiptOf(r.lines), { type: "run.delivery", presented: 0, paths: [], by_tool: {} });
});

test("a run that fails at the model still journals its receipt, with what it presented before failing", async () => {
  const d = sandboxDirs();
  server.setScript([...writeAndPresent("# Partial").slice(0, 2), { error: { status: 400 } }]);
  const r = await runCli(runArgs(d, "fail late"));
  assert.equal(r.code, 1);
  assert.notEqual(r.lines.at(-1)!.data.status, "success");
  const receipt = receiptOf(r.lines);
  assert.equal(receipt.presented, 1);
  assert.deepEqual(receipt.by_tool, { present_files: [REPORT] });
});

test("a cancelled run journals its receipt before its end", async () => {
  const d = sandboxDirs();
  server.setScript([{ hang: true }]);
  const before = server.requests.length;
  const p = spawnCli(runArgs(d, "hang", ["--thread", "cancel-receipt"]));
  const runId = (await p.waitFor((l) => l.event === "metadata")).run_id as string;
  await server.waitForRequests(before + 1);
  const c = await runCli(["cancel", ...base(d), "--run", runId]);
  assert.equal(c.code, 0, c.stderr);
  const r = await p.done;
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
  assert.deepEqual(receiptOf(r.lines), { type: "run.delivery", presented: 0, paths: [], by_tool: {} });
});

test("a run that times out journals its receipt before its end", async () => {
  const d = sandboxDirs();
  server.setScript([{ hang: true }]);
  const r = await runCli(runArgs(d, "hang", ["--timeout", "0.5"]));
  assert.equal(r.code, 1);
  assert.equal(r.lines.at(-1)!.data.status, "timeout");
  assert.deepEqual(receiptOf(r.lines), { type: "run.delivery", presented: 0, paths: [], by_tool: {} });
});
