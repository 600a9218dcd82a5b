// `deerflow serve` driven by the real @langchain/langgraph-sdk client (a client we did not write):
// threads, a streamed run with a tool call, a second client joining a running run and getting the
// same events, Last-Event-ID resume, cancel, state and history, and the API's refusals (401
// without the token, JSON 4xx for bad input). One server process for the file; it runs on the
// data dir's SQLite, or on Postgres in the Postgres tier (scripts/ci/postgres-tests.sh).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startScriptedServe, SERVE_TOKEN, type ServeProcess } from "./helpers/serveProcess.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";

let model: ModelServer;
let serve: ServeProcess;
let url: string;
const TOKEN = SERVE_TOKEN;
const client = () => serve.client();
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

before(async () => {
  model = await startModelServer();
  const started = await startScriptedServe(model.url);
  serve = started.serve;
  const database = started.database;
  assert.match(serve.url, /^http:\/\/127\.0\.0\.1:\d+$/, "127.0.0.1 by default");
  assert.match(serve.database, database ? /^postgres:\/\// : /^sqlite/);
  url = serve.url;
});

after(async () => {
  await serve?.stop();
  await model?.close();
});

type Part = { id?: string; event: string; data: any };
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of stream) out.push(p);
  return out;
}
const sig = (parts: Part[]) => parts.map((p) => `${p.id}:${p.event}`);

test("a request without the token gets 401 with a JSON error; bad input gets a JSON 4xx, never a stack", async () => {
  const none = await fetch(`${url}/threads`, { method: "POST", body: "{}" });
  assert.equal(none.status, 401);
  assert.equal(((await none.json()) as { error: string }).error, "unauthorized");
  const wrong = await fetch(`${url}/threads/search`, { method: "POST", headers: { Authorization: "Bearer not-the-token" }, body: "{}" });
  assert.equal(wrong.status, 401);
  const auth = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" };
  const missing = await fetch(`${url}/threads/00000000-0000-4000-8000-000000000000`, { headers: auth });
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { error: string }).error, "thread_not_found");
  const t = await client().threads.create();
  const bad = await fetch(`${url}/threads/${t.thread_id}/runs`, { method: "POST", headers: auth, body: "{not json" });
  assert.equal(bad.status, 400);
  const noAssistant = await fetch(`${url}/threads/${t.thread_id}/runs`, { method: "POST", headers: auth, body: JSON.stringify({ assistant_id: "other", input: input("x") }) });
  assert.equal(noAssistant.status, 400);
  const body = (await noAssistant.json()) as { error: string; message: string };
  assert.equal(body.error, "invalid_params");
  assert.doesNotMatch(body.message, /\n\s+at /, "no stack");
  // The approval pause is the server's: a client cannot forge one.
  const forged = await fetch(`${url}/threads/${t.thread_id}`, { method: "PATCH", headers: auth, body: JSON.stringify({ metadata: { pending_approvals: [{ tool_call_id: "x" }] } }) });
  assert.equal(forged.status, 400);
  assert.equal((await client().threads.update(t.thread_id, { metadata: { label: "ok" } })).metadata?.label, "ok");
});

test("create a thread, stream a run with a tool call; state and history read what it did", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { owner: "test" } });
  assert.equal(thread.metadata?.workspace, "main", "the first workspace by default");
  model.setScript([
    { content: "Looking.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
    { content: "All done here." },
  ]);
  const parts = await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("list the workspace"), streamMode: ["values", "updates", "messages-tuple"] }) as AsyncIterable<Part>);
  const events = parts.map((p) => p.event);
  assert.equal(events[0], "metadata");
  assert.equal(events.at(-1), "end");
  assert.equal(parts.at(-1)!.data.status, "success", JSON.stringify(parts.at(-1)!.data));
  assert.ok(events.includes("messages"), "token chunks streamed");
  const toolUpdate = parts.find((p) => p.event === "updates" && JSON.stringify(p.data).includes('"name":"ls"'));
  assert.ok(toolUpdate, "the tool call and its result arrive as updates");
  const ids = parts.map((p) => Number(p.id));
  assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "ids are the journal's seqs, in order");

  const state = await c.threads.getState(thread.thread_id);
  const messages = (state.values as { messages: Array<{ type: string; content: unknown }> }).messages;
  assert.deepEqual(messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  assert.equal(messages.at(-1)!.content, "All done here.");
  // A finished run's intermediate checkpoints are compacted away (checkpointer.ts compactRun).
  const history = await c.threads.getHistory(thread.thread_id, { limit: 10 });
  assert.ok(history.length >= 1);
  assert.equal(history[0]!.checkpoint.checkpoint_id, state.checkpoint.checkpoint_id, "newest first");
  assert.deepEqual(history[0]!.values, state.values);
  const runs = await c.runs.list(thread.thread_id);
  assert.deepEqual(runs.map((r) => r.status), ["success"]);
  const got = await c.threads.get(thread.thread_id);
  assert.equal(got.status, "idle");
  const found = await c.threads.search({ metadata: { owner: "test" } });
  assert.deepEqual(found.map((t) => t.thread_id), [thread.thread_id]);
});

test("a second client joins a running run and gets the same events; Last-Event-ID resumes after an event", async () => {
  const a = client();
  const b = client();
  const thread = await a.threads.create();
  model.setScript([{ content: "a slow answer in several words", gate: { afterChunks: 2, until: "serve-join" } }]);
  let runId: string | undefined;
  const first = collect(a.runs.stream(thread.thread_id, "lead_agent", { input: input("go"), onRunCreated: (m) => (runId = m.run_id) }) as AsyncIterable<Part>);
  await model.waitForGate("serve-join");
  assert.ok(runId, "the run id comes in Content-Location");
  assert.equal((await b.runs.get(thread.thread_id, runId)).status, "running");
  const second = collect(b.runs.joinStream(thread.thread_id, runId) as AsyncIterable<Part>);
  model.gate("serve-join").open();
  const [pa, pb] = await Promise.all([first, second]);
  assert.equal(pa.at(-1)!.event, "end");
  assert.deepEqual(sig(pb), sig(pa), "the joining client gets the same events");
  assert.deepEqual(pb.map((p) => p.data), pa.map((p) => p.data));
  const k = Math.floor(pa.length / 2);
  const resumed = await collect(b.runs.joinStream(thread.thread_id, runId, { lastEventId: pa[k]!.id }) as AsyncIterable<Part>);
  assert.deepEqual(sig(resumed), sig(pa.slice(k + 1)), "resume after Last-Event-ID: nothing twice, nothing missing");
});

test("cancel ends a running run interrupted; the thread takes the next run", async () => {
  const c = client();
  const thread = await c.threads.create();
  model.setScript([{ content: "never finished", gate: { afterChunks: 1, until: "serve-cancel" } }]);
  const run = await c.runs.create(thread.thread_id, "lead_agent", { input: input("start") });
  await model.waitForGate("serve-cancel");
  await c.runs.cancel(thread.thread_id, run.run_id);
  const end = (await collect(c.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>)).at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.data.status, "interrupted");
  model.gate("serve-cancel").open();
  assert.equal((await c.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
  model.setScript([{ content: "next one" }]);
  const next = await c.runs.create(thread.thread_id, "lead_agent", { input: input("again") });
  await c.runs.join(thread.thread_id, next.run_id);
  assert.equal((await c.runs.get(thread.thread_id, next.run_id)).status, "success");
  model.setScript([{ content: "waited for" }]);
  const values = (await c.runs.wait(thread.thread_id, "lead_agent", { input: input("and wait") })) as { messages: Array<{ content: unknown }> };
  assert.equal(values.messages.at(-1)!.content, "waited for", "runs/wait answers the state after the run");
});

test("approval decisions: a protected write pauses the run; command.resume.decisions continues it", async () => {
  const c = client();
  const thread = await c.threads.create();
  const write = { id: "call_serve_p", name: "write_file", args: { description: "tasks", path: "/mnt/user-data/workspace/.vscode/tasks.json", content: "{}\n" } };
  model.setScript([{ toolCalls: [write] }]);
  const paused = (await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("Add a task.") }) as AsyncIterable<Part>)).at(-1)!;
  assert.equal(paused.data.stop_reason, "approval");
  assert.deepEqual(paused.data.pending_approvals.map((p: { tool_call_id: string }) => p.tool_call_id), ["call_serve_p"]);
  model.setScript([{ content: "Not added." }]);
  const before = model.requests.length;
  const decisions = [{ tool_call_id: "call_serve_p", decision: "reject", reason: "not now" }];
  const done = (await collect(c.runs.stream(thread.thread_id, "lead_agent", { command: { resume: { decisions } } }) as AsyncIterable<Part>)).at(-1)!;
  assert.equal(done.data.status, "success");
  assert.equal(done.data.stop_reason, undefined);
  assert.match(JSON.stringify(model.requests[before]), /Rejected by the user: not now/);
});
