// The harness process end to end: `node dist/server.js --stdio` driven over JSON-RPC as the
// extension's language client drives it, with a real SQLite file, real workspace folders and the
// scripted OpenAI-compatible server as the only fake.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startModelServer, type ModelServer, type ScriptedReply } from "../fixtures/modelServer.js";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";
import { runCli, sandboxDirs, tempDir } from "./helpers/cli.js";
import { errorOf, settings, startHarness, type HarnessProcess } from "./helpers/server.js";

let model: ModelServer;
before(async () => {
  model = await startModelServer();
});
after(async () => {
  await model.close();
});

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

async function initialized(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<HarnessProcess> {
  const h = startHarness(env);
  const r = await h.request("harness/initialize", { dataDir, settings: settings(model.url) });
  assert.equal(r.pid, h.child.pid);
  return h;
}

/** Start a run with a fresh script on a new (or given) thread; resolves with ids and the run's events. */
async function run(h: HarnessProcess, workspace: string, script: ScriptedReply[], opts: { threadId?: string; prompt?: string; files?: string[]; rejectPending?: boolean } = {}) {
  model.setScript(script);
  const first = model.requests.length;
  const threadId = opts.threadId ?? (await h.request("threads/create", { workspaceFolder: workspace })).thread_id;
  const { subscriptionId } = await h.request("events/subscribe", {
    workspaceFolder: workspace,
    threadId,
    afterSeq: (await h.request("threads/state", { workspaceFolder: workspace, threadId })).last_seq,
  });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt: opts.prompt ?? "go", ...(opts.files ? { files: opts.files } : {}), ...(opts.rejectPending ? { rejectPending: true } : {}) });
  const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
  await h.request("events/unsubscribe", { subscriptionId });
  const events = h.events(subscriptionId).filter((e) => e.run_id === started.run_id);
  return { threadId, runId: started.run_id, end, events, subscriptionId, requests: () => model.requests.slice(first) };
}

test("initialize; threads create, list, rename, delete; nothing before initialize", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = startHarness();
  try {
    const early = await errorOf(h.request("threads/list", { workspaceFolder: workspace }));
    assert.equal(early.data?.code, "not_initialized");
    // The language client's own handshake is answered too.
    const lsp = (await h.raw("initialize", { processId: null, rootUri: null, capabilities: {} })) as { serverInfo: { name: string } };
    assert.equal(lsp.serverInfo.name, "deerflow-harness");
    const init = await h.request("harness/initialize", { dataDir, settings: settings(model.url) });
    assert.match(init.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(await h.request("threads/list", { workspaceFolder: workspace }), []);
    const a = await h.request("threads/create", { workspaceFolder: workspace, title: "First" });
    const b = await h.request("threads/create", { workspaceFolder: workspace });
    assert.equal(a.title, "First");
    assert.equal(b.title, null);
    assert.equal(a.workspace_folder, workspace);
    const renamed = await h.request("threads/rename", { workspaceFolder: workspace, threadId: b.thread_id, title: "  Second  " });
    assert.equal(renamed.title, "Second");
    const listed = await h.request("threads/list", { workspaceFolder: workspace });
    assert.deepEqual(listed.map((t) => t.thread_id).sort(), [a.thread_id, b.thread_id].sort());
    assert.deepEqual(await h.request("threads/delete", { workspaceFolder: workspace, threadId: a.thread_id }), { deleted: true });
    assert.deepEqual(await h.request("threads/delete", { workspaceFolder: workspace, threadId: a.thread_id }), { deleted: false });
    assert.deepEqual((await h.request("threads/list", { workspaceFolder: workspace })).map((t) => t.thread_id), [b.thread_id]);
    // The database is in the data directory, not in the workspace.
    assert.equal(readdirSync(join(dataDir, "workspaces")).length, 1);
    assert.equal(existsSync(join(workspace, ".deerflow", "harness.db")), false);
  } finally {
    await h.close();
  }
});

test("bad params answer a JSON-RPC error with data.code, and the process keeps serving", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const missing = await errorOf(h.raw("threads/list", {}));
    assert.equal(missing.code, -32602);
    assert.equal(missing.data?.code, "invalid_params");
    assert.match(missing.message, /workspaceFolder/);
    assert.equal((await errorOf(h.raw("threads/list"))).data?.code, "invalid_params");
    assert.equal((await errorOf(h.raw("threads/list", { workspaceFolder: "relative/path" }))).data?.code, "invalid_params");
    assert.equal((await errorOf(h.raw("threads/state", { workspaceFolder: workspace, threadId: "../etc" }))).data?.code, "invalid_params");
    assert.equal((await errorOf(h.raw("events/subscribe", { workspaceFolder: workspace, threadId: "t1", afterSeq: -1 }))).data?.code, "invalid_params");
    assert.equal((await errorOf(h.raw("runs/start", { workspaceFolder: workspace, threadId: "t1", prompt: "   " }))).data?.code, "invalid_params");
    assert.equal((await errorOf(h.raw("harness/configure", { settings: { models: "many" } }))).data?.code, "invalid_params");
    const gone = await errorOf(h.request("threads/state", { workspaceFolder: workspace, threadId: "nope" }));
    assert.equal(gone.data?.code, "thread_not_found");
    assert.equal((await errorOf(h.request("threads/list", { workspaceFolder: join(workspace, "missing") }))).data?.code, "storage");
    const t = await h.request("threads/create", { workspaceFolder: workspace });
    const unknown = await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hi", model: "nope" }));
    assert.equal(unknown.data?.code, "unknown_model");
    assert.match(unknown.message, /Configured models: scripted/);
    const file = await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hi", files: [join(workspace, "none.txt")] }));
    assert.equal(file.data?.code, "usage");
    // The editor names files of its workspace folders only; outside, missing or not a file read the same (no existence oracle).
    const outside = join(tempDir("outside"), "none.txt");
    writeFileSync(outside, "not the editor's to attach");
    mkdirSync(join(workspace, "d", "none.txt"), { recursive: true });
    for (const path of [outside, "/etc/none.txt", join(workspace, "d", "none.txt")]) {
      const e = await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hi", files: [path] }));
      assert.deepEqual([e.data?.code, e.message], ["usage", file.message], path);
    }
    assert.equal((await errorOf(h.raw("no/such"))).code, -32601);
    // Refused requests wrote nothing: no run, and the thread still works.
    assert.deepEqual(await h.request("runs/list", { workspaceFolder: workspace, threadId: t.thread_id }), []);
    assert.deepEqual(await h.request("threads/list", { workspaceFolder: workspace }).then((l) => l.length), 1);
  } finally {
    await h.close();
  }
});

test("runs/start answers at once; a subscriber gets the streamed events with gap-free seq; runs/ended; the key stays in memory", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const secret = "sk-server-test-0123456789abcdef";
    await h.request("harness/configure", { settings: settings(model.url), apiKeys: { OPENAI_API_KEY: secret } });
    const r = await run(h, workspace, [{ content: "Hello from the scripted model, streamed word by word." }]);
    assert.equal(r.end.event, "end");
    assert.equal((r.end.data as { status: string }).status, "success");
    const seqs = r.events.map((e) => e.seq);
    assert.equal(r.events[0]!.event, "metadata");
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1]! + 1, "seq is gap-free and increasing");
    const text = r.events.filter((e) => e.event === "messages").map((e) => (e.data as Array<{ content: string }>)[0]!.content).join("");
    assert.equal(text.trim(), "Hello from the scripted model, streamed word by word.");
    const ended = await h.waitNote("runs/ended", (p) => p.runId === r.runId);
    assert.deepEqual(ended, { workspaceFolder: workspace, threadId: r.threadId, runId: r.runId, status: "success" });
    assert.equal(r.requests()[0]!.headers.authorization, `Bearer ${secret}`);
    // Never stored, never logged.
    for (const n of h.notes.filter((x) => x.method === "log/message")) assert.ok(!JSON.stringify(n.params).includes(secret));
    const key = readdirSync(join(dataDir, "workspaces"))[0]!;
    for (const f of readdirSync(join(dataDir, "workspaces", key))) {
      assert.ok(!readFileSync(join(dataDir, "workspaces", key, f)).includes(secret), `${f} holds the API key`);
    }
    const runs = await h.request("runs/list", { workspaceFolder: workspace, threadId: r.threadId });
    assert.deepEqual(runs.map((x) => [x.run_id, x.status, x.model]), [[r.runId, "success", "scripted"]]);

    // A later subscriber from seq k gets exactly the events after k, in one batch (one tick).
    const all = h.events(r.subscriptionId);
    const k = all[Math.floor(all.length / 2)]!.seq;
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId: r.threadId, afterSeq: k });
    await h.waitEvent(subscriptionId, (e) => e.event === "end");
    const replayed = h.events(subscriptionId);
    assert.deepEqual(replayed, all.filter((e) => e.seq > k));
    const batches = h.notes.filter((n) => n.method === "events/event" && n.params.subscriptionId === subscriptionId);
    assert.equal(batches.length, 1, "a replay is coalesced into one notification");
    await h.request("events/unsubscribe", { subscriptionId });
  } finally {
    await h.close();
  }
});

test("each model of a run gets the key held for its own api_key_env: the title model on another key source never gets the run's key", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const runKey = "sk-run-key-0123456789abcdef";
    const titleKey = "sk-title-key-0123456789abcdef";
    const twoModels = settings(model.url, {
      models: [
        { name: "scripted", model: "scripted", base_url: model.url, supports_vision: true },
        { name: "titler", model: "titler-id", base_url: model.url, api_key_env: "TITLE_PROVIDER_KEY" },
      ],
      title_model: "titler",
    });
    const titleRequest = (r: { requests(): Array<{ body: { model?: string } | null; headers: Record<string, string> }> }) => r.requests().find((q) => q.body?.model === "titler-id");

    // The title model's source holds no key: it gets none (the environment's), not the run's.
    await h.request("harness/configure", { settings: twoModels, apiKeys: { OPENAI_API_KEY: runKey } });
    const a = await run(h, workspace, [{ content: "The answer." }, { content: "A Title" }]);
    assert.equal((a.end.data as { status: string }).status, "success");
    assert.equal(a.requests().find((q) => q.body?.model === "scripted")!.headers.authorization, `Bearer ${runKey}`);
    assert.ok(titleRequest(a), "the title model was asked");
    assert.notEqual(titleRequest(a)!.headers.authorization, `Bearer ${runKey}`, "the run's key went to the title model's endpoint");

    // With its own key held, it gets that one.
    await h.request("harness/configure", { settings: twoModels, apiKeys: { TITLE_PROVIDER_KEY: titleKey } });
    const b = await run(h, workspace, [{ content: "The answer." }, { content: "A Title" }]);
    assert.equal(b.requests().find((q) => q.body?.model === "scripted")!.headers.authorization, `Bearer ${runKey}`);
    assert.equal(titleRequest(b)!.headers.authorization, `Bearer ${titleKey}`);
  } finally {
    await h.close();
  }
});

test("a run that ends on a clarification question is announced with needsUser", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const r = await run(h, workspace, [
      { toolCalls: [{ name: "ask_clarification", args: { question: "Which file?", clarification_type: "missing_info" } }] },
    ]);
    assert.equal((r.end.data as { status: string }).status, "success");
    const ended = await h.waitNote("runs/ended", (p) => p.runId === r.runId);
    assert.equal(ended.needsUser, true);
  } finally {
    await h.close();
  }
});

test("a run another process writes (the CLI on the same folder) streams to subscribers live and is announced", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    model.setScript([{ content: "Answered through the CLI." }]);
    const t = await h.request("threads/create", { workspaceFolder: workspace });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId: t.thread_id, afterSeq: 0 });
    const cli = await runCli(["run", "--workspace", workspace, "--data-dir", dataDir, "--thread", t.thread_id, "--base-url", model.url, "--model", "scripted", "--prompt", "hi"]);
    assert.equal(cli.code, 0, cli.stderr);
    const runId = cli.lines.at(-1)!.run_id as string;
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end");
    assert.equal(end.run_id, runId);
    assert.deepEqual(h.events(subscriptionId).map((e) => e.seq), cli.lines.map((l) => l.seq), "every event once, in order");
    const ended = await h.waitNote("runs/ended", (p) => p.runId === runId);
    assert.equal(ended.status, "success");
  } finally {
    await h.close();
  }
});

test("runs/cancel stops a hanging run at once: end interrupted, the model request aborted", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    model.setScript([{ hang: true }]);
    const first = model.requests.length;
    const t = await h.request("threads/create", { workspaceFolder: workspace });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId: t.thread_id, afterSeq: 0 });
    const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "wait forever" });
    await model.waitForRequests(first + 1);
    const during = await h.request("threads/list", { workspaceFolder: workspace });
    assert.equal(during[0]!.active_run?.run_id, started.run_id);
    const state = await h.request("threads/state", { workspaceFolder: workspace, threadId: t.thread_id });
    assert.equal(state.active_run?.run_id, started.run_id);
    assert.equal(state.active_run?.after_seq, 0);
    assert.equal((await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "again" }))).data?.code, "thread_busy");
    const c = await h.request("runs/cancel", { workspaceFolder: workspace, runId: started.run_id });
    assert.equal(c.outcome, "cancelled");
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end");
    assert.equal((end.data as { status: string }).status, "interrupted");
    assert.equal((await h.waitNote("runs/ended", (p) => p.runId === started.run_id)).status, "interrupted");
    await model.waitForRequests(first + 1, { settled: true });
    assert.equal(model.requests[first]!.clientAborted, true);
    assert.equal((await h.request("runs/cancel", { workspaceFolder: workspace, runId: started.run_id })).outcome, "cancelled");
    assert.equal((await h.request("runs/cancel", { workspaceFolder: workspace, runId: "no-such-run" })).outcome, "not_found");
  } finally {
    await h.close();
  }
});

test("threads/state: messages in wire form, a presented artifact with its host path in the workspace, last_seq", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const r = await run(h, workspace, [
      { toolCalls: [{ name: "write_file", args: { description: "report", path: "/mnt/user-data/outputs/report.md", content: "# Report\n" } }] },
      { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] },
      { content: "Here is the report." },
    ]);
    assert.equal((r.end.data as { status: string }).status, "success");
    const s = await h.request("threads/state", { workspaceFolder: workspace, threadId: r.threadId });
    assert.deepEqual(s.messages.map((m) => m.type), ["human", "ai", "tool", "ai", "tool", "ai"]);
    assert.equal(s.messages.at(-1)!.content, "Here is the report.");
    assert.equal(s.artifacts.length, 1);
    const art = s.artifacts[0]!;
    assert.equal(art.path, "/mnt/user-data/outputs/report.md");
    assert.equal(art.host_path, join(workspace, ".deerflow", "threads", r.threadId, "outputs", "report.md"));
    assert.ok(art.host_path.startsWith(workspace + "/"));
    assert.equal(art.exists, true);
    assert.equal(readFileSync(art.host_path, "utf8"), "# Report\n");
    assert.equal(s.last_seq, r.end.seq);
    assert.equal(s.active_run, undefined);
    assert.deepEqual(s.viewed_images, []);
  } finally {
    await h.close();
  }
});

test("view_image → images/get serves the bytes; images/clear empties viewed_images for the CLI and the next run", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const src = join(workspace, "diagram.png");
    writeFileSync(src, PNG);
    const r = await run(
      h,
      workspace,
      [{ toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/diagram.png" } }] }, { content: "A diagram." }],
      { files: [src] },
    );
    assert.equal((r.end.data as { status: string }).status, "success");
    const s = await h.request("threads/state", { workspaceFolder: workspace, threadId: r.threadId });
    assert.deepEqual(s.uploaded_files, [{ filename: "diagram.png", size: PNG.length, path: "/mnt/user-data/uploads/diagram.png" }]);
    assert.equal(s.viewed_images.length, 1);
    const img = s.viewed_images[0]!;
    assert.equal(img.path, "/mnt/user-data/uploads/diagram.png");
    assert.equal(img.mime_type, "image/png");
    const got = await h.request("images/get", { workspaceFolder: workspace, sha256: img.sha256 });
    assert.deepEqual(got, { mime_type: "image/png", base64: PNG.toString("base64") });
    assert.equal(await h.request("images/get", { workspaceFolder: workspace, sha256: "0".repeat(64) }), null);

    assert.equal(await h.request("images/clear", { workspaceFolder: workspace, threadId: r.threadId }), null);
    assert.deepEqual((await h.request("threads/state", { workspaceFolder: workspace, threadId: r.threadId })).viewed_images, []);
    const cli = await runCli(["state", "--workspace", workspace, "--data-dir", dataDir, "--thread", r.threadId]);
    assert.equal(cli.code, 0, cli.stderr);
    const viaCli = JSON.parse(cli.stdout) as { viewed_images: unknown; messages: unknown[] };
    assert.deepEqual(viaCli.viewed_images, {});
    assert.equal(viaCli.messages.length, 4, "the clear kept the history");

    const next = await run(h, workspace, [{ content: "No image here." }], { threadId: r.threadId, prompt: "and now?" });
    assert.equal((next.end.data as { status: string }).status, "success");
    const sent = JSON.stringify(next.requests()[0]!.body!.messages);
    assert.ok(!sent.includes("image_url"), "the next run carries no image");
    assert.deepEqual((await h.request("threads/state", { workspaceFolder: workspace, threadId: r.threadId })).messages.length, 6);
  } finally {
    await h.close();
  }
});

test("threads/delete (the panel's delete) stops the thread's run, then removes its rows, its viewed image and its folder", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    const src = join(workspace, "diagram.png");
    writeFileSync(src, PNG);
    const viewed = [{ toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/diagram.png" } }] }, { content: "A diagram." }];
    const r = await run(h, workspace, viewed, { files: [src] });
    const { sha256 } = (await h.request("threads/state", { workspaceFolder: workspace, threadId: r.threadId })).viewed_images[0]!;
    const folder = join(workspace, ".deerflow", "threads", r.threadId);
    assert.ok(existsSync(join(folder, "uploads", "diagram.png")));
    assert.equal(statSync(join(folder, "uploads", "diagram.png")).mode & 0o777, 0o600, "the copy is its owner's only");
    model.setScript([{ hang: true }]);
    const first = model.requests.length;
    const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: r.threadId, prompt: "wait forever" });
    await model.waitForRequests(first + 1);

    assert.deepEqual(await h.request("threads/delete", { workspaceFolder: workspace, threadId: r.threadId }), { deleted: true });

    assert.equal((await h.waitNote("runs/ended", (p) => p.runId === started.run_id)).status, "interrupted");
    assert.deepEqual(await h.request("threads/list", { workspaceFolder: workspace }), []);
    assert.equal(await h.request("images/get", { workspaceFolder: workspace, sha256 }), null, "no other thread viewed it");
    assert.equal(existsSync(folder), false);
    const key = readdirSync(join(dataDir, "workspaces"))[0]!;
    const db = storageDriver().open(join(dataDir, "workspaces", key, "harness.db"));
    try {
      for (const { name } of db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all()) {
        const rows = db.prepare<[], Record<string, unknown>>(`SELECT * FROM "${name}"`).all();
        const holds = rows.some((row) => Object.values(row).some((v) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v as string | number | null))).includes(r.threadId)));
        assert.equal(holds, false, `table ${name} holds the deleted thread`);
      }
    } finally {
      db.close();
    }
  } finally {
    await h.close();
  }
});

test("kill -9 mid-run: the next harness on the same data dir marks the run interrupted, and a new run succeeds", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  model.setScript([{ hang: true }]);
  const first = model.requests.length;
  const t = await h.request("threads/create", { workspaceFolder: workspace });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hang" });
  await model.waitForRequests(first + 1);
  h.child.kill("SIGKILL");
  assert.equal((await h.exited).signal, "SIGKILL");

  const h2 = await initialized(dataDir);
  try {
    const runs = await h2.request("runs/list", { workspaceFolder: workspace, threadId: t.thread_id });
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.run_id, started.run_id);
    assert.equal(runs[0]!.status, "interrupted");
    assert.match(runs[0]!.error ?? "", /stopped before it finished/);
    const r = await run(h2, workspace, [{ content: "Back again." }], { threadId: t.thread_id, prompt: "retry" });
    assert.equal((r.end.data as { status: string }).status, "success");
  } finally {
    await h2.close();
  }
});

test("stdin closes mid-run (the extension host went away, e.g. a window reload): the run finishes, then the harness exits 0", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  model.setScript([{ content: "finished after the host left", gate: { afterChunks: 2, until: "host-gone" } }]);
  const t = await h.request("threads/create", { workspaceFolder: workspace });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "keep going" });
  await model.waitForGate("host-gone");
  h.child.stdin!.end();
  // A second harness (the reloaded window's) follows the run through the database meanwhile.
  const h2 = await initialized(dataDir);
  try {
    const { subscriptionId } = await h2.request("events/subscribe", { workspaceFolder: workspace, threadId: t.thread_id, afterSeq: 0 });
    await h2.waitEvent(subscriptionId, (e) => e.event === "messages");
    model.gate("host-gone").open();
    const end = await h2.waitEvent(subscriptionId, (e) => e.event === "end");
    assert.equal(end.run_id, started.run_id);
    assert.equal((end.data as { status: string }).status, "success", "the orphaned run finished instead of being interrupted");
    assert.equal((await h.exited).code, 0, "then the old harness exits");
    const text = h2.events(subscriptionId).filter((e) => e.event === "messages").map((e) => (e.data as Array<{ content: string }>)[0]!.content).join("");
    assert.equal(text.trim(), "finished after the host left");
  } finally {
    await h2.close();
  }
});

test("stdin closes with runs going and an orphan limit: past it the run is interrupted with a reason, then exit 0", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir, { DEERFLOW_ORPHAN_RUN_LIMIT_MS: "1" });
  model.setScript([{ hang: true }]);
  const first = model.requests.length;
  const t = await h.request("threads/create", { workspaceFolder: workspace });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hang" });
  await model.waitForRequests(first + 1);
  await h.close();
  assert.equal((await h.exited).code, 0);
  const events = await runCli(["events", "--workspace", workspace, "--data-dir", dataDir, "--thread", t.thread_id]);
  const end = events.lines.at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.run_id, started.run_id);
  assert.equal(end.data.status, "interrupted");
  assert.match(end.data.error, /harness process stopped/);
});

test("the language client's stop (shutdown, then exit) interrupts the running run and exits 0", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  model.setScript([{ hang: true }]);
  const first = model.requests.length;
  const t = await h.request("threads/create", { workspaceFolder: workspace });
  const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId: t.thread_id, afterSeq: 0 });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId: t.thread_id, prompt: "hang" });
  await model.waitForRequests(first + 1);
  await h.raw("shutdown");
  await h.conn.sendNotification("exit");
  assert.equal((await h.exited).code, 0);
  assert.equal(h.events(subscriptionId).some((e) => e.event === "end"), false, "subscriptions ended at shutdown");
  const runs = await runCli(["runs", "--workspace", workspace, "--data-dir", dataDir, "--thread", t.thread_id]);
  assert.equal(runs.lines[0]!.run_id, started.run_id);
  assert.equal(runs.lines[0]!.status, "interrupted");
  assert.match(runs.lines[0]!.error, /harness process stopped/);
  assert.notEqual(runs.lines[0]!.ended_at, null);
});

test("an untrusted workspace gets no sandbox commands, whatever allow_host_commands says", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = await initialized(dataDir);
  try {
    await h.request("harness/configure", {
      settings: settings(model.url, { workspace_trusted: false, sandbox: { provider: "auto", allow_host_commands: true } }),
    });
    const r = await run(h, workspace, [
      { toolCalls: [{ name: "bash", args: { description: "try", command: "touch /mnt/user-data/workspace/pwned" } }] },
      { content: "Could not." },
    ]);
    assert.equal((r.end.data as { status: string }).status, "success");
    const result = (r.requests()[1]!.body!.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool")!;
    assert.match(String(result.content), /^Error: Commands are disabled because this workspace is not trusted/);
    assert.equal(existsSync(join(workspace, "pwned")), false);
  } finally {
    await h.close();
  }
});


test("approvals over RPC: the user's settings policy pauses a run; approvals/proposed shows the diff; runs/decide continues it", async () => {
  const { workspace, dataDir } = sandboxDirs();
  writeFileSync(join(workspace, "notes.md"), "alpha\nbeta\n");
  const h = startHarness();
  try {
    await h.request("harness/initialize", { dataDir, settings: settings(model.url, { approval: { write: "ask" } }) });
    const edit = { id: "call_edit", name: "str_replace", args: { description: "e", path: "/mnt/user-data/workspace/notes.md", old_str: "beta", new_str: "gamma" } };
    const read = { id: "call_read", name: "read_file", args: { description: "r", path: "/mnt/user-data/workspace/notes.md" } };
    const paused = await run(h, workspace, [{ toolCalls: [read] }, { toolCalls: [edit] }], { prompt: "edit it" });
    assert.equal((paused.end.data as { stop_reason?: string }).stop_reason, "approval");
    const ended = await h.waitNote("runs/ended", (p) => p.runId === paused.runId);
    assert.deepEqual(ended.pendingApprovals?.map((p: { tool_call_id: string }) => p.tool_call_id), ["call_edit"]);
    const view = await h.request("threads/state", { workspaceFolder: workspace, threadId: paused.threadId });
    assert.equal(view.pending_approvals?.[0]?.class, "write");
    const diff = await h.request("approvals/proposed", { workspaceFolder: workspace, threadId: paused.threadId, toolCallId: "call_edit" });
    assert.deepEqual({ ...diff, host_path: undefined }, { path: "/mnt/user-data/workspace/notes.md", host_path: undefined, exists: true, current: "alpha\nbeta\n", proposed: "alpha\ngamma\n" });
    assert.equal(readFileSync(join(workspace, "notes.md"), "utf8"), "alpha\nbeta\n", "showing a diff writes nothing");
    const unknown = await errorOf(h.request("approvals/proposed", { workspaceFolder: workspace, threadId: paused.threadId, toolCallId: "call_nope" }));
    assert.equal(unknown.data?.code, "usage");
    const partial = await errorOf(h.request("runs/decide", { workspaceFolder: workspace, threadId: paused.threadId, decisions: [] }));
    assert.equal(partial.data?.code, "invalid_params");
    const refused = await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: paused.threadId, prompt: "something else" }));
    assert.equal(refused.data?.code, "approval_pending");
    assert.match(refused.message, /call_edit \(str_replace\)/);

    model.setScript([{ content: "Edited." }]);
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId: paused.threadId, afterSeq: view.last_seq });
    const decided = await h.request("runs/decide", { workspaceFolder: workspace, threadId: paused.threadId, decisions: [{ tool_call_id: "call_edit", decision: "approve" }] });
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === decided.run_id);
    assert.equal((end.data as { status: string }).status, "success");
    assert.equal(readFileSync(join(workspace, "notes.md"), "utf8"), "alpha\ngamma\n");
    const after = await h.request("threads/state", { workspaceFolder: workspace, threadId: paused.threadId });
    assert.deepEqual(after.pending_approvals, []);
  } finally {
    await h.close();
  }
});

test("a message sent while a write waits (rejectPending) rejects it with that message as the reason, and the run goes on with it", async () => {
  const { workspace, dataDir } = sandboxDirs();
  writeFileSync(join(workspace, "notes.md"), "alpha\nbeta\n");
  const h = startHarness();
  try {
    await h.request("harness/initialize", { dataDir, settings: settings(model.url, { approval: { write: "ask" } }) });
    const read = { id: "call_read", name: "read_file", args: { description: "r", path: "/mnt/user-data/workspace/notes.md" } };
    const edit = { id: "call_edit", name: "str_replace", args: { description: "e", path: "/mnt/user-data/workspace/notes.md", old_str: "beta", new_str: "gamma" } };
    const paused = await run(h, workspace, [{ toolCalls: [read] }, { toolCalls: [edit] }], { prompt: "edit it" });
    assert.equal((paused.end.data as { stop_reason?: string }).stop_reason, "approval");
    // Without the flag: DeerFlow's refusal, in one line naming the command that decides.
    const refused = await errorOf(h.request("runs/start", { workspaceFolder: workspace, threadId: paused.threadId, prompt: "no" }));
    assert.equal(refused.data?.code, "approval_pending");
    assert.equal(refused.message.split("\n").length, 1);
    assert.match(refused.message, new RegExp(`call_edit \\(str_replace\\).*deerflow approve --thread ${paused.threadId}`));

    const reply = "Leave beta alone; add delta at the end instead.";
    const after = await run(h, workspace, [{ content: "Understood: beta stays." }], { threadId: paused.threadId, prompt: reply, rejectPending: true });
    assert.equal((after.end.data as { status: string }).status, "success");
    const sent = after.requests()[0]?.body?.messages ?? [];
    const tail = sent.slice(-2) as Array<{ role: string; content: unknown; tool_call_id?: string }>;
    assert.deepEqual(tail.map((m) => m.role), ["tool", "user"], "the rejection answers the call, then the message follows");
    assert.equal(tail[0]?.tool_call_id, "call_edit");
    assert.equal(tail[0]?.content, `Rejected by the user: ${reply}`);
    assert.match(JSON.stringify(tail[1]?.content), /Leave beta alone/);
    assert.equal(readFileSync(join(workspace, "notes.md"), "utf8"), "alpha\nbeta\n", "the rejected edit never ran");
    const state = await h.request("threads/state", { workspaceFolder: workspace, threadId: paused.threadId });
    assert.deepEqual(state.pending_approvals, []);
    // On a thread that waits on nothing, the flag changes nothing.
    const plain = await run(h, workspace, [{ content: "plain" }], { threadId: paused.threadId, prompt: "and now?", rejectPending: true });
    assert.equal((plain.end.data as { status: string }).status, "success");
    assert.equal((plain.requests()[0]?.body?.messages ?? []).filter((m: { role: string; content?: unknown }) => m.role === "tool" && String(m.content).startsWith("Rejected")).length, 1, "no second rejection is made up");
  } finally {
    await h.close();
  }
});

test("runs/decide keeps the paused run's policy: a write=ask pause the CLI made still asks for the next write when the panel decides with settings that say auto", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const write = (id: string, name: string) => ({ id, name: "write_file", args: { description: `write ${name}`, path: `/mnt/user-data/workspace/${name}`, content: `${name}\n` } });
  model.setScript([{ toolCalls: [write("call_w1", "first.txt")] }]);
  const cli = await runCli(["run", "--workspace", workspace, "--data-dir", dataDir, "--base-url", model.url, "--model", "scripted", "--prompt", "write two", "--approval", "write=ask", "--no-memory"]);
  assert.equal(cli.code, 0, cli.stderr);
  const threadId = cli.lines.at(-1)!.thread_id as string;
  assert.equal(cli.lines.at(-1)!.data.stop_reason, "approval");
  const h = await initialized(dataDir); // settings: no approval section, so write=auto
  try {
    model.setScript([{ toolCalls: [write("call_w2", "second.txt")] }]);
    const view = await h.request("threads/state", { workspaceFolder: workspace, threadId });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId, afterSeq: view.last_seq });
    const decided = await h.request("runs/decide", { workspaceFolder: workspace, threadId, decisions: [{ tool_call_id: "call_w1", decision: "approve" }] });
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === decided.run_id);
    assert.equal((end.data as { stop_reason?: string }).stop_reason, "approval", "the continued turn's next write asks");
    assert.ok(existsSync(join(workspace, "first.txt")));
    assert.equal(existsSync(join(workspace, "second.txt")), false);
    const after = await h.request("threads/state", { workspaceFolder: workspace, threadId });
    assert.deepEqual(after.pending_approvals?.map((p) => p.tool_call_id), ["call_w2"]);
  } finally {
    await h.close();
  }
});

test("deerflow.subagents.enabled reaches the harness: the panel's runs offer the task tool only when it is on", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = startHarness();
  try {
    await h.request("harness/initialize", { dataDir, settings: settings(model.url) });
    const toolNames = (r: { requests: () => Array<{ body: { tools?: Array<{ function?: { name?: string } }> } | null }> }) =>
      (r.requests()[0]?.body?.tools ?? []).map((t) => t.function?.name);
    const off = await run(h, workspace, [{ content: "no delegation" }]);
    assert.ok(!toolNames(off).includes("task"), toolNames(off).join(","));
    await h.request("harness/configure", { settings: settings(model.url, { subagents: { enabled: true } }) });
    const on = await run(h, workspace, [{ content: "could delegate" }]);
    assert.ok(toolNames(on).includes("task"), toolNames(on).join(","));
    const bad = await errorOf(h.request("harness/configure", { settings: { ...settings(model.url), subagents: { enabled: "yes" } } as never }));
    assert.equal(bad.data?.code, "invalid_params");
  } finally {
    await h.close();
  }
});

test("a model's thinking and reasoning-effort settings reach the model over RPC, not only from the config file", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = startHarness();
  try {
    const base = { name: "scripted", model: "scripted", base_url: model.url };
    await h.request("harness/initialize", {
      dataDir,
      settings: settings(model.url, {
        models: [{ ...base, supports_thinking: true, supports_reasoning_effort: true, reasoning_effort: "high", when_thinking_enabled: { extra_body: { chat_template_kwargs: { enable_thinking: true } } } }],
      }),
    });
    const r = await run(h, workspace, [{ content: "thought about it" }]);
    assert.equal((r.end.data as { status: string }).status, "success");
    const body = r.requests()[0]?.body as Record<string, unknown> | null;
    assert.equal(body?.reasoning_effort, "high", JSON.stringify(body));
    assert.deepEqual(body?.chat_template_kwargs, { enable_thinking: true });
  } finally {
    await h.close();
  }
});
