// Updates carry deltas (issue 12): over a 30-turn thread through the CLI with the real chain, no
// `updates` or `values` event grows with the thread's length. langchain's middleware nodes return
// the whole state, so before the fix every before_agent update re-sent the history.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, sandboxDirs, useModelServer } from "./helpers/cli.js";

const server = useModelServer();
const TURNS = 30;
const ANSWER = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

test("over 30 turns, no updates or values event grows with the thread, and each turn's input and answer are journaled once", async () => {
  const d = sandboxDirs();
  const largest: Array<{ updates: number; values: number }> = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    server.setScript([
      { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
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
  const early = largest.slice(0, 10);
  const late = largest.slice(-10);
  for (const key of ["updates", "values"] as const) {
    const before = Math.max(...early.map((x) => x[key]));
    const after = Math.max(...late.map((x) => x[key]));
    // A few bytes of slack: ids and counters get a digit longer, nothing grows per message.
    assert.ok(after <= before + 16, `${key}: the largest event grew from ${before} to ${after} bytes (${JSON.stringify(largest.map((x) => x[key]))})`);
  }
});
