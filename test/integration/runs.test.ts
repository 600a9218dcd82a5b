// Runs that nothing can lose, through the real CLI: admission, multitask, idempotency, cancel,
// kill -9 recovery, and the journal's replay contract. Waits are on events (stdout lines, the
// model server's gates and requests, process exit), never on timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runCli, sandboxDirs, spawnCli, useModelServer, waitForFile } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const runArgs = (d: Dirs, prompt: string, extra: string[] = []) => ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--prompt", prompt, ...extra];

async function cli(args: string[]) {
  const r = await runCli(args);
  return { ...r, json: r.lines };
}

function assertGapFree(seqs: number[]) {
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), `seq must be 1..n without gaps: ${seqs.join(",")}`);
}

/** The first line of a run printed by the CLI gives its run_id. */
const firstRunId = async (p: ReturnType<typeof spawnCli>) => (await p.waitFor((l) => l.event === "metadata")).run_id as string;

test("every `run` stdout line carries its seq; replay from every seq equals the live stream", async () => {
  const d = sandboxDirs();
  server.setScript([
    { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
    { content: "All done here." },
  ]);
  const live = await cli(runArgs(d, "first"));
  assert.equal(live.code, 0, live.stderr);
  server.setScript([{ content: "Second turn." }]);
  const live2 = await cli(runArgs(d, "second", ["--thread", live.lines.at(-1)!.data.thread_id]));
  assert.equal(live2.code, 0, live2.stderr);
  const threadId = live.lines.at(-1)!.data.thread_id as string;
  const all = [...live.lines, ...live2.lines];
  for (const l of all) assert.equal(typeof l.seq, "number");
  assertGapFree(all.map((l) => l.seq));
  const strip = (l: Record<string, any>) => ({ seq: l.seq, event: l.event, run_id: l.run_id, data: l.data });
  for (let k = 0; k <= all.length; k++) {
    const replay = await cli(["events", ...base(d), "--thread", threadId, "--after", String(k)]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.deepEqual(replay.lines.map(strip), all.slice(k).map(strip), `replay after seq ${k}`);
  }
});

test("two concurrent runs on one thread: the second is refused as busy while the first completes", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "slow answer", gate: { afterChunks: 2, until: "busy-hold" } }]);
  const first = spawnCli(runArgs(d, "one", ["--thread", "busy-thread"]));
  await server.waitForGate("busy-hold");
  const second = await cli(runArgs(d, "two", ["--thread", "busy-thread"]));
  assert.equal(second.code, 1);
  assert.match(second.stderr, /Thread busy-thread is busy: run [0-9a-f-]+ is running/);
  assert.equal(second.stdout, "");
  server.gate("busy-hold").open();
  const r = await first.done;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.at(-1)!.data.status, "success");
  const runs = await cli(["runs", ...base(d), "--thread", "busy-thread"]);
  assert.deepEqual(runs.lines.map((l) => l.status), ["success"], "the refused run left no record");
});

test("the same idempotency key returns the same run, never a second execution", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "only once" }]);
  const before = server.requests.length;
  const a = await cli(runArgs(d, "do it", ["--thread", "idem", "--idempotency-key", "key-1"]));
  const b = await cli(runArgs(d, "do it", ["--thread", "idem", "--idempotency-key", "key-1"]));
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(server.requests.length - before, 1, "the model ran once");
  assert.equal(a.lines.at(-1)!.run_id, b.lines.at(-1)!.run_id);
  assert.deepEqual(b.lines.map((l) => l.seq), a.lines.map((l) => l.seq), "the second call replays the first run");
  const runs = await cli(["runs", ...base(d), "--thread", "idem"]);
  assert.equal(runs.lines.length, 1);
});

test("multitask interrupt: the active run is interrupted, then the new one runs", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "never finished", gate: { afterChunks: 2, until: "mt-hold" } }, { content: "the newer run" }]);
  const first = spawnCli(runArgs(d, "one", ["--thread", "mt"]));
  await server.waitForGate("mt-hold");
  const second = await cli(runArgs(d, "two", ["--thread", "mt", "--multitask", "interrupt"]));
  const r1 = await first.done;
  server.gate("mt-hold").open();
  assert.equal(second.code, 0, second.stderr);
  assert.equal(r1.code, 1);
  assert.equal(r1.lines.at(-1)!.data.status, "interrupted");
  const runs = await cli(["runs", ...base(d), "--thread", "mt"]);
  assert.deepEqual(runs.lines.map((l) => l.status), ["success", "interrupted"]);
  const events = await cli(["events", ...base(d), "--thread", "mt"]);
  assertGapFree(events.lines.map((l) => l.seq));
  const endIdx = events.lines.findIndex((l) => l.event === "end" && l.run_id === r1.lines[0]!.run_id);
  const secondStart = events.lines.findIndex((l) => l.event === "metadata" && l.run_id === second.lines[0]!.run_id);
  assert.ok(endIdx >= 0 && endIdx < secondStart, "the old run ended before the new one started");
});

test("cancel during a model call aborts the request and ends the run interrupted; cancel is idempotent", async () => {
  const d = sandboxDirs();
  server.setScript([{ hang: true }]);
  const first = server.requests.length;
  const p = spawnCli(runArgs(d, "hang", ["--thread", "cancel-model"]));
  const runId = await firstRunId(p);
  await server.waitForRequests(first + 1);
  const c = await cli(["cancel", ...base(d), "--run", runId]);
  assert.equal(c.code, 0, c.stderr);
  assert.deepEqual(c.lines[0], { run_id: runId, outcome: "cancelled", status: "interrupted", thread_id: "cancel-model" });
  const r = await p.done;
  assert.equal(r.code, 1);
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
  const [req] = (await server.waitForRequests(first + 1, { settled: true })).slice(first);
  assert.equal(req!.clientAborted, true, "the model request was aborted");
  const again = await cli(["cancel", ...base(d), "--run", runId]);
  assert.equal(again.lines[0]!.outcome, "cancelled");
  const missing = await cli(["cancel", ...base(d), "--run", "no-such-run"]);
  assert.equal(missing.code, 1);
  assert.equal(missing.lines[0]!.outcome, "not_found");
  server.setScript([{ content: "fine" }]);
  const next = await cli(runArgs(d, "again", ["--thread", "cancel-model"]));
  assert.equal(next.code, 0, next.stderr);
  const done = await cli(["cancel", ...base(d), "--run", next.lines[0]!.run_id]);
  assert.equal(done.lines[0]!.outcome, "already_finished");
  assert.equal(done.code, 1);
});

test("cancel during a long sandbox command kills it and ends the run interrupted", async () => {
  const d = sandboxDirs();
  const pidFile = "/mnt/user-data/workspace/sleeper.pid";
  server.setScript([
    { toolCalls: [{ name: "bash", args: { description: "long", command: `echo $$ > ${pidFile}; exec sleep 300` } }] },
    { content: "should not be reached" },
  ]);
  const p = spawnCli(runArgs(d, "sleep", ["--thread", "cancel-tool", "--allow-host-commands", "--approval", "shell=auto"]));
  const runId = await firstRunId(p);
  await p.waitFor((l) => l.event === "updates" && JSON.stringify(l.data).includes("exec sleep 300"));
  // The tool has started once its pid file exists; wait for that file through the workspace.
  const pid = Number((await waitForFile(join(d.workspace, "sleeper.pid"))).trim());
  const c = await cli(["cancel", ...base(d), "--run", runId]);
  assert.equal(c.lines[0]!.outcome, "cancelled");
  const r = await p.done;
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
  assert.throws(() => process.kill(pid, 0), /ESRCH/, "the sandbox command was killed");
});

for (const when of ["model call", "tool"] as const) {
  test(`kill -9 during a ${when}: the run is marked interrupted, the journal stays gap-free, the thread continues`, async () => {
    const d = sandboxDirs();
    const thread = when === "tool" ? "kill-tool" : "kill-model";
    server.setScript(
      when === "tool"
        ? [{ toolCalls: [{ name: "bash", args: { description: "long", command: "sleep 300" } }] }]
        : [{ content: "partial answer that never ends", gate: { afterChunks: 3, until: `kill-${thread}` } }],
    );
    const p = spawnCli(runArgs(d, "work", ["--thread", thread, "--allow-host-commands", "--approval", "shell=auto"]));
    const runId = await firstRunId(p);
    if (when === "tool") await p.waitFor((l) => l.event === "updates" && JSON.stringify(l.data).includes("sleep 300"));
    else await p.waitFor((l) => l.event === "messages" && String(l.data[0]?.content ?? "").length > 0);
    p.child.kill("SIGKILL");
    const killed = await p.done;
    assert.equal(killed.signal, "SIGKILL");
    server.gate(`kill-${thread}`).open();

    // The next harness start finds the owner provably gone.
    const runs = await cli(["runs", ...base(d), "--thread", thread]);
    assert.equal(runs.lines[0]!.run_id, runId);
    assert.equal(runs.lines[0]!.status, "interrupted");
    assert.match(runs.lines[0]!.error, /stopped before it finished/);
    const events = await cli(["events", ...base(d), "--thread", thread]);
    assertGapFree(events.lines.map((l) => l.seq));
    assert.equal(events.lines.at(-1)!.event, "end");
    assert.equal(events.lines.at(-1)!.data.status, "interrupted");
    const printed = killed.lines.map((l) => l.seq);
    assert.deepEqual(events.lines.slice(0, printed.length).map((l) => l.seq), printed, "everything printed before the kill is journaled");

    server.setScript([{ content: "Resumed fine." }]);
    const next = await cli(runArgs(d, "continue", ["--thread", thread]));
    assert.equal(next.code, 0, `${next.stderr}${JSON.stringify(next.lines.at(-1))}`);
    assert.equal(next.lines.at(-1)!.data.status, "success");
  });
}

test("a run that writes outputs but presents none is reported, not silently passed", async () => {
  const d = sandboxDirs();
  server.setScript([
    { toolCalls: [{ name: "write_file", args: { description: "r", path: "/mnt/user-data/outputs/report.md", content: "# R" } }] },
    { content: "Wrote it." },
  ]);
  const r = await cli(runArgs(d, "write"));
  assert.equal(r.code, 1);
  const receipt = r.lines.find((l) => l.event === "custom" && l.data.type === "run.delivery");
  assert.deepEqual(receipt!.data.produced_paths, ["/mnt/user-data/outputs/report.md"]);
  assert.equal(receipt!.data.stage, "not_started");
  assert.equal(receipt!.data.presented, 0);
  assert.equal(receipt!.data.satisfied, false);
  assert.equal(r.lines.at(-1)!.data.status, "error");
  assert.equal(r.lines.at(-1)!.data.error, "Artifact delivery incomplete: no produced output artifact was presented");
});

test("secrets never reach the database or the journal", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "ok" }]);
  const r = await cli([...runArgs(d, "my token is sk-abcdefghijklmnopqrstuvwx please"), "--api-key", "sk-live-SECRET-KEY-123456"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.requests.at(-1)!.headers.authorization, "Bearer sk-live-SECRET-KEY-123456");
  const dbDir = join(d.dataDir, "workspaces");
  for (const k of readdirSync(dbDir)) {
    for (const f of readdirSync(join(dbDir, k))) {
      const bytes = readFileSync(join(dbDir, k, f));
      assert.ok(!bytes.includes(Buffer.from("sk-live-SECRET-KEY-123456")), `${f} holds the API key`);
    }
  }
  const events = await cli(["events", ...base(d), "--thread", r.lines[0]!.thread_id]);
  assert.ok(!events.stdout.includes("SECRET-KEY"));
});
