// Issue 21 item 4 through the real CLI: nothing the model shapes stalls the harness. A scripted
// model (the only fake) sends the glob and grep patterns that used to freeze the event loop, over
// real files; each run ends (by itself, by --timeout, or by a cancel from another process) and the
// model gets a result it can act on. Waits are on events (stdout lines, exits), never on timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, spawnCli, useModelServer, type Dirs } from "./helpers/cli.js";

const server = useModelServer();
const W = "/mnt/user-data/workspace";
const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const runArgs = (d: Dirs, thread: string, extra: string[] = []) =>
  ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--prompt", "search", "--thread", thread, ...extra];
// A guard for a regression (the old matcher never returned): the test fails instead of hanging CI.
const GUARD = { timeout: 120_000 };

function toolResults(req: RecordedRequest | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of req?.body?.messages ?? []) if (m.role === "tool") out.set(String(m.tool_call_id), textOf(m));
  return out;
}

const call = (id: string, name: string, args: Record<string, unknown>): ScriptedReply => ({
  toolCalls: [{ id, name, args: { description: "search", ...args } }],
});

/** Long names made of `a`s (and one ending in `b`), at the top and two folders down. */
function longNames(root: string): void {
  mkdirSync(join(root, "deep", "er"), { recursive: true });
  for (let i = 0; i < 30; i += 1) writeFileSync(join(root, i % 2 ? "deep/er" : "", `${"a".repeat(200)}${i}a`), "x\n");
  writeFileSync(join(root, `${"a".repeat(200)}b`), "x\n");
}

test("a pathological glob over long names is answered at once, inside a --timeout 10 run that goes on", GUARD, async () => {
  const d = sandboxDirs();
  longNames(d.workspace);
  server.setScript([
    call("g1", "glob", { pattern: "*a*a*a*a*a*a*a*a*b", path: W }),
    call("g2", "glob", { pattern: "**/*a*a*a*a*a*a*a*a*a", path: W }),
    call("g3", "glob", { pattern: `${"*a".repeat(17)}`, path: W }),
    call("g4", "grep", { pattern: "x", path: W, glob: Array.from({ length: 9 }, (_, i) => `**/d${i}`).join("/") }),
    { content: "Searched." },
  ]);
  const first = server.requests.length;
  const r = await runCli(runArgs(d, "glob-stall", ["--timeout", "10"]));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.at(-1)!.data.status, "success");
  const results = toolResults(server.requests.at(-1));
  assert.equal(server.requests.length - first, 5);
  assert.equal(results.get("g1"), `Found 1 paths under ${W}\n1. ${W}/${"a".repeat(200)}b`);
  assert.match(results.get("g2")!, new RegExp(`^Found 30 paths under ${W}\n`));
  assert.ok(results.get("g2")!.includes(`${W}/deep/er/${"a".repeat(200)}1a`));
  assert.equal(
    results.get("g3"),
    "Error: Invalid glob pattern: the pattern has 17 '*' and 0 '**' wildcards; at most 16 '*' and 8 '**' are allowed. " +
      "Use fewer wildcards, for example `**/*.py` or `src/**/test_*.py`.",
  );
  assert.match(results.get("g4")!, /^Error: Invalid glob filter: the pattern has 0 '\*' and 9 '\*\*' wildcards/);
});

test("a catastrophic grep pattern ends with an error result the model can act on; the next grep works", GUARD, async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "as.txt"), `${"a".repeat(40)}\n`.repeat(5));
  server.setScript([
    call("r1", "grep", { pattern: "(a+)+b", path: W }),
    call("r2", "grep", { pattern: "(a+)+b", path: W, literal: true }),
    call("r3", "grep", { pattern: "a{40}", path: `${W}/as.txt`, max_results: 2 }),
    { content: "Done." },
  ]);
  const r = await runCli(runArgs(d, "grep-deadline"));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.at(-1)!.data.status, "success");
  const results = toolResults(server.requests.at(-1));
  assert.match(results.get("r1")!, /^Error: Regex search stopped: the pattern took longer than 3 seconds on one batch of files and was stopped\. /);
  assert.match(results.get("r1")!, /set literal=true for a plain string, or narrow path or glob\.$/);
  assert.equal(results.get("r2"), `No matches found under ${W}`);
  assert.match(results.get("r3")!, new RegExp(`^Found 2 matches under ${W}/as\\.txt \\(showing first 2\\)\n${W}/as\\.txt:1: a{40}`.replace("a{40}", "a".repeat(40))));
});

/** A model that never stops sending catastrophic greps (each a new pattern, so no loop guard steps in). */
const endlessGreps = (_req: RecordedRequest, i: number): ScriptedReply => call(`e${i}`, "grep", { pattern: `(a+)+b${i}`, path: W });

test("--timeout ends a run whose tools keep running catastrophic patterns; the CLI exits", GUARD, async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "as.txt"), `${"a".repeat(40)}\n`);
  server.setScript(endlessGreps);
  const r = await runCli(runArgs(d, "grep-timeout", ["--timeout", "5"]));
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.lines.at(-1)!.event, "end");
  assert.equal(r.lines.at(-1)!.data.status, "timeout");
  assert.equal(r.lines.at(-1)!.data.error, "Run timed out after 5 s.");
});

test("a cancel from another process ends a run during a catastrophic grep: the harness's loop kept its lease and heard it", GUARD, async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "as.txt"), `${"a".repeat(40)}\n`);
  server.setScript(endlessGreps);
  const p = spawnCli(runArgs(d, "grep-cancel"));
  const runId = (await p.waitFor((l) => l.event === "metadata")).run_id as string;
  // The first grep call is in the journal: its tool is running (or about to) when the cancel lands.
  await p.waitFor((l) => l.event === "updates" && JSON.stringify(l.data).includes('"name":"grep"'));
  const c = await runCli(["cancel", ...base(d), "--run", runId]);
  assert.equal(c.code, 0, c.stderr);
  const r = await p.done;
  assert.equal(r.lines.at(-1)!.event, "end");
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
});
