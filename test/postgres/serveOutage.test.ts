// A server that survives its database (issue 32 item 6): `deerflow serve` on a Postgres cluster of
// this test's own (scripts/ci/postgres-setup.sh with DEERFLOW_PG_DIR, so the shared test server is
// never stopped under other tests), stopped mid-run and started again on the same port. Serve
// stays up; a request during the outage gets a 503 JSON error within 10 s; once the database is
// back the run ends with a typed outcome and exactly one `end` in a gap-free journal, the next
// run on the thread streams, and what was written before is there.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { startServe, SERVE_TOKEN, type ServeProcess } from "../integration/helpers/serveProcess.js";
import { tempDir } from "../integration/helpers/cli.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";

const LEASE_TTL_MS = 3000;
const pgDir = tempDir("pg-outage");
const setup = (cmd: "start" | "stop"): string =>
  execFileSync("scripts/ci/postgres-setup.sh", [cmd], { env: { ...process.env, DEERFLOW_PG_DIR: pgDir }, encoding: "utf8" }).trim().split("\n").at(-1)!;

let model: ModelServer;
let serve: ServeProcess;
let database: string;
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });
type Part = { id?: string; event: string; data: any };
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

before(async () => {
  database = setup("start");
  model = await startModelServer();
  const workspace = tempDir("ws");
  serve = await startServe(["--workspace", `main=${workspace}`, "--data-dir", tempDir("data"), "--database", database,
    "--model", "scripted", "--base-url", model.url, "--sandbox", "local"], { DEERFLOW_LEASE_TTL_MS: String(LEASE_TTL_MS) });
});

after(async () => {
  await serve?.stop();
  await model?.close();
  try {
    setup("stop");
  } finally {
    rmSync(pgDir, { recursive: true, force: true });
  }
});

test("Postgres stopped mid-run and started again: serve stays up, 503s meanwhile, the run ends typed once, the next run streams, nothing is lost", async () => {
  const client = serve.client();
  const thread = await client.threads.create();
  model.setScript([{ content: "Written before the outage." }]);
  const first = await client.runs.create(thread.thread_id, "lead_agent", { input: input("before the outage") });
  await client.runs.join(thread.thread_id, first.run_id);

  model.setScript([{ content: "an answer the database will not see whole", gate: { afterChunks: 2, until: "outage" } }]);
  const run = await client.runs.create(thread.thread_id, "lead_agent", { input: input("during the outage") });
  await model.waitForGate("outage");
  setup("stop");

  // During the outage: a JSON 503 within 10 s, and the process is still there.
  const res = await fetch(`${serve.url}/threads/${thread.thread_id}`, { headers: { Authorization: `Bearer ${SERVE_TOKEN}` }, signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 503, `${await res.clone().text()}\n${serve.stderr()}`);
  const body = (await res.json()) as { error: string; message: string };
  assert.equal(body.error, "database_unavailable");
  assert.ok(!/\/|at \w+ \(/.test(body.message), `no path or stack: ${body.message}`);
  // The model's answer goes on while the database is down: the run's writes fail.
  const requests = model.requests.length;
  model.gate("outage").open();
  await model.waitForRequests(requests, { settled: true });
  assert.equal(serve.child.exitCode, null, `serve is up: ${serve.stderr()}`);

  assert.equal(setup("start"), database, "the cluster comes back on the same URL");
  const parts = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { signal: AbortSignal.timeout(LEASE_TTL_MS + 20_000) }) as AsyncIterable<Part>);
  const ends = parts.filter((p) => p.event === "end");
  assert.equal(ends.length, 1, `exactly one end: ${JSON.stringify(parts.map((p) => p.event))}`);
  // Its worker could not write its end while the database was down: the sweep settles it, typed.
  assert.equal(ends[0]!.data.status, "interrupted", JSON.stringify(ends[0]!.data));
  assert.match(ends[0]!.data.error, /lost the database/);
  assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
  // Gap-free: the replayed ids (the thread's seqs) of this run follow one another.
  const ids = parts.map((p) => Number(p.id)).filter((n) => Number.isFinite(n));
  for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1]! + 1, `seq ${ids[i - 1]} then ${ids[i]}`);

  model.setScript([{ content: "After the outage." }]);
  const next = await client.runs.create(thread.thread_id, "lead_agent", { input: input("after the outage") });
  const streamed = await collect(client.runs.joinStream(thread.thread_id, next.run_id) as AsyncIterable<Part>);
  assert.equal(streamed.at(-1)?.event, "end");
  assert.equal(streamed.at(-1)?.data.status, "success");
  const state = await client.threads.getState(thread.thread_id);
  const texts = (state.values as { messages: Array<{ content: unknown }> }).messages.map((m) => String(m.content));
  for (const t of ["before the outage", "Written before the outage.", "after the outage", "After the outage."]) assert.ok(texts.includes(t), `${t} in ${JSON.stringify(texts)}`);
  assert.equal(serve.child.exitCode, null, "serve never went down");
});
