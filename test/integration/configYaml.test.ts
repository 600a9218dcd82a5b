// DeerFlow's configuration file through the real CLI (issue 22): DeerFlow's config.example.yaml as
// `<data-dir>/config.yaml` runs; its token_budget keys cap a run; `$VAR` model keys resolve and
// reach the provider; broken YAML exits 2 naming the file and the line, with nothing run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, scriptedRunArgs, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";
import { settings, startHarness } from "./helpers/server.js";
import type { JournalEvent } from "../../extension/protocol/rpc.js";

const server = useModelServer();

const EXAMPLE = join(import.meta.dirname, "../fixtures/deerflow/config.example.yaml");
const ls = { name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } };

function yaml(d: Dirs, text: string): void {
  writeFileSync(join(d.dataDir, "config.yaml"), text);
}

test("DeerFlow's own config.example.yaml, unchanged, as config.yaml: a run succeeds, and what the port lacks is listed once on stderr", async () => {
  const d = sandboxDirs();
  copyFileSync(EXAMPLE, join(d.dataDir, "config.yaml"));
  server.setScript([{ content: "Hello from a DeerFlow config." }]);
  const first = server.requests.length;
  const r = await runCli(scriptedRunArgs(server, d, "hi"));
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-1500));
  assert.equal(r.lines.at(-1)!.data.status, "success");
  assert.equal(server.requests.length - first, 1);
  const notes = r.stderr.split("\n").filter((l) => l.includes("not supported here"));
  assert.equal(notes.length, 1, r.stderr);
  assert.match(notes[0]!, /config\.yaml: not supported here: log_level, logging, tool_groups, suggestions, .*scheduler/);
  // Its sections took effect: title on (the local fallback), the local sandbox (LocalSandboxProvider).
  const meta = r.lines.find((l) => l.event === "metadata")!;
  assert.equal(meta.data.sandbox, "local");
  assert.equal((await cliState(d, r.lines.at(-1)!.data.thread_id as string)).title, "hi");
});

test("DeerFlow's token_budget keys cap a run: enabled + max_tokens (token_capped), warn_threshold's warning, max_output_tokens", async () => {
  const d = sandboxDirs();
  yaml(d, "token_budget:\n  enabled: true\n  max_tokens: 3000\n  warn_threshold: 0.5\n");
  server.setScript([
    { toolCalls: [ls], usage: { prompt_tokens: 1500, completion_tokens: 100 } },
    { content: "Looking again.", toolCalls: [ls], usage: { prompt_tokens: 1700, completion_tokens: 50 } },
  ]);
  const first = server.requests.length;
  const r = await runCli(scriptedRunArgs(server, d, "look until stopped"));
  assert.equal(r.code, 0, r.stderr);
  const end = r.lines.at(-1)!;
  assert.equal(end.data.status, "success");
  assert.equal(end.data.stop_reason, "token_capped");
  const sent = server.requests.slice(first);
  assert.equal(sent.length, 2, "no model call after the cap");
  // 1,600 of 3,000 is past warn_threshold 0.5: the next request carries DeerFlow's warning.
  assert.equal(
    textOf(sent[1]!.body!.messages!.at(-1)),
    "[TOKEN BUDGET WARNING] You have used 1,600 of your 3,000 total token budget (53%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.",
  );
  const state = await cliState(d, end.data.thread_id as string);
  const last = state.messages.at(-1);
  assert.deepEqual(last.tool_calls ?? [], []);
  assert.equal(last.content, "Looking again.\n\n[TOKEN BUDGET EXCEEDED] The total token usage (3,350) has exceeded the safety limit (3,000). Producing final answer with results collected so far.");

  // max_output_tokens: the output limit is the one that stops it, and DeerFlow's text says so.
  const d2 = sandboxDirs();
  yaml(d2, "token_budget:\n  enabled: true\n  max_tokens: 100000\n  max_output_tokens: 120\n");
  server.setScript([
    { toolCalls: [ls], usage: { prompt_tokens: 1000, completion_tokens: 80 } },
    { content: "More.", toolCalls: [ls], usage: { prompt_tokens: 1100, completion_tokens: 60 } },
  ]);
  const r2 = await runCli(scriptedRunArgs(server, d2, "talk a lot"));
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(r2.lines.at(-1)!.data.stop_reason, "token_capped");
  const last2 = (await cliState(d2, r2.lines.at(-1)!.data.thread_id as string)).messages.at(-1);
  assert.match(last2.content, /\[TOKEN BUDGET EXCEEDED\] The output token usage \(140\) has exceeded the safety limit \(120\)\./);

  // The project's key is an alias: max_tokens_per_run alone turns the budget on.
  const d3 = sandboxDirs();
  yaml(d3, "token_budget:\n  max_tokens_per_run: 200\n");
  server.setScript([
    { toolCalls: [ls], usage: { prompt_tokens: 120, completion_tokens: 30 } },
    { content: "Again.", toolCalls: [ls], usage: { prompt_tokens: 80, completion_tokens: 20 } },
  ]);
  const r3 = await runCli(scriptedRunArgs(server, d3, "alias"));
  assert.equal(r3.lines.at(-1)!.data.stop_reason, "token_capped", r3.stderr);
});

test("$VAR model values resolve from the environment: DeerFlow's api_key reaches the provider, api_base and model too", async () => {
  const d = sandboxDirs();
  yaml(
    d,
    [
      "models:",
      "  - name: gateway",
      "    display_name: My gateway",
      "    use: langchain_openai:ChatOpenAI",
      "    model: $GATEWAY_MODEL",
      "    api_base: $GATEWAY_URL",
      "    api_key: $GATEWAY_KEY",
      "    max_tokens: 321",
      "    temperature: 0.3",
      "",
    ].join("\n"),
  );
  server.setScript([{ content: "Keyed." }]);
  const first = server.requests.length;
  const env = { GATEWAY_MODEL: "gw-model-1", GATEWAY_URL: server.url, GATEWAY_KEY: "sk-from-the-environment" };
  const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--prompt", "hi"], env);
  assert.equal(r.code, 0, r.stderr);
  const req = server.requests[first]!;
  assert.equal(req.headers.authorization, "Bearer sk-from-the-environment");
  assert.equal(req.body!.model, "gw-model-1");
  assert.equal(req.body!.max_tokens ?? req.body!.max_completion_tokens, 321);
  assert.equal(req.body!.temperature, 0.3);
  // The key is never stored: not in the journal, not in the database files.
  const events = await runCli(["events", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", r.lines.at(-1)!.data.thread_id as string]);
  assert.ok(!events.stdout.includes("sk-from-the-environment"));

  // A $VAR that is not set is a usage error naming the key, before anything runs.
  const asked = server.requests.length;
  const missing = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--prompt", "hi"], { GATEWAY_URL: server.url, GATEWAY_KEY: "k" });
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /config\.yaml:5: models\[0\]\.model: the environment variable GATEWAY_MODEL is not set/);
  assert.equal(server.requests.length, asked);
});

test("broken YAML is a usage error naming the file and the line: exit 2, nothing run, nothing written", async () => {
  const d = sandboxDirs();
  yaml(d, "token_budget:\n  enabled: true\n  max_tokens: [3000\nmemory:\n  enabled: false\n");
  const asked = server.requests.length;
  const r = await runCli(scriptedRunArgs(server, d, "hi"));
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`Invalid DeerFlow configuration ${join(d.dataDir, "config.yaml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+: `));
  assert.equal(r.stdout, "");
  assert.equal(server.requests.length, asked, "no model was asked");
  assert.deepEqual(readdirSync(d.dataDir), ["config.yaml"], "no database, no thread");
  assert.ok(!existsSync(join(d.workspace, ".deerflow")));

  // A value of the wrong type names its line too.
  yaml(d, "# a comment\nloop_detection:\n  warn_threshold: many\n");
  const wrong = await runCli(scriptedRunArgs(server, d, "hi"));
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /config\.yaml:3: loop_detection\.warn_threshold: /);
});

test("DeerFlow's uploads limits refuse an over-limit message before anything is copied or run", async () => {
  const d = sandboxDirs();
  yaml(d, "uploads:\n  max_files: 1\n  max_file_size: 10\n");
  const small = join(d.workspace, "..", `small-${Date.now()}.txt`);
  const big = join(d.workspace, "..", `big-${Date.now()}.txt`);
  writeFileSync(small, "tiny");
  writeFileSync(big, "more than ten bytes");
  const asked = server.requests.length;
  const many = await runCli([...scriptedRunArgs(server, d, "two files"), "--upload", small, "--upload", small]);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /Too many files: maximum is 1/);
  const large = await runCli([...scriptedRunArgs(server, d, "big file"), "--upload", big]);
  assert.equal(large.code, 2);
  assert.match(large.stderr, /File too large: big-\d+\.txt/);
  assert.equal(server.requests.length, asked);
});

test("DeerFlow's middleware keys mean what they mean there: read_before_write off lets a blind write through, loop_detection's hard_limit stops the loop", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "old\n");
  yaml(d, "read_before_write:\n  enabled: false\nloop_detection:\n  warn_threshold: 2\n  hard_limit: 2\n");
  const write = { name: "write_file", args: { description: "overwrite", path: "/mnt/user-data/workspace/notes.md", content: "new\n" } };
  server.setScript([{ toolCalls: [write] }, { toolCalls: [ls] }, { toolCalls: [ls] }, { content: "unreachable" }]);
  const first = server.requests.length;
  const r = await runCli(scriptedRunArgs(server, d, "write, then look twice"));
  assert.equal(r.code, 0, r.stderr);
  const sent = server.requests.slice(first);
  // The write ran without a read first (DeerFlow's gate is off) ...
  assert.equal(textOf(sent[1]!.body!.messages!.find((m) => m.role === "tool")), "OK");
  // ... and the second identical `ls` set reached hard_limit 2: its calls were stripped, the run ended.
  assert.equal(sent.length, 3);
  assert.equal(r.lines.at(-1)!.data.stop_reason, "loop_capped");
});

test("over RPC (the extension's harness): the data directory's config.yaml is read under the settings, its unsupported keys are in the log once, its $VAR key and budget apply", async () => {
  const { workspace, dataDir } = sandboxDirs();
  writeFileSync(
    join(dataDir, "config.yaml"),
    [
      "scheduler:\n  enabled: false",
      "memory:\n  enabled: false",
      "token_budget:\n  enabled: true\n  max_tokens: 1000",
      "models:",
      "  - name: from-file",
      "    model: file-model",
      `    base_url: ${server.url}`,
      "    api_key: $FILE_MODEL_KEY",
      "",
    ].join("\n"),
  );
  const h = startHarness({ FILE_MODEL_KEY: "sk-file-model" });
  try {
    // No deerflow.models: the file's models are used.
    const s = settings(server.url, { models: [] });
    delete (s as { default_model?: string }).default_model;
    await h.request("harness/initialize", { dataDir, settings: s });
    const note = await h.waitNote("log/message", (p) => typeof p.message === "string" && p.message.includes("not supported here"));
    assert.match(note.message, /config\.yaml: not supported here: scheduler$/);
    server.setScript([
      { toolCalls: [ls], usage: { prompt_tokens: 700, completion_tokens: 100 } },
      { content: "More.", toolCalls: [ls], usage: { prompt_tokens: 300, completion_tokens: 50 } },
    ]);
    const first = server.requests.length;
    const { thread_id: threadId } = await h.request("threads/create", { workspaceFolder: workspace });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId, afterSeq: 0 });
    const run = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt: "look" });
    const end = (await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === run.run_id)) as JournalEvent & { event: "end" };
    assert.equal(end.data.status, "success");
    assert.equal(end.data.stop_reason, "token_capped", "the file's token_budget");
    const sent = server.requests.slice(first);
    assert.equal(sent[0]!.body!.model, "file-model");
    assert.equal(sent[0]!.headers.authorization, "Bearer sk-file-model");
    assert.equal(h.notes.filter((n) => n.method === "log/message" && String(n.params.message).includes("not supported here")).length, 1);
  } finally {
    await h.close();
  }
});
