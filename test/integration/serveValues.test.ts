// `deerflow serve`'s `values` events are the FULL thread state after each step, as LangGraph
// Platform streams them (the SDK's useStream takes the last one as the final state): on the live
// stream, for a second client joining a running run, and after a Last-Event-ID resume; a stream
// that did not ask for `values` gets none. Driven by the real @langchain/langgraph-sdk client.
// One server process for the file (SQLite, or Postgres in the Postgres tier).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startScriptedServe, type ServeProcess } from "./helpers/serveProcess.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";

let model: ModelServer;
let serve: ServeProcess;
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

before(async () => {
  model = await startModelServer();
  const started = await startScriptedServe(model.url);
  serve = started.serve;
});

after(async () => {
  await serve?.stop();
  await model?.close();
});

type Msg = { type: string; content: unknown; id?: string; tool_calls?: Array<{ name: string }> };
type Part = { id?: string; event: string; data: any };
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of stream) out.push(p);
  return out;
}
const valuesOf = (parts: Part[]) => parts.filter((p) => p.event === "values");
const types = (v: { messages: Msg[] }) => v.messages.map((m) => m.type);

test("values events carry the full state; the last one is /state's values, on a second run too", async () => {
  const c = serve.client();
  const thread = await c.threads.create();
  model.setScript([
    { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
    { content: "All done here." },
  ]);
  const parts = await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("list the workspace"), streamMode: ["values", "messages-tuple"] }) as AsyncIterable<Part>);
  assert.equal(parts.at(-1)!.data.status, "success", JSON.stringify(parts.at(-1)!.data));
  assert.ok(parts.some((p) => p.event === "messages"), "token chunks streamed alongside");
  const values = valuesOf(parts);
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(types(state.values as { messages: Msg[] }), ["human", "ai", "tool", "ai"]);
  // LangGraph's first `values` is the input applied, before any node ran.
  assert.deepEqual(types(values[0]!.data), ["human"]);
  assert.equal(values[0]!.data.messages[0].content, "list the workspace");
  assert.deepEqual(values.at(-1)!.data, state.values, "the last values event IS the final state");
  assert.deepEqual(Object.keys(values[0]!.data).sort(), Object.keys(state.values as object).sort(), "every event has stateView's keys");
  // In between, the list grows step by step: the AI's tool call, then its result.
  const counts = values.map((v) => v.data.messages.length);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b));
  const withCall = values.find((v) => v.data.messages.length === 2)!;
  assert.deepEqual(withCall.data.messages[1].tool_calls.map((t: { name: string }) => t.name), ["ls"]);
  assert.ok(values.every((v) => !("messages_delta" in v.data) && !("message_count" in v.data)), "the journal's bookkeeping stays inside");

  // The next run starts from this one's last checkpoint: its values carry the whole history.
  model.setScript([{ content: "Second answer." }]);
  const next = valuesOf(await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("and again"), streamMode: "values" }) as AsyncIterable<Part>));
  const after = await c.threads.getState(thread.thread_id);
  assert.deepEqual(types(next[0]!.data), ["human", "ai", "tool", "ai", "human"]);
  assert.deepEqual(next.at(-1)!.data, after.values);
  assert.deepEqual(types(after.values as { messages: Msg[] }), ["human", "ai", "tool", "ai", "human", "ai"]);
});

test("a second client joining a running run, and a Last-Event-ID resume, get the same full values", async () => {
  const a = serve.client();
  const b = serve.client();
  const thread = await a.threads.create();
  model.setScript([
    { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
    { content: "a slow answer in several words", gate: { afterChunks: 2, until: "values-join" } },
  ]);
  let runId: string | undefined;
  const first = collect(a.runs.stream(thread.thread_id, "lead_agent", { input: input("go"), streamMode: ["values", "updates"], onRunCreated: (m) => (runId = m.run_id) }) as AsyncIterable<Part>);
  await model.waitForGate("values-join");
  assert.ok(runId);
  assert.equal((await b.runs.get(thread.thread_id, runId)).status, "running", "joined while it runs");
  const second = collect(b.runs.joinStream(thread.thread_id, runId, { streamMode: ["values"] }) as AsyncIterable<Part>);
  model.gate("values-join").open();
  const [pa, pb] = await Promise.all([first, second]);
  assert.equal(pa.at(-1)!.data.status, "success");
  const state = await a.threads.getState(thread.thread_id);
  assert.deepEqual(types(state.values as { messages: Msg[] }), ["human", "ai", "tool", "ai"]);
  assert.deepEqual(valuesOf(pb).map((p) => [p.id, p.data]), valuesOf(pa).map((p) => [p.id, p.data]), "the joining client gets the same full values");
  assert.deepEqual(valuesOf(pb).at(-1)!.data, state.values);
  assert.ok(pb.every((p) => p.event !== "updates"), "stream_mode of the join is honoured");

  // Resume after the values event that holds the tool call: the later ones arrive whole.
  const va = valuesOf(pa);
  const k = va.findIndex((v) => v.data.messages.length === 2);
  assert.ok(k >= 0 && k < va.length - 1, `a values event mid-run: ${JSON.stringify(va.map((v) => v.data.messages.length))}`);
  const resumed = await collect(b.runs.joinStream(thread.thread_id, runId, { lastEventId: va[k]!.id, streamMode: ["values"] }) as AsyncIterable<Part>);
  assert.deepEqual(valuesOf(resumed).map((p) => [p.id, p.data]), va.slice(k + 1).map((p) => [p.id, p.data]), "after the id: the same full states, nothing twice");
  assert.deepEqual(valuesOf(resumed).at(-1)!.data, state.values);
  assert.equal(resumed.at(-1)!.event, "end");
});

test("a stream that did not ask for values gets none, and its events stay deltas", async () => {
  const c = serve.client();
  const thread = await c.threads.create();
  model.setScript([{ content: "One." }, { content: "Two." }]);
  await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("first"), streamMode: "values" }) as AsyncIterable<Part>);
  const parts = await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("second"), streamMode: ["updates", "messages-tuple"] }) as AsyncIterable<Part>);
  assert.equal(parts.at(-1)!.data.status, "success");
  assert.ok(parts.every((p) => p.event !== "values"), "no values events");
  const text = JSON.stringify(parts);
  assert.doesNotMatch(text, /"first"/, "the earlier turn's message is not sent again");
  assert.match(text, /"second"/);
});
