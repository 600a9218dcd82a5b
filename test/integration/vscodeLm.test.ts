// vscode.lm models through the harness RPC (issue 25): the built harness process (`dist/server.js
// --stdio`), with this test as the host answering `lm/chat` over the same connection (as
// host/lm/serve.ts does with LanguageModelChat.sendRequest). A run on `vscode-lm:…` streams, calls a
// tool, counts its model requests in end.data.usage with estimated tokens; a host refusal ends
// the run with what to do; the CLI says it cannot reach vscode.lm.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { CancellationToken } from "vscode-jsonrpc/node.js";
import { ResponseError } from "vscode-jsonrpc/node.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { runCli, sandboxDirs } from "./helpers/cli.js";
import { settings, startHarness, type HarnessProcess } from "./helpers/server.js";
import type { LmChatParams, LmChatResult, LmStreamPart } from "../../extension/protocol/lm.js";

const MODEL = "vscode-lm:deerflow-test/scripted";
let model: ModelServer;
let h: HarnessProcess;
let dirs: { workspace: string; dataDir: string };
/** What the "host" answers next, one entry per lm/chat request. */
let replies: Array<LmStreamPart[] | ResponseError<{ code: string }>> = [];
const seen: LmChatParams[] = [];

before(async () => {
  model = await startModelServer();
  dirs = sandboxDirs();
  h = startHarness();
  h.conn.onRequest("lm/chat", (params: LmChatParams, _token: CancellationToken): Promise<LmChatResult> => {
    seen.push(params);
    const next = replies.shift();
    if (!next) return Promise.reject(new ResponseError(-32000, "the test has no reply left", { code: "lm_failed" }));
    if (next instanceof ResponseError) return Promise.reject(next);
    for (const part of next) void h.conn.sendNotification("lm/chunk", { requestId: params.requestId, parts: [part] });
    return Promise.resolve({ usage: { input_tokens: 100, output_tokens: 10, estimated: true }, model: { id: "scripted-1", vendor: "deerflow-test", family: "scripted", name: "Scripted" } });
  });
  // No configured model is needed for a vscode.lm run; the scripted endpoint is there for none.
  await h.request("harness/initialize", { dataDir: dirs.dataDir, settings: settings(model.url, { memory: { enabled: false } }) });
});

after(async () => {
  await h?.close();
  await model?.close();
});

async function run(prompt: string) {
  const threadId = (await h.request("threads/create", { workspaceFolder: dirs.workspace })).thread_id;
  const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: dirs.workspace, threadId, afterSeq: 0 });
  const started = await h.request("runs/start", { workspaceFolder: dirs.workspace, threadId, prompt, model: MODEL });
  const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
  await h.request("events/unsubscribe", { subscriptionId });
  return { end: end as typeof end & { data: { status: string; error?: string; usage?: Record<string, unknown> } }, events: h.events(subscriptionId).filter((e) => e.run_id === started.run_id) };
}

test("a run on a vscode.lm model streams, calls a tool, and reports its model requests and estimated tokens", async () => {
  const first = seen.length;
  replies = [
    [{ type: "text", text: "Let me look." }, { type: "tool_call", callId: "call_ls", name: "ls", input: { description: "Look", path: "/mnt/user-data/workspace" } }],
    [{ type: "text", text: "The workspace " }, { type: "text", text: "is empty." }],
  ];
  const { end, events } = await run("What is in the workspace?");
  assert.equal(end.data.status, "success", JSON.stringify(end.data));
  const usage = end.data.usage ?? {};
  assert.equal(usage.model_requests, 2);
  assert.equal(usage.estimated, true);
  assert.equal(usage.input_tokens, 200);
  assert.equal(usage.output_tokens, 20);
  const streamed = events.filter((e) => e.event === "messages").map((e) => (e.data as Array<{ content: unknown }>)[0]!.content).filter((c) => typeof c === "string" && c);
  // The journal may or may not coalesce deltas of one tick (it depends on timing): the answer is
  // what the events add up to. Chunk-by-chunk streaming is the unit test's (test/unit/models/vscodeLm.test.ts).
  assert.ok(streamed.join("").includes("The workspace is empty."), `the answer streamed as messages events: ${JSON.stringify(streamed)}`);
  const calls = seen.slice(first);
  assert.equal(calls.length, 2);
  assert.ok(calls[0]!.tools!.some((t) => t.name === "ls"), "DeerFlow's tools are offered");
  assert.equal(calls[0]!.messages[0]!.role, "user", "the system prompt goes as the first User message");
  const result = calls[1]!.messages.flatMap((m) => m.content).find((p) => p.type === "tool_result");
  assert.equal(result?.type === "tool_result" && result.callId, "call_ls", "the tool's result goes back as a tool result part");
});

test("the host's NotFound ends the run with a readable error that says what to do, no fallback to another model", async () => {
  const before = model.requests.length;
  replies = [new ResponseError(-32000, "no model of vendor deerflow-test", { code: "lm_not_found" })];
  const { end } = await run("hello");
  assert.equal(end.data.status, "error");
  assert.match(end.data.error ?? "", /deerflow-test\/scripted is not available \(NotFound\).*Select Model/);
  assert.equal(model.requests.length, before, "the configured endpoint was not asked instead");
});

test("the CLI cannot reach vscode.lm and says so", async () => {
  const r = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--model", "vscode-lm:copilot/gpt-4o", "--prompt", "hi"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /vscode-lm:copilot\/gpt-4o is a VS Code language model \(vscode\.lm\): only the DeerFlow extension inside VS Code can reach it/);
});
