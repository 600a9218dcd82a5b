// `deerflow serve`'s `/rpc` WebSocket (issue 26 item 4): the harness's own JSON-RPC protocol, what
// VS Code uses when `deerflow.harness.url` names a server. Driven with the same two libraries the
// extension host uses (ws, vscode-jsonrpc): the bearer token on the upgrade, what the server says
// about itself, the served folders only, a run with an artifact read back through files/read, an
// approval decided over the socket, runs/ended only to clients following the thread, and a run
// that goes on after its client's socket closed. One server process for the file, on the data
// dir's SQLite, or on Postgres in the Postgres tier.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import WebSocket from "ws";
import { ResponseError } from "vscode-languageserver/node.js";
import { tempDir } from "./helpers/cli.js";
import { startScriptedServe, SERVE_TOKEN, type ServeProcess } from "./helpers/serveProcess.js";
import { connectRpc, refusedUpgrade, type RpcClient } from "./helpers/rpcClient.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import type { HarnessSettings, JournalEvent } from "../../extension/protocol/rpc.js";
import { MemoryStorage } from "../../extension/harness/memory/storage.js";
import { emptyMemory } from "../../extension/harness/memory/schema.js";

let model: ModelServer;
let serve: ServeProcess;
let folder: string;
let dataDir: string;
let database: string | undefined;
const clients: RpcClient[] = [];

const settings: HarnessSettings = { models: [], sandbox: { provider: "local", allow_host_commands: false }, workspace_trusted: true };

async function client(): Promise<RpcClient> {
  const c = await connectRpc(serve.url, SERVE_TOKEN);
  clients.push(c);
  await c.conn.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} });
  return c;
}

/** The harness's stable error code of a refused request. */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ResponseError, String(err));
    return (err.data as { code: string }).code;
  }
  assert.fail("the request was not refused");
}

const endOf = (c: RpcClient, subscriptionId: string, runId: string): Promise<JournalEvent> =>
  c
    .waitFor("events/event", (p) => p.subscriptionId === subscriptionId && p.events.some((e) => e.event === "end" && e.run_id === runId))
    .then((p) => p.events.find((e) => e.event === "end" && e.run_id === runId)!);

before(async () => {
  model = await startModelServer();
  const started = await startScriptedServe(model.url);
  serve = started.serve;
  folder = realpathSync(started.dirs.workspace);
  dataDir = started.dirs.dataDir;
  database = started.database;
});

after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await serve?.stop();
  await model?.close();
});

test("the upgrade needs the bearer token and the /rpc path; a refusal is a JSON HTTP answer and no socket", async () => {
  const ws = `${serve.url.replace(/^http/, "ws")}/rpc`;
  const none = await refusedUpgrade(ws, {});
  assert.equal(none?.status, 401);
  assert.equal((JSON.parse(none.body) as { error: string }).error, "unauthorized");
  assert.equal((await refusedUpgrade(ws, { Authorization: "Bearer not-the-token-at-all" }))?.status, 401);
  assert.equal((await refusedUpgrade(`${serve.url.replace(/^http/, "ws")}/threads`, { Authorization: `Bearer ${SERVE_TOKEN}` }))?.status, 404);
  assert.equal(await refusedUpgrade(ws, { Authorization: `Bearer ${SERVE_TOKEN}` }), undefined, "accepted with the token");
});

test("frames that are not JSON-RPC get JSON-RPC's errors (-32700, -32600), a NUL in a path a clean refusal, and the socket keeps serving", async () => {
  const ws = new WebSocket(`${serve.url.replace(/^http/, "ws")}/rpc`, { headers: { Authorization: `Bearer ${SERVE_TOKEN}`, Origin: serve.url } });
  await once(ws, "open");
  const answers: Array<Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  // LSP framing over the socket's messages (a header and its body may come as two): Content-Length, a blank line, the body.
  let buffered = "";
  ws.on("message", (d) => {
    buffered += (d as Buffer).toString("utf8");
    for (;;) {
      const sep = buffered.indexOf("\r\n\r\n");
      const length = Number(/Content-Length: (\d+)/i.exec(buffered.slice(0, sep))?.[1]);
      if (sep < 0 || !Number.isFinite(length) || buffered.length < sep + 4 + length) break;
      answers.push(JSON.parse(buffered.slice(sep + 4, sep + 4 + length)) as Record<string, any>);
      buffered = buffered.slice(sep + 4 + length);
    }
    for (const w of waiters.splice(0)) w();
  });
  const next = async (n: number): Promise<Record<string, any>> => {
    while (answers.length < n) await new Promise<void>((r) => waiters.push(r));
    return answers[n - 1]!;
  };
  const send = (body: string): void => void ws.send(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const thread = (await (await client()).request("threads/create", { workspaceFolder: folder })).thread_id;
  send("{not json");
  assert.deepEqual(await next(1), { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the frame is not JSON." } });
  send(JSON.stringify({ hello: "there", id: 4 }));
  const invalid = await next(2);
  assert.equal(invalid.error.code, -32600);
  assert.equal(invalid.id, 4);
  send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "files/read", params: { workspaceFolder: folder, threadId: thread, path: "/mnt/user-data/outputs/a\u0000b" } }));
  const nul = await next(3);
  assert.equal(nul.id, 5);
  assert.equal(nul.error.data.code, "path_denied");
  assert.ok(!nul.error.message.includes(folder), `no host path: ${nul.error.message}`);
  send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "threads/list", params: { workspaceFolder: folder } }));
  const listed = await next(4);
  assert.equal(listed.id, 6);
  assert.ok(Array.isArray(listed.result), "the same socket still serves");
  ws.close();
});

test("harness/initialize answers what the server serves; the editor's data dir, settings and API keys are not taken", async () => {
  const c = await client();
  const init = await c.request("harness/initialize", { dataDir: tempDir("ignored"), settings: { ...settings, models: [{ name: "mine", model: "x", base_url: "http://127.0.0.1:9/v1" }] } });
  assert.ok(init.remote, "a remote harness says so");
  assert.deepEqual(init.remote.workspaces, [{ name: "main", folder }]);
  assert.deepEqual(init.remote.models.map((m) => m.name), ["scripted"], "the server's models, not the editor's");
  assert.equal(init.remote.default_model, "scripted");
  assert.equal(await codeOf(c.request("harness/configure", { settings, apiKeys: { OPENAI_API_KEY: "sk-the-users-own-key" } })), "invalid_params");
  assert.equal(await c.request("harness/configure", { settings }), null);
  // Only served folders: another folder of the server's machine is refused, naming what is served.
  const other = tempDir("not-served");
  const refused = c.request("threads/list", { workspaceFolder: other });
  assert.equal(await codeOf(refused), "workspace_mismatch");
  await refused.catch((err: Error) => assert.match(err.message, /main \(/));
  assert.equal(await codeOf(c.request("threads/list", { workspaceFolder: "/no/such/folder" })), "workspace_mismatch");
  assert.ok(Array.isArray(await c.request("threads/list", { workspaceFolder: folder })));
});

test("a run streams over the socket; its artifact comes back through files/read; runs/ended goes only to clients following the thread", async () => {
  const a = await client();
  const bystander = await client();
  await a.request("harness/initialize", { dataDir: "/ignored", settings });
  await bystander.request("harness/initialize", { dataDir: "/ignored", settings });
  const thread = await a.request("threads/create", { workspaceFolder: folder, title: "remote" });
  const { subscriptionId } = await a.request("events/subscribe", { workspaceFolder: folder, threadId: thread.thread_id, afterSeq: 0 });
  const report = "# Report\n\nmade on the server\n";
  model.setScript([
    {
      content: "Writing.",
      toolCalls: [{ id: "call_w", name: "write_file", args: { description: "report", path: "/mnt/user-data/outputs/report.md", content: report } }],
    },
    { content: "Presenting.", toolCalls: [{ id: "call_p", name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] },
    { content: "The report is ready." },
  ]);
  const started = await a.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "write the report" });
  const end = await endOf(a, subscriptionId, started.run_id);
  assert.equal((end.data as { status: string }).status, "success", JSON.stringify(end.data));
  const ended = await a.waitFor("runs/ended", (p) => p.runId === started.run_id);
  assert.equal(ended.workspaceFolder, folder, "notifications name the server's folder");
  const kinds = a.events(subscriptionId).map((e) => e.event);
  assert.ok(kinds.includes("messages") || kinds.includes("values"), `streamed: ${kinds.join(",")}`);

  const state = await a.request("threads/state", { workspaceFolder: folder, threadId: thread.thread_id });
  assert.deepEqual(state.artifacts.map((x) => x.path), ["/mnt/user-data/outputs/report.md"]);
  const file = await a.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/mnt/user-data/outputs/report.md" });
  assert.equal(Buffer.from(file.base64, "base64").toString("utf8"), report);
  assert.equal(file.size, Buffer.byteLength(report));
  assert.equal(await codeOf(a.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/mnt/user-data/outputs/missing.md" })), "file_not_found");
  assert.equal(await codeOf(a.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/etc/passwd" })), "invalid_params", "not a virtual path at all");
  // A link the agent planted out of the thread's folders is not followed.
  const outputs = join(folder, ".deerflow", "threads", thread.thread_id, "outputs");
  symlinkSync("/etc/hostname", join(outputs, "planted"));
  assert.equal(await codeOf(a.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/mnt/user-data/outputs/planted" })), "path_denied");
  // Another thread's outputs are not this thread's to read.
  const other = await a.request("threads/create", { workspaceFolder: folder });
  mkdirSync(join(folder, ".deerflow", "threads", other.thread_id, "outputs"), { recursive: true });
  writeFileSync(join(folder, ".deerflow", "threads", other.thread_id, "outputs", "secret.txt"), "theirs");
  assert.equal(await codeOf(a.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: `/mnt/user-data/workspace/.deerflow/threads/${other.thread_id}/outputs/secret.txt` })), "path_denied");

  // The bystander follows nothing: it was not told of the run. Its replay of the thread comes on
  // the same socket after anything sent to it before, so an announcement would be recorded by now.
  const late = await bystander.request("events/subscribe", { workspaceFolder: folder, threadId: thread.thread_id, afterSeq: 0 });
  const replayedEnd = await endOf(bystander, late.subscriptionId, started.run_id);
  assert.equal(replayedEnd.seq, end.seq, "the same journal, replayed");
  assert.equal(bystander.notifications.filter((n) => n.method === "runs/ended").length, 0);
});

test("a remote client attaches by bytes only: runs/start files naming server paths (/etc/passwd, a secret outside the served folders) get none of their bytes anywhere; uploads/put copies are 0600", async () => {
  const c = await client();
  await c.request("harness/initialize", { dataDir: "/ignored", settings });
  const thread = await c.request("threads/create", { workspaceFolder: folder });
  const { subscriptionId } = await c.request("events/subscribe", { workspaceFolder: folder, threadId: thread.thread_id, afterSeq: 0 });
  const secret = join(tempDir("server-secret"), "secret.txt");
  const marker = `SERVER-SECRET-${process.pid}-${Date.now()}`;
  writeFileSync(secret, marker, { mode: 0o600 });
  const refusal = async (files: string[]): Promise<string> => {
    try {
      await c.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "read it", files });
    } catch (err) {
      assert.ok(err instanceof ResponseError);
      assert.equal((err.data as { code: string }).code, "invalid_params");
      return err.message;
    }
    return assert.fail("runs/start with a host path was not refused");
  };
  const inServedFolder = join(folder, "inside.txt");
  writeFileSync(inServedFolder, "inside");
  const texts = [await refusal(["/etc/passwd"]), await refusal([secret]), await refusal([join(folder, "missing.txt")]), await refusal([inServedFolder])];
  assert.equal(new Set(texts).size, 1, `one refusal whatever the path (no existence oracle): ${texts.join(" | ")}`);
  assert.deepEqual(await c.request("runs/list", { workspaceFolder: folder, threadId: thread.thread_id }), [], "no run was started");
  assert.equal(existsSync(join(folder, ".deerflow", "threads", thread.thread_id, "uploads", "passwd")), false);

  // The way in: the bytes, then the stored name. A name with a folder in it is refused.
  assert.equal(await codeOf(c.request("uploads/put", { workspaceFolder: folder, threadId: thread.thread_id, name: "../escape.txt", base64: "eA==" })), "invalid_params");
  const put = await c.request("uploads/put", { workspaceFolder: folder, threadId: thread.thread_id, name: "notes.txt", base64: Buffer.from("client notes").toString("base64") });
  assert.deepEqual(put, { filename: "notes.txt", size: 12, path: "/mnt/user-data/uploads/notes.txt" });
  const stored = join(folder, ".deerflow", "threads", thread.thread_id, "uploads", "notes.txt");
  assert.equal(statSync(stored).mode & 0o777, 0o600, "not readable by other users of the server");
  assert.equal(await codeOf(c.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "hi", uploaded: ["passwd"] })), "usage", "only names uploads/put stored");
  model.setScript([{ content: "Reading.", toolCalls: [{ id: "call_r", name: "read_file", args: { description: "notes", path: "/mnt/user-data/uploads/notes.txt" } }] }, { content: "Read." }]);
  const before = model.requests.length;
  const started = await c.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "read my notes", uploaded: ["notes.txt"] });
  const end = await endOf(c, subscriptionId, started.run_id);
  assert.equal((end.data as { status: string }).status, "success", JSON.stringify(end.data));
  const sentToModel = JSON.stringify(model.requests.slice(before).map((r) => r.body));
  assert.match(sentToModel, /client notes/, "the uploaded bytes reached the run");
  assert.doesNotMatch(sentToModel, new RegExp(marker), "the server's file never reached the model");
  const state = await c.request("threads/state", { workspaceFolder: folder, threadId: thread.thread_id });
  assert.deepEqual(state.uploaded_files.map((f) => f.filename), ["notes.txt"]);
  assert.equal(await codeOf(c.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/mnt/user-data/uploads/secret.txt" })), "file_not_found");
  assert.equal(await codeOf(c.request("files/read", { workspaceFolder: folder, threadId: thread.thread_id, path: "/mnt/user-data/uploads/passwd" })), "file_not_found");
});

test("an approval pause is announced and decided over the socket; the decided call runs", async () => {
  const c = await client();
  await c.request("harness/initialize", { dataDir: "/ignored", settings });
  const thread = await c.request("threads/create", { workspaceFolder: folder });
  await c.request("events/subscribe", { workspaceFolder: folder, threadId: thread.thread_id, afterSeq: 0 });
  model.setScript([
    { content: "Adding a task.", toolCalls: [{ id: "call_t", name: "write_file", args: { description: "tasks", path: "/mnt/user-data/workspace/.vscode/tasks.json", content: "{}\n" } }] },
    { content: "Added." },
  ]);
  const first = await c.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "add a task" });
  const paused = await c.waitFor("runs/ended", (p) => p.runId === first.run_id);
  assert.deepEqual(paused.pendingApprovals?.map((p) => p.tool_call_id), ["call_t"], "a protected path waits on the user");
  assert.equal(existsSync(join(folder, ".vscode", "tasks.json")), false);
  const decided = await c.request("runs/decide", { workspaceFolder: folder, threadId: thread.thread_id, decisions: [{ tool_call_id: "call_t", decision: "approve" }] });
  const done = await c.waitFor("runs/ended", (p) => p.runId === decided.run_id);
  assert.equal(done.status, "success");
  assert.equal(existsSync(join(folder, ".vscode", "tasks.json")), true, "the approved write ran on the server's folder");
});

test("a run goes on when its client's socket closes; another connection replays it to the end", async () => {
  const a = await client();
  await a.request("harness/initialize", { dataDir: "/ignored", settings });
  const thread = await a.request("threads/create", { workspaceFolder: folder });
  const gate = model.gate("remote-close");
  model.setScript([{ content: "still going after the laptop slept", gate: { until: gate, afterChunks: 2 } }]);
  const started = await a.request("runs/start", { workspaceFolder: folder, threadId: thread.thread_id, prompt: "keep going" });
  await gate.reached;
  await a.close();
  gate.open();
  const b = await client();
  await b.request("harness/initialize", { dataDir: "/ignored", settings });
  const { subscriptionId } = await b.request("events/subscribe", { workspaceFolder: folder, threadId: thread.thread_id, afterSeq: 0 });
  const end = await endOf(b, subscriptionId, started.run_id);
  assert.equal((end.data as { status: string }).status, "success");
  const state = await b.request("threads/state", { workspaceFolder: folder, threadId: thread.thread_id });
  assert.equal(state.messages.at(-1)?.content, "still going after the laptop slept");
});

test("memory saved over the socket is the server's: in its data dir, or with --database in that database, where every worker reads it", async () => {
  const c = await client();
  await c.request("harness/initialize", { dataDir: "/ignored", settings });
  const fact = { id: "fact_remote", content: "Deploys on Fridays.", category: "context" as const, confidence: 0.9, createdAt: "2026-12-01T00:00:00.000Z", source: "user", scope: "global" as const };
  const saved = await c.request("memory/set", { memory: { ...emptyMemory(), facts: [fact] } });
  // What another process on the same storage reads: another worker, `deerflow memory show --database`.
  const storage = new MemoryStorage({ dataDir, ...(database ? { database } : {}) });
  try {
    assert.deepEqual(storage.document.read().facts.map((f) => f.content), ["Deploys on Fridays."]);
    assert.equal(storage.document.version(), saved.version);
  } finally {
    storage.close();
  }
  assert.equal(existsSync(join(dataDir, "memory", "memory.json")), database === undefined, database ? "not in the data dir" : "in the data dir");
});
