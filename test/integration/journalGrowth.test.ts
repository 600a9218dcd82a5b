// Updates carry deltas (issue 12): over a 30-turn thread through the CLI with the real chain, no
// `updates` or `values` event grows with the thread's length. langchain's middleware nodes return
// the whole state, so before the fix every before_agent update re-sent the history.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runCli, sandboxDirs, useModelServer } from "./helpers/cli.js";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";

const server = useModelServer();
const TURNS = 30;
const ANSWER = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

test("over 30 turns, no updates or values event grows with the thread, each turn's messages are journaled once, and one checkpoint per run remains", async () => {
  const d = sandboxDirs();
  for (let turn = 1; turn <= TURNS; turn++) mkdirSync(join(d.workspace, `part${turn}`));
  const largest: Array<{ updates: number; values: number }> = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    server.setScript([
      // A different call each turn: the same one every turn is a loop (LoopDetection counts per thread).
      { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: `/mnt/user-data/workspace/part${turn}` } }] },
      { content: ANSWER },
    ]);
    const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--base-url", server.url, "--model", "scripted", "--thread", "long", "--prompt", "next step please"]);
    assert.equal(r.code, 0, r.stderr);
    const size = (event: string) => Math.max(...r.lines.filter((l) => l.event === event).map((l) => JSON.stringify(l.data).length));
    largest.push({ updates: size("updates"), values: size("values") });

    // Each message of this turn is in exactly one update: the prompt (__start__), the two AI
    // messages (model_request) and the tool result (tools).
    const carried = r.lines
      .filter((l) => l.event === "updates")
      .flatMap((l) => Object.entries(l.data as Record<string, { messages?: Array<{ type: string }> }>))
      .flatMap(([node, u]) => (u?.messages ?? []).map((m) => `${node}:${m.type}`));
    assert.deepEqual(carried.sort(), ["__start__:human", "model_request:ai", "model_request:ai", "tools:tool"], `turn ${turn}`);
  }
  // One checkpoint per finished run, chained run to run (the intermediate ones were compacted),
  // and the state still holds every message.
  const [key] = readdirSync(join(d.dataDir, "workspaces"));
  const db = storageDriver().open(join(d.dataDir, "workspaces", key!, "harness.db"));
  try {
    const rows = db.prepare<[], { checkpoint_id: string; parent_checkpoint_id: string | null }>(
      "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = 'long' ORDER BY checkpoint_id",
    ).all();
    assert.equal(rows.length, TURNS);
    rows.forEach((r, i) => assert.equal(r.parent_checkpoint_id, i === 0 ? null : rows[i - 1]!.checkpoint_id));
  } finally {
    db.close();
  }
  const state = await runCli(["state", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", "long"]);
  assert.equal((state.lines[0]!.messages as unknown[]).length, TURNS * 4);

  const early = largest.slice(0, 10);
  const late = largest.slice(-10);
  for (const key of ["updates", "values"] as const) {
    const before = Math.max(...early.map((x) => x[key]));
    const after = Math.max(...late.map((x) => x[key]));
    // A few bytes of slack: ids and counters get a digit longer, nothing grows per message.
    assert.ok(after <= before + 16, `${key}: the largest event grew from ${before} to ${after} bytes (${JSON.stringify(largest.map((x) => x[key]))})`);
  }
});
