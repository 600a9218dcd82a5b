// The `deerflow` CLI end to end: a real child process, a real SQLite file, real workspace folders,
// and the scripted OpenAI-compatible server as the only fake. Each test asserts what landed on
// disk, what the model was sent, and what the CLI printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";
import { startModelServer } from "../fixtures/modelServer.js";
import type { ScriptedReply } from "../fixtures/modelServer.js";
import { chat, textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, tempDir, useModelServer } from "./helpers/cli.js";

const server = useModelServer();

/** Run one turn with a fresh script; returns the CLI result plus the requests of this run. */
async function run(dirs: { workspace: string; dataDir: string }, script: ScriptedReply[], extra: string[] = [], prompt = "go") {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", prompt, ...extra]);
  const requests = server.requests.slice(first);
  const end = r.lines.at(-1);
  return { ...r, requests, end, threadId: end?.data?.thread_id as string };
}

function state(dirs: { workspace: string; dataDir: string }, threadId: string) {
  return runCli(["state", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--thread", threadId]).then((r) => {
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, any>;
  });
}

function toolResults(requestBody: any): Array<{ tool_call_id: string; content: string }> {
  return (requestBody.messages as any[]).filter((m) => m.role === "tool").map((m) => ({ tool_call_id: m.tool_call_id, content: String(m.content) }));
}

test("run: every stdout line is an event with run_id; the last is `end` with thread_id and status", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ content: "Hello from the scripted model." }]);
  assert.equal(r.code, 0, r.stderr);
  for (const line of r.lines) {
    assert.ok(["metadata", "values", "updates", "messages", "custom", "error", "end"].includes(line.event), line.event);
    assert.equal(typeof line.run_id, "string");
    assert.ok("data" in line);
  }
  assert.equal(r.lines[0]!.event, "metadata");
  assert.equal(r.end!.event, "end");
  assert.equal(r.end!.data.status, "success");
  assert.match(r.threadId, /^[A-Za-z0-9_-]{1,64}$/);
  const text = r.lines.filter((l) => l.event === "messages").map((l) => l.data[0].content).join("");
  assert.equal(text.trim(), "Hello from the scripted model.", "token chunks carry the whole answer");
  const s = await state(dirs, r.threadId);
  assert.deepEqual(Object.keys(s), ["messages", "title", "artifacts", "todos", "uploaded_files", "viewed_images", "pending_approvals", "approval_always_allow", "promoted", "summary_text", "summary_upto", "skill_context", "thread_data", "sandbox", "usage"]);
  assert.deepEqual(s.messages.map((m: any) => m.type), ["human", "ai"]);
  assert.equal(s.messages[1].content, "Hello from the scripted model.");
  assert.equal(s.thread_data.workspace_path, dirs.workspace);
});

test("files the agent writes land in the real workspace folder; host paths never reach the model", async () => {
  const dirs = sandboxDirs();
  mkdirSync(join(dirs.workspace, "src"));
  writeFileSync(join(dirs.workspace, "src", "app.ts"), "export const answer = 41;\n");
  const r = await run(dirs, [
    { toolCalls: [{ name: "read_file", args: { description: "read the app", path: "/mnt/user-data/workspace/src/app.ts" } }] },
    { toolCalls: [{ name: "str_replace", args: { description: "fix", path: "/mnt/user-data/workspace/src/app.ts", old_str: "41", new_str: "42" } }] },
    { toolCalls: [{ name: "write_file", args: { description: "notes", path: "/mnt/user-data/workspace/docs/NOTES.md", content: "# Notes\n" } }] },
    { toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
    { content: "Done." },
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(join(dirs.workspace, "src", "app.ts"), "utf8"), "export const answer = 42;\n");
  assert.equal(readFileSync(join(dirs.workspace, "docs", "NOTES.md"), "utf8"), "# Notes\n");
  assert.equal(r.requests.length, 5);
  assert.equal(toolResults(r.requests[1]!.body).at(-1)!.content, "export const answer = 41;\n");
  assert.equal(toolResults(r.requests[2]!.body).at(-1)!.content, "OK");
  const listing = toolResults(r.requests[4]!.body).at(-1)!.content;
  assert.match(listing, /\/mnt\/user-data\/workspace\/docs\//);
  assert.doesNotMatch(listing, /\.deerflow/, "thread data is hidden from workspace listings");
  for (const req of r.requests) {
    const body = JSON.stringify(req.body);
    assert.ok(!body.includes(dirs.workspace), `request ${req.index} leaks the workspace host path`);
    assert.ok(!body.includes(dirs.dataDir), `request ${req.index} leaks the data dir`);
  }
});

test("parallel present_files calls keep every artifact, in order, and the deliverables exist on disk", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [
    {
      toolCalls: [
        { name: "write_file", args: { description: "a", path: "/mnt/user-data/outputs/a.md", content: "A" } },
        { name: "write_file", args: { description: "b", path: "/mnt/user-data/outputs/b.md", content: "B" } },
        { name: "write_file", args: { description: "c", path: "/mnt/user-data/outputs/charts/c.csv", content: "x,y\n" } },
      ],
    },
    {
      toolCalls: [
        { name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"] } },
        { name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/b.md", "/mnt/user-data/outputs/charts/c.csv"] } },
      ],
    },
    { content: "Presented." },
  ]);
  assert.equal(r.code, 0, r.stderr);
  const s = await state(dirs, r.threadId);
  assert.deepEqual(s.artifacts, ["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md", "/mnt/user-data/outputs/charts/c.csv"]);
  const outputs = join(dirs.workspace, ".deerflow", "threads", r.threadId, "outputs");
  assert.equal(readFileSync(join(outputs, "charts", "c.csv"), "utf8"), "x,y\n");
  assert.deepEqual(toolResults(r.requests[2]!.body).slice(-2).map((t) => t.content), ["Successfully presented files", "Successfully presented files"]);
  assert.equal(readFileSync(join(dirs.workspace, ".deerflow", ".gitignore"), "utf8"), "*\n");
  // A later turn adds to the list without losing the earlier ones.
  const r2 = await run(dirs, [
    { toolCalls: [{ name: "write_file", args: { description: "d", path: "/mnt/user-data/outputs/d.md", content: "D" } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/d.md", "/mnt/user-data/outputs/a.md"] } }] },
    { content: "More." },
  ], ["--thread", r.threadId]);
  assert.equal(r2.code, 0, r2.stderr);
  assert.deepEqual((await state(dirs, r.threadId)).artifacts, [
    "/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md", "/mnt/user-data/outputs/charts/c.csv", "/mnt/user-data/outputs/d.md",
  ]);
});

test("escapes through .., absolute host paths and symlinks are refused, nothing is written outside, and the run goes on", async () => {
  const dirs = sandboxDirs();
  const outside = tempDir("outside");
  symlinkSync(outside, join(dirs.workspace, "link-out"));
  const other = join(dirs.workspace, ".deerflow", "threads", "other-thread", "outputs");
  mkdirSync(other, { recursive: true });
  const attempts = [
    { name: "write_file", args: { description: "dotdot", path: "/mnt/user-data/workspace/../escaped.txt", content: "x" } },
    { name: "write_file", args: { description: "abs", path: join(outside, "abs.txt"), content: "x" } },
    { name: "write_file", args: { description: "symlink", path: "/mnt/user-data/workspace/link-out/sym.txt", content: "x" } },
    { name: "write_file", args: { description: "other thread", path: "/mnt/user-data/workspace/.deerflow/threads/other-thread/outputs/x.txt", content: "x" } },
    { name: "str_replace", args: { description: "etc", path: "/etc/hostname", old_str: "a", new_str: "b" } },
    { name: "read_file", args: { description: "symlink read", path: "/mnt/user-data/workspace/link-out" } },
    { name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/../../../../escaped.txt"] } },
  ];
  // protected=deny: the write into another thread's folder is a protected path, which would
  // otherwise pause the turn for the user's decision (approvals.test.ts).
  const r = await run(dirs, [{ toolCalls: attempts }, { content: "I could not write there." }], ["--approval", "protected=deny"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.status, "success");
  assert.deepEqual(readdirSync(outside), [], "nothing written through the absolute path or the symlink");
  assert.deepEqual(readdirSync(other), [], "nothing written into another thread's outputs");
  assert.equal(existsSync(join(dirs.workspace, "..", "escaped.txt")), false);
  const results = toolResults(r.requests[1]!.body);
  assert.equal(results.length, attempts.length, "every refused call still has its tool result");
  for (const t of results) {
    assert.match(t.content, /^Error: /, t.content);
    assert.ok(!t.content.includes(outside) || t.content.includes("abs.txt"), `host path leaked: ${t.content}`);
  }
  assert.match(results[0]!.content, /path traversal|Permission denied/);
  assert.match(results[1]!.content, /Only paths under/);
  const s = await state(dirs, r.threadId);
  assert.deepEqual(s.artifacts, []);
});

test("bash is refused on the local provider unless host commands are allowed, and says how to allow them", async () => {
  const dirs = sandboxDirs();
  const refused = await run(dirs, [
    { toolCalls: [{ name: "bash", args: { description: "pwd", command: "echo hi > /mnt/user-data/outputs/hi.txt; pwd" } }] },
    { content: "ok" },
  ]);
  assert.equal(refused.code, 0, refused.stderr);
  const msg = toolResults(refused.requests[1]!.body)[0]!.content;
  assert.match(msg, /Host bash execution is disabled/);
  assert.match(msg, /--allow-host-commands/);
  assert.equal(existsSync(join(dirs.workspace, ".deerflow", "threads", refused.threadId, "outputs", "hi.txt")), false);

  const allowed = await run(dirs, [
    { toolCalls: [{ name: "bash", args: { description: "pwd", command: "echo hi > /mnt/user-data/outputs/hi.txt; pwd" } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/hi.txt"] } }] },
    { content: "ok" },
  ], ["--allow-host-commands", "--approval", "shell=auto"]);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(toolResults(allowed.requests[1]!.body)[0]!.content.trim(), "/mnt/user-data/workspace", "the model sees the virtual cwd");
  assert.equal(readFileSync(join(dirs.workspace, ".deerflow", "threads", allowed.threadId, "outputs", "hi.txt"), "utf8"), "hi\n");
  const s = await state(dirs, allowed.threadId);
  assert.equal(s.sandbox.sandbox_id, `local:default:${allowed.threadId}`, "the sandbox acquired lazily is recorded");
});

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

test("view_image records metadata only; no checkpoint holds the image bytes or their base64", async () => {
  const dirs = sandboxDirs();
  const src = join(tempDir("upload"), "diagram.png");
  // A bigger image makes an accidental copy unmistakable in the database.
  const big = Buffer.concat([PNG, Buffer.from("deerflow-image-marker-".repeat(400))]);
  writeFileSync(src, big);
  const r = await run(dirs, [
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/diagram.png" } }] },
    { content: "It is a diagram." },
  ], ["--upload", src]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(toolResults(r.requests[1]!.body)[0]!.content, "Successfully read image");
  const s = await state(dirs, r.threadId);
  const meta = s.viewed_images["/mnt/user-data/uploads/diagram.png"];
  assert.deepEqual(Object.keys(meta).sort(), ["mime_type", "sha256", "size"]);
  assert.equal(meta.mime_type, "image/png");
  assert.equal(meta.size, big.length);
  assert.equal(existsSync(join(dirs.workspace, ".deerflow", "threads", r.threadId, "uploads", "diagram.png")), true);

  const dbFiles = readdirSync(join(dirs.dataDir, "workspaces")).map((k) => join(dirs.dataDir, "workspaces", k, "harness.db"));
  assert.equal(dbFiles.length, 1);
  const db = storageDriver().open(dbFiles[0]!);
  try {
    const b64 = big.toString("base64");
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
    let blobRows = 0;
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Array<Record<string, unknown>>) {
        for (const value of Object.values(row)) {
          const buf = Buffer.isBuffer(value) ? value : Buffer.from(String(value));
          const hasBytes = buf.includes(big.subarray(0, 64)) || buf.includes(Buffer.from("deerflow-image-marker-deerflow-image-marker-"));
          if (table === "blobs" && hasBytes) {
            blobRows++;
            continue;
          }
          assert.ok(!hasBytes, `table ${table} holds the image bytes`);
          assert.ok(!buf.includes(Buffer.from(b64.slice(0, 64))), `table ${table} holds the image base64`);
        }
      }
    }
    assert.equal(blobRows, 1, "the bytes are stored once, in the content-addressed blob store");
  } finally {
    db.close();
  }
});

test("a thread resumes in a new process with its whole history", async () => {
  const dirs = sandboxDirs();
  const r1 = await run(dirs, [{ content: "First answer." }], [], "first question");
  assert.equal(r1.code, 0, r1.stderr);
  const r2 = await run(dirs, [{ content: "Second answer." }], ["--thread", r1.threadId], "second question");
  assert.equal(r2.code, 0, r2.stderr);
  const sent = chat(r2.requests[0]!).map((m) => [m.role, textOf(m)] as const);
  assert.deepEqual(sent.map(([role]) => role), ["user", "assistant", "user"]);
  assert.match(sent[0]![1], /first question/);
  assert.equal(sent[1]![1], "First answer.");
  assert.match(sent[2]![1], /second question/);
  const threads = await runCli(["threads", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir]);
  assert.equal(threads.code, 0, threads.stderr);
  assert.deepEqual(threads.lines.map((t) => t.thread_id), [r1.threadId]);
});

test("usage errors exit 2 with a message on stderr and run nothing", async () => {
  const dirs = sandboxDirs();
  const before = server.requests.length;
  const cases: Array<[string[], RegExp]> = [
    [["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir], /--prompt/],
    [["run", "--workspace", join(dirs.workspace, "nope"), "--prompt", "x", "--data-dir", dirs.dataDir], /not a directory/],
    [["run", "--workspace", dirs.workspace, "--prompt", "x", "--thread", "../etc", "--data-dir", dirs.dataDir, "--base-url", server.url, "--model", "m"], /Invalid thread_id/],
    [["run", "--workspace", dirs.workspace, "--prompt", "x", "--bogus", "--data-dir", dirs.dataDir], /bogus/],
    [["run", "--workspace", dirs.workspace, "--prompt", "x", "--upload", join(dirs.workspace, "missing.png"), "--data-dir", dirs.dataDir, "--base-url", server.url, "--model", "m"], /--upload/],
    [["frobnicate"], /unknown command/],
    [["run", "--workspace", dirs.workspace, "--prompt", "   ", "--data-dir", dirs.dataDir, "--base-url", server.url, "--model", "m"], /--prompt is empty/],
  ];
  for (const [args, pattern] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stdout, "");
  }
  assert.equal(server.requests.length, before, "no model request was made");
});

test("--model NAME picks a configured model; an unknown name is an error naming the configured ones", async () => {
  const dirs = sandboxDirs();
  writeFileSync(join(dirs.dataDir, "config.json"), JSON.stringify({
    models: [
      { name: "fast", model: "scripted-fast", base_url: server.url, api_key_env: "FAST_KEY" },
      { name: "smart", model: "scripted-smart", base_url: server.url, supports_vision: true },
    ],
  }));
  server.setScript([{ content: "from smart" }]);
  const first = server.requests.length;
  const ok = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--model", "smart", "--prompt", "hi"], { OPENAI_API_KEY: "sk-env-key" });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(server.requests[first]!.body!.model, "scripted-smart");
  assert.equal(server.requests[first]!.headers.authorization, "Bearer sk-env-key");
  const tools = server.requests[first]!.body!.tools!.map((t) => t.function.name);
  for (const name of ["bash", "glob", "grep", "ls", "present_files", "read_file", "str_replace", "view_image", "write_file"]) {
    assert.ok(tools.includes(name), `DeerFlow's tool ${name} is offered`);
  }

  server.setScript([{ content: "from fast" }]);
  const fast = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--model", "fast", "--prompt", "hi"], { FAST_KEY: "sk-fast" });
  assert.equal(fast.code, 0, fast.stderr);
  const req = server.requests.at(-1)!;
  assert.equal(req.headers.authorization, "Bearer sk-fast");
  assert.ok(!req.body!.tools!.some((t) => t.function.name === "view_image"), "no view_image for a model without vision");

  const bad = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--model", "gpt-9", "--prompt", "hi"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Unknown model "gpt-9"\. Configured models: fast, smart\./);
  for (const f of readdirSync(join(dirs.dataDir, "workspaces"))) {
    const db = readFileSync(join(dirs.dataDir, "workspaces", f, "harness.db"));
    assert.ok(!db.includes(Buffer.from("sk-fast")) && !db.includes(Buffer.from("sk-env-key")), "API keys never reach the database");
  }
});

test("a dead model endpoint ends the run `error` with a readable reason, and the thread stays usable", async () => {
  const dirs = sandboxDirs();
  const dead = await startModelServer();
  const deadUrl = dead.url;
  await dead.close();
  const r = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--base-url", deadUrl, "--model", "m", "--prompt", "hello?"]);
  assert.equal(r.code, 1);
  const end = r.lines.at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.data.status, "error");
  assert.match(end.data.error, /connect|Connection|ECONNREFUSED/i);
  assert.ok(r.lines.some((l) => l.event === "error"));
  const again = await run(dirs, [{ content: "Back." }], ["--thread", end.data.thread_id]);
  assert.equal(again.code, 0, again.stderr);
  const roles = chat(again.requests[0]!).map((m) => m.role);
  assert.deepEqual(roles, ["user", "user"], "the failed turn's question is kept, nothing half-written");
});

test("the thread row carries the title after the first exchange; a clarification stop says so in `end`", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ content: "Sure." }], [], "Refactor the greeting module please");
  assert.equal(r.code, 0, r.stderr);
  const threads = await runCli(["threads", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir]);
  assert.equal(threads.lines[0]!.title, (await state(dirs, r.threadId)).title);
  assert.match(threads.lines[0]!.title, /Refactor the greeting module/);

  const q = await run(dirs, [
    { toolCalls: [{ name: "ask_clarification", args: { question: "Which environment?", clarification_type: "missing_info", options: ["dev", "prod"] } }] },
  ], ["--thread", r.threadId], "deploy it");
  assert.equal(q.code, 0, q.stderr);
  assert.equal(q.end!.data.status, "success");
  assert.equal(q.end!.data.stop_reason, "clarification");
  assert.equal(q.end!.data.human_input.question, "Which environment?");
});
