// Token chunks without a row each (issue 12): a burst of tokens becomes a few `messages` events,
// and mid-run the journal still holds exactly the text streamed so far, so a reload (a replay
// with `events`) rebuilds the partial answer exactly; at the end replay equals the live stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, sandboxDirs, spawnCli, useModelServer } from "./helpers/cli.js";
import { splitWords } from "../fixtures/modelServer.js";

const server = useModelServer();
const WORDS = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
const textOf = (lines: Array<Record<string, any>>, runId: string) =>
  lines.filter((l) => l.event === "messages" && l.run_id === runId).flatMap((l) => l.data as Array<{ content: string }>).map((c) => c.content).join("");

test("a burst of 300 tokens is journaled as a few messages events, in order, with the whole text", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: WORDS }]);
  const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", "burst"]);
  assert.equal(r.code, 0, r.stderr);
  const runId = r.lines[0]!.run_id as string;
  const chunkEvents = r.lines.filter((l) => l.event === "messages");
  assert.ok(chunkEvents.length < splitWords(WORDS).length / 3, `${chunkEvents.length} messages events for ${splitWords(WORDS).length} tokens`);
  assert.equal(textOf(r.lines, runId), WORDS);
});

test("mid-run, a replay of the journal rebuilds exactly the partial answer streamed so far", async () => {
  const d = sandboxDirs();
  const held = 40; // the role chunk, then 39 words
  server.setScript([{ content: WORDS, gate: { afterChunks: held, until: "mid-answer" }, chunkDelayMs: 1 }]);
  const base = ["--workspace", d.workspace, "--data-dir", d.dataDir];
  const live = spawnCli(["run", ...base, "--base-url", server.url, "--model", "scripted", "--thread", "partial", "--prompt", "hold on"]);
  const runId = (await live.waitFor((l) => l.event === "metadata")).run_id as string;
  await server.waitForGate("mid-answer");
  const sent = splitWords(WORDS).slice(0, held - 1).join("");
  // The coalescer hands the held words to the journal within its flush window; the CLI prints
  // each event as it is journaled, so the last sent word on stdout means it is stored.
  const lastWord = `w${held - 2} `;
  await live.waitFor((l) => l.event === "messages" && (l.data as Array<{ content: string }>).some((c) => c.content.includes(lastWord.trim())));
  const replay = await runCli(["events", ...base, "--thread", "partial"]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(textOf(replay.lines, runId), sent, "the journal holds exactly what was streamed, no more, no less");
  server.gate("mid-answer").open();
  const done = await live.done;
  assert.equal(done.code, 0, done.stderr);
  const after = await runCli(["events", ...base, "--thread", "partial"]);
  const strip = (l: Record<string, any>) => ({ seq: l.seq, event: l.event, data: l.data });
  assert.deepEqual(after.lines.map(strip), done.lines.map(strip), "replay equals the live stream");
  assert.equal(textOf(after.lines, runId), WORDS);
});
