// TokenUsageMiddleware through the real agent graph (agent/graph/build.ts): every AI message carries the provider's usage and
// DeerFlow's step attribution; and the turn runner sums a run's usage into the final `end` event.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, tool } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { TOKEN_USAGE_ATTRIBUTION_KEY, tokenUsageAttribution, tokenUsageMiddleware } from "../../../extension/harness/middlewares/tokenUsage.js";
import { buildLeadAgent } from "../../../extension/harness/agent/leadAgent.js";
import { endEvent, runTurn } from "../../../extension/harness/runs/runTurn.js";
import { LocalSandboxProvider } from "../../../extension/harness/sandbox/local.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createBlobStore } from "../../../extension/harness/store/blobs.js";
import type { RunEvent } from "../../../extension/protocol/events.js";
import { buildTestAgent, chatModel, streamTurn } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const ls = tool(({ path }: { path: string }) => Promise.resolve(`listing of ${path}`), { name: "ls", description: "List", schema: z.object({ path: z.string(), description: z.string() }) });

test("each AI message keeps the provider's usage and gets DeerFlow's attribution (tool_batch, then final_answer)", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [tokenUsageMiddleware()], tools: [ls] });
  server.setScript([
    { toolCalls: [{ name: "ls", args: { path: "/a", description: "look" }, id: "c1" }, { name: "present_files", args: {}, id: "c2" }], usage: { prompt_tokens: 350, completion_tokens: 240 } },
    { content: "Here it is.", usage: { prompt_tokens: 400, completion_tokens: 10 } },
  ]);
  const out = await streamTurn(agent, "usage-1", "list it");
  assert.equal(out.error, undefined, String(out.error));
  const ais = out.messages.filter((m): m is AIMessage => AIMessage.isInstance(m));
  assert.equal(ais.length, 2);
  assert.deepEqual(
    ais.map((m) => [m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens, m.usage_metadata?.total_tokens]),
    [[350, 240, 590], [400, 10, 410]],
  );
  assert.deepEqual(ais[0]!.additional_kwargs[TOKEN_USAGE_ATTRIBUTION_KEY], {
    version: 1,
    kind: "tool_batch",
    shared_attribution: true,
    tool_call_ids: ["c1", "c2"],
    actions: [
      { kind: "tool", tool_name: "ls", description: "look", tool_call_id: "c1" },
      { kind: "present_files", tool_call_id: "c2" },
    ],
  });
  assert.equal((ais[1]!.additional_kwargs[TOKEN_USAGE_ATTRIBUTION_KEY] as { kind: string }).kind, "final_answer");
  assert.equal(ais[0]!.tool_calls!.length, 2, "stamping keeps the tool calls");
});

test("attribution kinds: todo_update, subagent_dispatch, thinking", () => {
  const call = (name: string, args: Record<string, unknown> = {}) => new AIMessage({ content: "", tool_calls: [{ id: "x", name, args, type: "tool_call" }] });
  assert.equal(tokenUsageAttribution(call("write_todos", { todos: [] })).kind, "todo_update");
  assert.equal(tokenUsageAttribution(call("task", { description: "research" })).kind, "subagent_dispatch");
  assert.equal(tokenUsageAttribution(new AIMessage("")).kind, "thinking");
});

test("the run's usage is summed into the final `end` event (the whole chain, through runTurn)", async () => {
  const ws = mkdtempSync(join(tmpdir(), "deerflow-usage-"));
  const dirs = ensureThreadDirs(ws, "usage-run");
  const blobs = createBlobStore(openDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-usage-db-")), "harness.db")));
  const sandboxProvider = new LocalSandboxProvider({ workspaceFolder: ws });
  const agent = buildLeadAgent({
    model: chatModel(server.url),
    supportsVision: false,
    dirs,
    sandboxProvider,
    sandboxKind: "local",
    allowHostCommands: false,
    blobs,
    checkpointer: new MemorySaver(),
    planMode: false,
  });
  server.setScript([
    { toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
    { content: "Done.", usage: { prompt_tokens: 130, completion_tokens: 5 } },
  ]);
  const events: RunEvent[] = [];
  const result = await runTurn({
    agent,
    threadId: "usage-run",
    runId: "run-1",
    modelName: "scripted",
    prompt: "look around",
    sandboxProvider,
    sandboxKind: "local",
    signal: new AbortController().signal,
    emit: (e) => events.push(e),
  });
  assert.equal(result.status, "success", result.error);
  const sum = { input_tokens: 230, output_tokens: 25, total_tokens: 255 };
  // All of it spent by the run's model: the one entry of the split by model.
  assert.deepEqual(result.usage, { ...sum, by_model: { scripted: sum } });
  const end = endEvent("usage-run", "run-1", result);
  assert.equal(end.event, "end");
  assert.deepEqual((end.data as { usage?: unknown }).usage, { ...sum, by_model: { scripted: sum } });
});
