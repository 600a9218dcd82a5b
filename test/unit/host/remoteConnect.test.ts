// The host's side of a remote harness's socket, against a real `ws` server on loopback: the token
// travels in the upgrade's Authorization header, a refused token is `unauthorized` (not retried),
// a server that is not there yet is retried with backoff until it answers.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { connectRemote, displayUrl, harnessUrlProblem, RemoteConnectError, rpcUrl } from "../../../extension/host/remote/connect.js";
import { RemoteLink, type LinkState } from "../../../extension/host/remote/link.js";

const TOKEN = "s3cret-token";
const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** An HTTP server whose /rpc upgrade wants the token, echoing each message back. */
async function rpcServer(port = 0): Promise<{ url: string; seen: Array<string | undefined>; sockets: Duplex[] }> {
  const seen: Array<string | undefined> = [];
  const sockets: Duplex[] = [];
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  http.on("upgrade", (req: IncomingMessage, socket, head) => {
    seen.push(req.headers.authorization);
    if (req.url !== "/rpc" || req.headers.authorization !== `Bearer ${TOKEN}`) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    sockets.push(socket);
    wss.handleUpgrade(req, socket, head, (ws) => ws.on("message", (data) => ws.send(data)));
  });
  servers.push(http);
  await new Promise<void>((r) => http.listen(port, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, seen, sockets };
}

test("URLs: http → ws at /rpc, no credentials or query accepted, shown without them", () => {
  assert.equal(rpcUrl("http://h:2024"), "ws://h:2024/rpc");
  assert.equal(rpcUrl("https://h/base/"), "wss://h/base/rpc");
  assert.equal(harnessUrlProblem("https://h:2024"), undefined);
  assert.equal(harnessUrlProblem("http://127.0.0.1:2024"), undefined);
  assert.equal(harnessUrlProblem("http://localhost:2024"), undefined);
  assert.equal(harnessUrlProblem("http://[::1]:2024"), undefined);
  // The token would cross the network in clear text.
  assert.match(harnessUrlProblem("http://h:2024") ?? "", /unencrypted: use https:\/\//);
  assert.match(harnessUrlProblem("ws://10.0.0.5:2024") ?? "", /unencrypted/);
  assert.match(harnessUrlProblem("http://user:pw@h:2024") ?? "", /must not carry credentials/);
  assert.match(harnessUrlProblem("http://h:2024/?token=x") ?? "", /must not carry a query/);
  assert.match(harnessUrlProblem("ftp://h") ?? "", /http\(s\)/);
  assert.match(harnessUrlProblem("build box") ?? "", /not a URL/);
  assert.equal(displayUrl("https://h:1/x/"), "https://h:1/x");
});

test("with the token the socket opens and carries bytes both ways; the token went in the header only", async () => {
  const server = await rpcServer();
  const { socket, stream } = await connectRemote(server.url, TOKEN);
  const echoed = new Promise<string>((resolve) => stream.once("data", (d: Buffer) => resolve(d.toString())));
  stream.write("Content-Length: 2\r\n\r\n{}");
  assert.equal(await echoed, "Content-Length: 2\r\n\r\n{}");
  assert.deepEqual(server.seen, [`Bearer ${TOKEN}`]);
  socket.terminate();
});

test("the stream closes when the server goes away (what the JSON-RPC reader waits for)", { timeout: 10_000 }, async () => {
  const server = await rpcServer();
  const { stream } = await connectRemote(server.url, TOKEN);
  const closed = new Promise<void>((resolve) => stream.once("close", () => resolve()));
  stream.resume();
  // The server's socket is dropped without a close frame, as when its process dies.
  for (const s of server.sockets) s.destroy();
  await closed;
});

test("a server that stops answering pings is taken for gone", { timeout: 10_000 }, async () => {
  const http = createServer();
  const wss = new WebSocketServer({ server: http, autoPong: false });
  wss.on("connection", () => undefined);
  servers.push(http);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const { stream } = await connectRemote(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, TOKEN, undefined, 50);
  stream.resume();
  await new Promise<void>((resolve) => stream.once("close", () => resolve()));
  for (const c of wss.clients) c.terminate();
});

test("a wrong or missing token is `unauthorized`, with what to do", async () => {
  const server = await rpcServer();
  await assert.rejects(connectRemote(server.url, "wrong"), (err: unknown) => {
    assert.ok(err instanceof RemoteConnectError);
    assert.equal(err.code, "unauthorized");
    assert.equal(err.status, 401);
    assert.match(err.message, /refused the token \(HTTP 401\)\. Set the right one with DeerFlow: Set Remote Harness Token/);
    assert.doesNotMatch(err.message, /wrong/, "the token is never in a message");
    return true;
  });
  await assert.rejects(connectRemote(server.url, undefined), /needs a token \(HTTP 401\)/);
});

test("a refused token ends the link's attempts at once", async () => {
  const server = await rpcServer();
  const states: LinkState["state"][] = [];
  const link = new RemoteLink({ url: server.url, shown: server.url, token: "wrong" }, (s) => states.push(s.state), 10);
  await assert.rejects(link.connect(new AbortController().signal), (err: unknown) => err instanceof RemoteConnectError && err.code === "unauthorized");
  assert.deepEqual(states, ["connecting", "unauthorized"]);
  assert.equal(server.seen.length, 1);
});

test("a server that is not there is retried with backoff until it answers, and says so", async () => {
  // A port that was free a moment ago: nothing listens until the link has failed once.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const url = `http://127.0.0.1:${port}`;
  const states: LinkState[] = [];
  let started: Promise<unknown> | undefined;
  const link = new RemoteLink({ url, shown: url, token: TOKEN }, (s) => {
    states.push(s);
    if (s.state === "unreachable" && s.attempt === 2) started ??= rpcServer(port);
  }, 20);
  const { socket } = await link.connect(new AbortController().signal);
  await started;
  socket.terminate();
  const unreachable = states.filter((s) => s.state === "unreachable");
  assert.ok(unreachable.length >= 2);
  assert.match((unreachable[0] as { message: string }).message, /Cannot reach the remote harness at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  assert.deepEqual(unreachable.slice(0, 2).map((s) => (s as { retryMs: number }).retryMs), [20, 40], "backoff doubles");
  assert.equal(states.at(-1)?.state, "connected");
});

test("aborting stops the attempts", async () => {
  const controller = new AbortController();
  const link = new RemoteLink({ url: "http://127.0.0.1:9", shown: "x", token: undefined }, (s) => {
    if (s.state === "unreachable") controller.abort();
  }, 10_000);
  await assert.rejects(link.connect(controller.signal), /cancelled/);
});

test("a 403 from serve's Host/Origin check says why (not the token), and is not retried", async () => {
  const http = createServer((_req, res) => res.writeHead(404).end());
  const message = 'This server does not answer to the host name "build-box:2024" (a page on another domain pointing at it?). To serve it under that name, start serve with --allow-origin http(s)://build-box:2024.';
  http.on("upgrade", (_req: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify({ error: "host_denied", message });
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  servers.push(http);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const err = await connectRemote(url, TOKEN).then(() => assert.fail("connected"), (e: unknown) => e);
  assert.ok(err instanceof RemoteConnectError);
  assert.equal(err.code, "unauthorized");
  assert.equal(err.status, 403);
  assert.equal(err.message, `The remote harness at ${url} refused this connection: ${message}`);
  assert.doesNotMatch(err.message, /token/);
});
