// The LangGraph subset as DeerFlow's web UI and the SDK use it (issue 32 items 1 and 3, and the
// bad requests of item 6): the same routes under /api as at the root, search with values.title,
// sort, status and select, Rename through POST /threads/{id}/state, LangGraph's `[chunk, metadata]`
// messages, SSE headers a proxy passes on, Connection: close, Last-Event-ID -1 and resumes from
// inside a row of chunks, DeerFlow's cancel text, `context.model_name` naming `--model`, a
// duplicate thread id, a body nested too deep, and what Node's HTTP parser refuses. One serve
// process, driven by the real @langchain/langgraph-sdk client and by plain HTTP.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import { Client } from "@langchain/langgraph-sdk";
import { startScriptedServe, SERVE_TOKEN, type ServeProcess } from "./helpers/serveProcess.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";

let model: ModelServer;
let serve: ServeProcess;
const auth = { Authorization: `Bearer ${SERVE_TOKEN}`, "Content-Type": "application/json" };
const input = (text: string) => ({ messages: [{ type: "human", content: [{ type: "text", text }] }] });
const apiClient = () => new Client({ apiUrl: `${serve.url}/api`, defaultHeaders: { Authorization: `Bearer ${SERVE_TOKEN}` } });

type Part = { id?: string; event: string; data: any };
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

before(async () => {
  model = await startModelServer();
  serve = (await startScriptedServe(model.url)).serve;
});

after(async () => {
  await serve?.stop();
  await model?.close();
});

test("under /api as at the root: a streamed run sends LangGraph's [chunk, metadata] messages, and the thread is the same thread", async () => {
  const c = apiClient();
  const thread = await c.threads.create({ metadata: {} });
  model.setScript([{ content: "an answer in five words" }]);
  const parts = await collect(
    c.runs.stream(thread.thread_id, "lead_agent", { input: input("hello"), streamMode: ["messages-tuple", "values", "updates", "custom"] }) as AsyncIterable<Part>,
  );
  assert.equal(parts.at(-1)!.event, "end");
  const messages = parts.filter((p) => p.event === "messages");
  assert.ok(messages.length >= 1, "token chunks streamed");
  for (const m of messages) {
    assert.ok(Array.isArray(m.data) && m.data.length === 2, `a [chunk, metadata] pair: ${JSON.stringify(m.data)}`);
    assert.equal(typeof m.data[0].content, "string");
    assert.equal(m.data[1].thread_id, thread.thread_id);
  }
  const ai = messages.filter((m) => m.data[0].type === "AIMessageChunk");
  assert.equal(ai.map((m) => m.data[0].content).join(""), "an answer in five words", "the chunks make the answer");
  // The root path serves the same thread (SDK clients, the CLI and VS Code keep using it).
  const atRoot = await serve.client().threads.get(thread.thread_id);
  assert.equal(atRoot.thread_id, thread.thread_id);
  const none = await fetch(`${serve.url}/api/threads/search`, { method: "POST", body: "{}" });
  assert.equal(none.status, 401, "/api needs the token too");
});

test("SSE answers carry no-transform and X-Accel-Buffering; a request that says Connection: close gets it", async () => {
  const thread = await serve.client().threads.create();
  model.setScript([{ content: "short" }]);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(`${serve.url}/api/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { ...auth, Connection: "close" },
      agent: new http.Agent({ keepAlive: true }),
    });
    req.on("response", resolve).on("error", reject);
    req.end(JSON.stringify({ assistant_id: "lead_agent", input: input("hi"), stream_mode: ["values"] }));
  });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers["cache-control"]), /no-cache/);
  assert.match(String(res.headers["cache-control"]), /no-transform/);
  assert.equal(res.headers["x-accel-buffering"], "no");
  assert.equal(res.headers.connection, "close");
  let text = "";
  res.setEncoding("utf8").on("data", (s: string) => (text += s));
  await Promise.all([once(res, "end"), once(res.socket, "close")]);
  assert.match(text, /event: end/, "the stream ran to its end, then the socket closed");
});

test("search returns values.title and honours sort_by, sort_order, status and select; Rename is POST /threads/{id}/state", async () => {
  const c = apiClient();
  const tag = `search-${Date.now()}`;
  const a = await c.threads.create({ metadata: { tag } });
  const b = await c.threads.create({ metadata: { tag } });
  const renamed = await fetch(`${serve.url}/api/threads/${a.thread_id}/state`, { method: "POST", headers: auth, body: JSON.stringify({ values: { title: "Quarterly report" } }) });
  assert.equal(renamed.status, 200);
  const r = (await renamed.json()) as { checkpoint: { thread_id: string; checkpoint_ns: string } };
  assert.equal(r.checkpoint.thread_id, a.thread_id);
  assert.equal(r.checkpoint.checkpoint_ns, "");
  const badState = await fetch(`${serve.url}/api/threads/${a.thread_id}/state`, { method: "POST", headers: auth, body: JSON.stringify({ values: { messages: [] } }) });
  assert.equal(badState.status, 400, "only the title is the client's to set");

  const search = (body: Record<string, unknown>) => c.threads.search({ metadata: { tag }, ...body }) as Promise<Array<Record<string, any>>>;
  const desc = await search({ limit: 50, sortBy: "created_at", sortOrder: "desc", select: ["thread_id", "updated_at", "values", "metadata"] });
  assert.deepEqual(desc.map((t) => t.thread_id), [b.thread_id, a.thread_id]);
  assert.equal(desc.find((t) => t.thread_id === a.thread_id)!.values.title, "Quarterly report");
  assert.equal(desc.find((t) => t.thread_id === b.thread_id)!.values.title, null);
  assert.deepEqual(Object.keys(desc[0]!).sort(), ["metadata", "thread_id", "updated_at", "values"], "select keeps only what was asked");
  const asc = await search({ sortBy: "created_at", sortOrder: "asc" });
  assert.deepEqual(asc.map((t) => t.thread_id), [a.thread_id, b.thread_id]);
  assert.equal((await c.threads.get(a.thread_id)).values && ((await c.threads.get(a.thread_id)).values as { title: string }).title, "Quarterly report");
  assert.equal(((await c.threads.getState(a.thread_id)).values as { title: string }).title, "Quarterly report");

  // status: a thread with a run on it is busy while the others are idle.
  model.setScript([{ content: "held answer", gate: { afterChunks: 1, until: "search-busy" } }]);
  let runId = "";
  const streaming = collect(c.runs.stream(b.thread_id, "lead_agent", { input: input("go"), onRunCreated: (m) => (runId = m.run_id) }) as AsyncIterable<Part>);
  await model.waitForGate("search-busy");
  assert.deepEqual((await search({ status: "busy" })).map((t) => t.thread_id), [b.thread_id]);
  assert.deepEqual((await search({ status: "idle" })).map((t) => t.thread_id), [a.thread_id]);
  model.gate("search-busy").open();
  await streaming;
  assert.ok(runId);
  assert.deepEqual((await search({ status: "busy" })).map((t) => t.thread_id), []);
});

test("Last-Event-ID -1 replays the whole run; a resume from inside a row of chunks sends nothing twice", async () => {
  const c = apiClient();
  const thread = await c.threads.create();
  model.setScript([{ content: "one two three four five six seven eight nine ten" }]);
  let runId = "";
  const first = await collect(c.runs.stream(thread.thread_id, "lead_agent", { input: input("count"), streamMode: ["messages-tuple", "updates"], onRunCreated: (m) => (runId = m.run_id) }) as AsyncIterable<Part>);
  assert.equal(first.at(-1)!.event, "end");
  const sig = (ps: Part[]) => ps.map((p) => `${p.id}:${p.event}:${JSON.stringify(p.data)}`);
  const replayed = await collect(c.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1", streamMode: ["messages-tuple", "updates"] }) as AsyncIterable<Part>);
  assert.deepEqual(sig(replayed).slice(1), sig(first).slice(1), "the same events after the metadata");
  const ids = first.map((p) => p.id).filter((id): id is string => id !== undefined);
  assert.equal(new Set(ids).size, ids.length, "every event has its own id");
  for (let k = 1; k < first.length - 1; k++) {
    const resumed = await collect(c.runs.joinStream(thread.thread_id, runId, { lastEventId: first[k]!.id, streamMode: ["messages-tuple", "updates"] }) as AsyncIterable<Part>);
    assert.deepEqual(sig(resumed), sig(first.slice(k + 1)), `resume after ${first[k]!.id}`);
  }
  const bad = await fetch(`${serve.url}/api/threads/${thread.thread_id}/runs/${runId}/stream`, { headers: { ...auth, "Last-Event-ID": "x1" } });
  assert.equal(bad.status, 400);
});

test("cancel of a finished run is DeerFlow's 409 text; context.model_name naming --model runs", async () => {
  const c = apiClient();
  const thread = await c.threads.create();
  model.setScript([{ content: "named model" }]);
  const parts = await collect(
    c.runs.stream(thread.thread_id, "lead_agent", { input: input("hi"), context: { model_name: "scripted", thinking_enabled: false, is_plan_mode: false, subagent_enabled: false } }) as AsyncIterable<Part>,
  );
  assert.equal(parts.at(-1)!.data.status, "success", JSON.stringify(parts.at(-1)));
  const [run] = await c.runs.list(thread.thread_id);
  const res = await fetch(`${serve.url}/api/threads/${thread.thread_id}/runs/${run!.run_id}/cancel?wait=0&action=interrupt`, { method: "POST", headers: auth });
  assert.equal(res.status, 409);
  const body = (await res.json()) as { detail: string };
  assert.equal(body.detail, `Run ${run!.run_id} is not cancellable (status: success)`);
});

test("bad requests are JSON 4xx: a duplicate thread id, a body nested too deep, what the HTTP parser refuses", async () => {
  const c = apiClient();
  const t = await c.threads.create();
  const dup = await fetch(`${serve.url}/api/threads`, { method: "POST", headers: auth, body: JSON.stringify({ thread_id: t.thread_id }) });
  assert.equal(dup.status, 409);
  assert.equal(((await dup.json()) as { error: string }).error, "thread_exists");
  const same = await fetch(`${serve.url}/threads`, { method: "POST", headers: auth, body: JSON.stringify({ thread_id: t.thread_id, if_exists: "do_nothing" }) });
  assert.equal(same.status, 200);
  assert.equal(((await same.json()) as { thread_id: string }).thread_id, t.thread_id);

  const deep = `{"metadata":{"x":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`;
  const res = await fetch(`${serve.url}/threads`, { method: "POST", headers: auth, body: deep });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { message: string }).message, /nests deeper/);

  for (const raw of ["FOO / HTTP/1.1\r\nHost: x\r\n\r\n", "GET /threads/\x80\x81 HTTP/1.1\r\nHost: x\r\n\r\n"]) {
    const socket = net.connect(Number(new URL(serve.url).port), "127.0.0.1");
    socket.end(Buffer.from(raw, "latin1"));
    let answer = "";
    socket.setEncoding("utf8").on("data", (s: string) => (answer += s));
    await once(socket, "close");
    assert.match(answer, /^HTTP\/1\.1 400 /, answer);
    const json = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { error: string };
    assert.equal(json.error, "invalid_request");
  }
  assert.equal((await c.threads.get(t.thread_id)).thread_id, t.thread_id, "serve still answers");
});
