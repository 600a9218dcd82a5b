// Token chunks coalesce at the source: merged chunks apply exactly as the originals would, the
// batch leaves before any other event, and a failing delivery surfaces in the run's loop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChunkCoalescer } from "../../../extension/harness/runs/chunkCoalescer.js";
import type { WireMessageChunk } from "../../../extension/protocol/events.js";
import { applyChunk } from "../../../webview/model/messages.js";
import { emptyThread } from "../../../webview/model/emptyThread.js";

const ai = (id: string, content: string, extra: Partial<WireMessageChunk> = {}): WireMessageChunk => ({ type: "ai", id, content, node: "model_request", ...extra });

function collect(flushMs = 1_000_000, maxChars = 1_000_000) {
  const out: WireMessageChunk[][] = [];
  return { out, c: new ChunkCoalescer((batch) => out.push(batch), flushMs, maxChars) };
}

test("consecutive chunks of one message merge into one chunk; another message starts a new entry", () => {
  const { out, c } = collect();
  for (const w of ["Hel", "lo ", "world"]) c.push(ai("m1", w));
  c.push(ai("m2", "next"));
  c.push({ type: "tool", id: "t1", content: "result", tool_call_id: "call_1" });
  c.flush();
  assert.equal(out.length, 1);
  assert.deepEqual(out[0], [ai("m1", "Hello world"), ai("m2", "next"), { type: "tool", id: "t1", content: "result", tool_call_id: "call_1" }]);
  c.flush();
  assert.equal(out.length, 1, "an empty flush delivers nothing");
});

test("tool-call fragments of the same index join; other indexes and unindexed fragments keep their order", () => {
  const chunks: WireMessageChunk[] = [
    ai("m", "", { tool_call_chunks: [{ index: 0, id: "call_a", name: "ls", args: '{"pa' }] }),
    ai("m", "", { tool_call_chunks: [{ index: 0, args: 'th":"/"}' }] }),
    ai("m", "", { tool_call_chunks: [{ index: 1, id: "call_b", name: "glob", args: "{" }] }),
    ai("m", "", { tool_call_chunks: [{ args: "}" }] }),
  ];
  const { out, c } = collect();
  for (const ch of chunks) c.push(ch);
  c.flush();
  assert.deepEqual(out[0]![0]!.tool_call_chunks, [
    { index: 0, id: "call_a", name: "ls", args: '{"path":"/"}' },
    { index: 1, id: "call_b", name: "glob", args: "{" },
    { args: "}" },
  ]);
  // The panel's reducer builds the same message from the merged chunk as from the originals.
  const one = chunks.reduce((t, ch) => applyChunk(t, ch), emptyThread("t"));
  const merged = out[0]!.reduce((t, ch) => applyChunk(t, ch), emptyThread("t"));
  assert.deepEqual(merged.messages, one.messages);
});

test("a batch leaves when it reaches its size, and when its time is up", async () => {
  const { out, c } = collect(1_000_000, 10);
  c.push(ai("m", "12345"));
  assert.equal(out.length, 0);
  c.push(ai("m", "67890"));
  assert.equal(out.length, 1, "10 characters: flushed at once");
  const timed = new ChunkCoalescer((batch) => delivered(batch), 1);
  let delivered!: (b: WireMessageChunk[]) => void;
  const arrived = new Promise<WireMessageChunk[]>((r) => (delivered = r));
  timed.push(ai("m", "held briefly"));
  assert.deepEqual(await arrived, [ai("m", "held briefly")]);
});

test("a delivery that fails in the timer is raised on the next call, in the run's loop", async () => {
  let fail = true;
  let attempted!: () => void;
  const tried = new Promise<void>((r) => (attempted = r));
  const c = new ChunkCoalescer(() => {
    attempted();
    if (fail) throw new Error("journal is gone");
  }, 1);
  c.push(ai("m", "x"));
  await tried;
  fail = false;
  assert.throws(() => c.push(ai("m", "y")), /journal is gone/);
});
