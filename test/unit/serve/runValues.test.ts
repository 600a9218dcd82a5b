// `values` events without the history in the journal (runs/valuesDelta.ts), folded back into the
// full state for `deerflow serve`'s SSE (serve/runValues.ts, serve/stream.ts): every step's list
// comes back exactly (appends, a message replaced by id, a summarization that drops the history),
// and a stream that did not ask for `values` never reads a checkpoint. Real SQLite, a real
// checkpointer (ours), real LangChain messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { emptyCheckpoint, type CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { SSEStreamingApi } from "hono/streaming";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createRunStore } from "../../../extension/harness/store/runs.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import { createThreadStore } from "../../../extension/harness/store/threads.js";
import { LinearSqliteSaver } from "../../../extension/harness/store/checkpointer.js";
import { Journal } from "../../../extension/harness/runs/journal.js";
import { RunManager } from "../../../extension/harness/runs/manager.js";
import { currentOwnerId } from "../../../extension/harness/runs/owner.js";
import { applyMessagesDelta, MessagesDeltas, type MessagesDelta } from "../../../extension/harness/runs/valuesDelta.js";
import { toWireMessage } from "../../../extension/harness/runs/wire.js";
import { modesFilter, streamRun } from "../../../extension/harness/serve/stream.js";
import type { WireMessage } from "../../../extension/protocol/events.js";

const wire = (list: readonly BaseMessage[]) => list.map(toWireMessage);

test("folding the deltas gives every step's list: appends, a replacement by id, a dropped history; an unchanged list is no delta", () => {
  const base = [new HumanMessage({ id: "h0", content: "earlier" }), new AIMessage({ id: "a0", content: "earlier answer" })];
  const human = new HumanMessage({ id: "h1", content: "now" });
  const call = new AIMessage({ id: "a1", content: "", tool_calls: [{ id: "c1", name: "ls", args: {} }] });
  const result = new ToolMessage({ id: "t1", content: "files", tool_call_id: "c1" });
  const edited = new HumanMessage({ id: "h1", content: "now (with an upload note)" });
  const summary = new HumanMessage({ id: "s1", content: "summary of the above" });
  const final = new AIMessage({ id: "a2", content: "done" });
  const steps: BaseMessage[][] = [
    [...base, human], // the input step
    [...base, human, call],
    [...base, human, call], // a hook that changed nothing
    [...base, human, call, result],
    [...base, edited, call, result], // a middleware replaced a message by id
    [summary, call, result], // summarization dropped the history
    [summary, call, result, final],
  ];
  const deltas = new MessagesDeltas("base-checkpoint", new Set([human]));
  let folded: WireMessage[] = wire(base);
  const journaled: MessagesDelta[] = [];
  for (const [i, step] of steps.entries()) {
    const d = deltas.delta(step);
    if (i === 2) {
      assert.equal(d, undefined, "an unchanged list is no change");
      continue;
    }
    assert.ok(d);
    deltas.journaled(step);
    journaled.push(d);
    folded = applyMessagesDelta(folded, d);
    assert.deepEqual(folded, wire(step), `step ${i}`);
  }
  assert.deepEqual(journaled[0], { base: "base-checkpoint", keep: 2, add: [toWireMessage(human)] }, "the first names the base and carries only the input");
  // Each delta carries what changed: the replacement re-sends from the edited message on, the
  // summarization the new (short) list; never the history that stayed.
  assert.deepEqual(journaled.map((d) => [d.keep, d.add.length]), [[2, 1], [3, 1], [4, 1], [2, 3], [0, 3], [3, 1]]);
  assert.throws(() => applyMessagesDelta([], { keep: 1, add: [] }), /keeps 1 messages of 0/);
});

test("the run's first delta: a decision run without new messages keeps the base; input the list does not hold sends the whole list, never a wrong one", () => {
  const list = [new HumanMessage({ id: "h0", content: "q" }), new AIMessage({ id: "a0", content: "paused" })];
  assert.deepEqual(new MessagesDeltas("cp", new Set()).delta(list), { base: "cp", keep: 2, add: [] });
  const copied = new MessagesDeltas("cp", new Set([new HumanMessage({ id: "h1", content: "not in the list" })])).delta(list);
  assert.deepEqual(copied, { base: "cp", keep: 0, add: wire(list) });
  // A saver that cannot name the base: the first delta is the whole list, over nothing.
  assert.deepEqual(new MessagesDeltas(undefined, new Set([list[1]])).delta(list), { base: null, keep: 0, add: wire(list) });
});

/** A finished run in a real journal whose values events come from real message objects. */
async function finishedRun(opts: { base?: string } = {}) {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-values-")), "harness.db"));
  const threads = createThreadStore(db, { workspaceFolder: "/ws" });
  threads.create({ workspaceFolder: "/ws", threadId: "t" });
  const runs = createRunStore(db);
  const journal = new Journal(createEventStore(db));
  const manager = new RunManager({ runs, journal, owner: currentOwnerId(), leaseTtlMs: 10_000 });
  const saver = new LinearSqliteSaver(db);
  const earlier = [new HumanMessage({ id: "h0", content: "earlier" }), new AIMessage({ id: "a0", content: "earlier answer" })];
  const checkpoint = { ...emptyCheckpoint(), channel_values: { messages: earlier, title: "Old" }, channel_versions: { messages: 1, title: 1 } };
  const config = await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, checkpoint, { source: "loop", step: 0, parents: {} }, {});
  const baseId = config.configurable!.checkpoint_id as string;
  let reads = 0;
  const getTuple = saver.getTuple.bind(saver);
  saver.getTuple = async (c): Promise<CheckpointTuple | undefined> => {
    reads++;
    return getTuple(c);
  };

  const { run } = manager.admit({ run_id: "r1", thread_id: "t", model: "m", input: {}, context: {} });
  assert.ok(runs.start(run.run_id, currentOwnerId(), 10_000));
  const human = new HumanMessage({ id: "h1", content: "now" });
  const reply = new AIMessage({ id: "a1", content: "reply" });
  const deltas = new MessagesDeltas(opts.base ?? baseId, new Set([human]));
  const emit = (event: "values" | "updates" | "messages", data: unknown) => journal.append({ run_id: run.run_id, thread_id: "t", event, data } as never);
  const steps = [
    { messages: [...earlier, human], title: "Old" },
    { messages: [...earlier, human, reply], title: "Old" },
    { messages: [...earlier, human, reply], title: "New title" },
  ];
  emit("updates", { __start__: { messages: [toWireMessage(human)] } });
  for (const s of steps) {
    const d = deltas.delta(s.messages) ?? { keep: s.messages.length, add: [] };
    deltas.journaled(s.messages);
    emit("messages", [{ type: "ai", id: "a1", content: "re" }]);
    emit("values", { title: s.title, artifacts: [], message_count: s.messages.length, messages_delta: d });
  }
  manager.finishAndEnd(runs.get(run.run_id)!, ["running"], "success", "");
  const expected = steps.map((s) => ({ messages: wire(s.messages), title: s.title }));
  return { manager, saver, run, expected, reads: () => reads };
}

async function sse(manager: RunManager, saver: LinearSqliteSaver, run: Parameters<typeof streamRun>[2], streamMode: unknown, afterSeq = 0) {
  const sent: Array<{ id?: string; event?: string; data: string }> = [];
  const sink = { writeSSE: (m: { id?: string; event?: string; data: string }) => Promise.resolve(void sent.push(m)) } as unknown as SSEStreamingApi;
  await streamRun(sink, manager, run, { afterSeq, include: modesFilter(streamMode), signal: new AbortController().signal, checkpointer: saver });
  return sent.map((m) => ({ id: Number(m.id), event: m.event, data: JSON.parse(m.data) as Record<string, unknown> }));
}

test("a values stream reads the run's base checkpoint once and sends every step's full state, from the start or after a Last-Event-ID", async () => {
  const { manager, saver, run, expected, reads } = await finishedRun();
  const all = await sse(manager, saver, run, ["values"]);
  const values = all.filter((e) => e.event === "values");
  assert.deepEqual(values.map((v) => ({ messages: v.data.messages, title: v.data.title })), expected);
  assert.equal(all.at(-1)!.event, "end");
  assert.equal(reads(), 1, "one checkpoint read for the whole stream");
  assert.ok(values.every((v) => Array.isArray(v.data.todos) || v.data.todos === null), "stateView's keys, with its defaults");

  const resumed = await sse(manager, saver, run, ["values"], values[0]!.id);
  assert.deepEqual(resumed.filter((e) => e.event === "values").map((v) => v.data), values.slice(1).map((v) => v.data));
  assert.equal(reads(), 2, "a resumed stream reads the base once too");
});

test("a stream without values reads no checkpoint", async () => {
  const { manager, saver, run, reads } = await finishedRun();
  const sent = await sse(manager, saver, run, ["updates", "messages-tuple"]);
  assert.deepEqual([...new Set(sent.map((e) => e.event))], ["updates", "messages", "end"]);
  assert.equal(reads(), 0);
});

test("a base checkpoint that is gone: the values stream ends with an error event saying so, not a wrong state", async () => {
  const { manager, saver, run } = await finishedRun({ base: "1f0-no-such-checkpoint" });
  const sent = await sse(manager, saver, run, ["values"]);
  assert.equal(sent.length, 1, JSON.stringify(sent));
  assert.equal(sent[0]!.event, "error");
  assert.equal(sent[0]!.data.error, "storage");
  assert.match(String(sent[0]!.data.message), /The checkpoint run r1 started from \(1f0-no-such-checkpoint\) is gone/);
});
