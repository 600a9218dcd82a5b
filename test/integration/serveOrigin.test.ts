// What `deerflow serve` answers a browser (issue 31 item 6): a page of another origin gets a 403,
// its own origin (Host, a proxy's X-Forwarded-Host/Proto or Forwarded) and an --allow-origin one
// pass; a host name the server does not answer to (a DNS-rebinding page) gets a 403, on HTTP and
// on the /rpc upgrade; and a token's event streams are capped (429 past 64), a closed stream's slot
// free again. One serve process (DEERFLOW_SERVE_DEBUG=1: it says when a stream closes), real
// sockets through node:http (which lets a test send its own Host).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startScriptedServe, SERVE_TOKEN, type ServeProcess } from "./helpers/serveProcess.js";
import { refusedUpgrade } from "./helpers/rpcClient.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { MAX_STREAMS_PER_TOKEN } from "../../extension/harness/serve/streamSlots.js";

let model: ModelServer;
let serve: ServeProcess;
let port: number;
const bearer = { Authorization: `Bearer ${SERVE_TOKEN}` };
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

before(async () => {
  model = await startModelServer();
  serve = (await startScriptedServe(model.url, ["--allow-origin", "https://ui.example.com"], { DEERFLOW_SERVE_DEBUG: "1" })).serve;
  port = Number(new URL(serve.url).port);
});

after(async () => {
  await serve?.stop();
  await model?.close();
});

interface Answer {
  status: number;
  json: any;
}

/** One request on its own socket to serve's port, with exactly these headers (Host included when given). */
function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, agent: false, headers: { ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers } });
    req.on("error", reject).on("response", (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (s: string) => (text += s));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as unknown) : undefined }));
    });
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
const search = (headers: Record<string, string>, prefix = "") => send("POST", `${prefix}/threads/search`, { ...bearer, ...headers }, {});

test("Origin: a page of another origin gets a 403 with a JSON error; the server's own origin, a proxy's forwarded one and --allow-origin pass", async () => {
  const foreign = await search({ Origin: "http://evil.example" });
  assert.equal(foreign.status, 403);
  assert.equal(foreign.json.error, "origin_denied");
  assert.match(foreign.json.message, /http:\/\/evil\.example may not call this server.*--allow-origin http:\/\/evil\.example/);
  const underApi = await search({ Origin: "http://evil.example" }, "/api");
  assert.equal(underApi.status, 403);
  assert.equal(underApi.json.detail.code, "origin_denied", "DeerFlow's {detail} under /api");
  const login = await send("POST", "/api/v1/auth/login/local", { Origin: "http://evil.example", "Content-Type": "application/x-www-form-urlencoded" });
  assert.deepEqual([login.status, login.json], [403, { detail: "Cross-site auth request denied." }], "DeerFlow's own words on its sign-in route");
  assert.equal((await search({ Origin: "null" })).status, 403, "an opaque origin is not the server's");
  assert.equal((await search({ Origin: "http://localhost:3000" })).status, 403, "another port is another origin");

  assert.equal((await search({})).status, 200, "no Origin: not a browser (the SDK, curl)");
  assert.equal((await search({ Origin: `http://127.0.0.1:${port}` })).status, 200, "the server's own origin");
  // DeerFlow's web UI behind its Next server: the rewrite keeps serve's Host and says where the browser was.
  assert.equal((await search({ Origin: "http://localhost:3000", "X-Forwarded-Host": "localhost:3000", "X-Forwarded-Proto": "http" }, "/api")).status, 200);
  assert.equal((await search({ Origin: "http://localhost:3000", "X-Forwarded-Host": "localhost", "X-Forwarded-Port": "3000" }, "/api")).status, 200, "X-Forwarded-Port joins a host without one");
  assert.equal((await search({ Origin: "https://localhost:8443", Forwarded: 'for=127.0.0.1;proto=https;host="localhost:8443"' })).status, 200, "RFC 7239 Forwarded");
  assert.equal((await search({ Origin: "https://ui.example.com" })).status, 200, "an --allow-origin page");
  // A TLS proxy that passes its own name as Host: the --allow-origin entry names it.
  assert.equal((await search({ Host: "ui.example.com", "X-Forwarded-Proto": "https", Origin: "https://ui.example.com" })).status, 200);
});

test("Host: a DNS-rebinding page (Host: evil.example, same-origin with itself) gets a 403 and nothing else, token or not", async () => {
  const rebound = await search({ Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` });
  assert.equal(rebound.status, 403);
  assert.equal(rebound.json.error, "host_denied");
  assert.match(rebound.json.message, /does not answer to the host name "evil\.example:\d+"/);
  assert.equal((await send("GET", "/api/v1/auth/setup-status", { Host: "evil.example" })).status, 403, "the public sign-in routes too");
  assert.equal((await send("POST", "/threads/search", { Host: "evil.example" }, {})).status, 403, "before the token is looked at");
  // Through Next on this machine: the forwarded host is the page's.
  const viaProxy = await search({ "X-Forwarded-Host": "evil.example:3000", Origin: "http://evil.example:3000" }, "/api");
  assert.equal(viaProxy.status, 403);
  assert.equal(viaProxy.json.detail.code, "host_denied");

  for (const host of [`localhost:${port}`, `[::1]:${port}`, `127.0.0.1:${port}`, "127.0.0.1:9000", "ui.example.com"]) {
    assert.equal((await search({ Host: host })).status, 200, `${host}: a loopback name (any port: an ssh -L tunnel) or an --allow-origin host`);
  }
});

test("the /rpc upgrade gets the same check: a rebinding Host or a foreign Origin is a 403 and no socket; VS Code's (no Origin) and the own origin connect", async () => {
  const ws = `ws://127.0.0.1:${port}/rpc`;
  const rebound = await refusedUpgrade(ws, { ...bearer, Host: `evil.example:${port}` });
  assert.equal(rebound?.status, 403);
  assert.equal((JSON.parse(rebound.body) as { error: string }).error, "host_denied");
  const hijack = await refusedUpgrade(ws, { ...bearer, Origin: "http://evil.example" });
  assert.equal(hijack?.status, 403);
  assert.equal((JSON.parse(hijack.body) as { error: string }).error, "origin_denied");
  assert.equal((await refusedUpgrade(ws, { Origin: "http://evil.example" }))?.status, 403, "refused before the token");
  assert.equal(await refusedUpgrade(ws, bearer), undefined, "VS Code's socket: no Origin");
  assert.equal(await refusedUpgrade(ws, { ...bearer, Origin: `http://127.0.0.1:${port}` }), undefined);
});

/** An open event stream: its response (headers in), and how to hang up or wait for its end. */
interface OpenStream {
  status: number;
  /** Resolves when the response is over: true when the server ended it (complete), false when it broke off. */
  ended: Promise<boolean>;
  close(): void;
}

function openStream(path: string, method = "GET", body?: unknown): Promise<OpenStream & { json?: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, agent: false, headers: { ...bearer, ...(body ? { "Content-Type": "application/json" } : {}) } });
    req.on("error", reject).on("response", (res) => {
      const status = res.statusCode ?? 0;
      let text = "";
      res.setEncoding("utf8").on("data", (s: string) => (text += s));
      res.on("error", () => undefined);
      // Not events.once: an aborted response emits 'error' first, which once() would reject with.
      const ended = new Promise<boolean>((done) => res.on("close", () => done(res.complete)));
      if (status !== 200) void ended.then(() => resolve({ status, ended, close: () => req.destroy(), json: JSON.parse(text) as unknown }));
      else resolve({ status, ended, close: () => req.destroy() });
    });
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

test(`a token holds at most ${MAX_STREAMS_PER_TOKEN} event streams: the next is a 429 (a runs/stream refused starts no run); a closed stream's slot works again`, async () => {
  const c = serve.client();
  const thread = await c.threads.create();
  model.setScript([{ content: "held open while streams pile up", gate: { afterChunks: 1, until: "serve-streams" } }]);
  const run = await c.runs.create(thread.thread_id, "lead_agent", { input: input("go") });
  await model.waitForGate("serve-streams");
  const path = `/threads/${thread.thread_id}/runs/${run.run_id}/stream`;
  const streams = await Promise.all(Array.from({ length: MAX_STREAMS_PER_TOKEN }, () => openStream(path)));
  assert.deepEqual([...new Set(streams.map((s) => s.status))], [200]);

  const over = await openStream(path);
  assert.equal(over.status, 429);
  assert.equal(over.json.error, "too_many_streams");
  assert.match(over.json.message, new RegExp(`${MAX_STREAMS_PER_TOKEN} event streams open for its token`));
  const other = await c.threads.create();
  const refusedRun = await openStream(`/api/threads/${other.thread_id}/runs/stream`, "POST", { assistant_id: "lead_agent", input: input("more") });
  assert.equal(refusedRun.status, 429);
  assert.deepEqual(await c.runs.list(other.thread_id), [], "no run was started for the refused stream");

  // A client hangs up: the server frees its slot (it says so), and the next stream gets it.
  streams[0]!.close();
  await serve.waitForStderr(new RegExp(`event stream of run ${run.run_id} closed \\(${MAX_STREAMS_PER_TOKEN - 1} open\\)`));
  const again = await openStream(path);
  assert.equal(again.status, 200);
  assert.equal((await openStream(path)).status, 429, "and the cap holds again");

  // The run ends: every stream ends with it, and the slots are free for the next run's stream.
  model.gate("serve-streams").open();
  assert.deepEqual([...new Set(await Promise.all([...streams.slice(1), again].map((s) => s.ended)))], [true], "each ended by the server, with the run");
  model.setScript([{ content: "streamed after" }]);
  const next = await openStream(`/threads/${other.thread_id}/runs/stream`, "POST", { assistant_id: "lead_agent", input: input("now") });
  assert.equal(next.status, 200);
  assert.equal(await next.ended, true);
  assert.equal((await c.runs.list(other.thread_id)).length, 1);
});
