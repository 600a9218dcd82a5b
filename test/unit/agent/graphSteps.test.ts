// The lead agent's graph steps per turn (issue 20), counted from the checkpoints LangGraph writes
// after every step: the whole lead chain (buildLeadAgent: every middleware of a default run) on
// MemorySaver against the scripted model server. A tool turn is 4 steps (before_model,
// model_request, after_model, tools), an answer turn 3, and the run's own hooks (beforeAgent,
// afterAgent) take no step of their own; parallel calls share one tools step. With the turn budget, a run that keeps calling
// tools ends after `maxTurns` model calls with every call answered.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { startModelServer, type ModelServer, type RecordedRequest, type ScriptedReply } from "../../fixtures/modelServer.js";
import { buildLeadAgent } from "../../../extension/harness/agent/leadAgent.js";
import { NODE } from "../../../extension/harness/agent/graph/build.js";
import { LocalSandboxProvider } from "../../../extension/harness/sandbox/local.js";
import { chatModel, threadFixture } from "../middlewares/helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const WS = "/mnt/user-data/workspace";
const toolResults = (req: RecordedRequest) => (req.body?.messages ?? []).filter((m) => m.role === "tool").length;

function leadAgent(threadId: string, maxTurns = 200) {
  const { ws, dirs, blobs } = threadFixture(threadId);
  for (let i = 0; i < 8; i++) writeFileSync(join(ws, `f${i}.txt`), `file ${i}\n`);
  const checkpointer = new MemorySaver();
  const agent = buildLeadAgent({
    model: chatModel(server.url),
    supportsVision: false,
    dirs,
    sandboxProvider: new LocalSandboxProvider({ workspaceFolder: ws }),
    sandboxKind: "local",
    allowHostCommands: false,
    blobs,
    checkpointer,
    planMode: false,
    turns: { maxTurns },
  });
  return { agent, checkpointer };
}

/** One run; the steps it took (one checkpoint per step) and the node of each step's writes. */
async function run(a: ReturnType<typeof leadAgent>, threadId: string, prompt: string) {
  const config = { configurable: { thread_id: threadId } };
  const seen = new Set<string>();
  for await (const c of a.checkpointer.list(config)) seen.add(c.checkpoint.id);
  const nodes: string[][] = [];
  const stream = await a.agent.graph.stream({ messages: [new HumanMessage(prompt)] }, { ...config, recursionLimit: a.agent.recursionLimit, streamMode: "updates" });
  for await (const chunk of stream) nodes.push(Object.keys(chunk as Record<string, unknown>));
  // One "loop" checkpoint per step; the first is LangGraph's own step that applies the input.
  let steps = -1;
  for await (const c of a.checkpointer.list(config)) if (!seen.has(c.checkpoint.id) && c.metadata?.source === "loop") steps++;
  const state = (await a.agent.graph.getState(config)).values as { messages: BaseMessage[] };
  return { steps, nodes, messages: state.messages };
}

const read = (i: number) => ({ name: "read_file", args: { description: `read ${i}`, path: `${WS}/f${i}.txt` } });

test("an answer turn is 3 steps, a tool turn 4, parallel calls one tools step; the run's own hooks add none", async () => {
  const a = leadAgent("steps");
  server.setScript([{ content: "Hello." }]);
  const answer = await run(a, "steps", "hi");
  assert.equal(answer.steps, 3);
  assert.deepEqual(answer.nodes.flat(), [NODE.beforeModel, NODE.model, NODE.afterModel]);
  // The run's beforeAgent hooks ran (ThreadData wrote thread_data) and its afterAgent hooks too
  // (TerminalResponse, LoopDetection: nothing to do on a plain answer).
  const values = (await a.agent.graph.getState({ configurable: { thread_id: "steps" } })).values as { thread_data?: unknown };
  assert.ok(values.thread_data, "beforeAgent ran in the first before_model step");

  // Three sequential tool turns, one of them with two parallel calls, then the answer.
  server.setScript([{ toolCalls: [read(0)] }, { toolCalls: [read(1), read(2)] }, { toolCalls: [read(3)] }, { content: "Read them." }]);
  const tools = await run(a, "steps", "read some files");
  assert.equal(tools.steps, 3 * 4 + 3);
  const results = tools.messages.filter((m) => ToolMessage.isInstance(m));
  assert.equal(results.length, 4);
  assert.ok(results.every((m) => (m as ToolMessage).status !== "error"), results.map((m) => JSON.stringify(m.content)).join("\n"));
  // The two parallel results arrive as two updates of the same tools step.
  assert.equal(tools.nodes.filter((n) => n.includes(NODE.tools)).length, 4);
});

test("the turn budget: a model that never stops calling tools ends after maxTurns model calls, every call answered, with a visible turn_capped message", async () => {
  const a = leadAgent("capped", 3);
  server.setScript((req): ScriptedReply => ({ toolCalls: [read(toolResults(req) % 8)] }));
  const first = server.requests.length;
  const out = await run(a, "capped", "never stop");
  assert.equal(server.requests.length - first, 3);
  assert.equal(out.steps, 3 * 4 + 1, "three tool turns, then the before_model that ends the run");
  const last = out.messages.at(-1)!;
  assert.ok(AIMessage.isInstance(last));
  assert.equal(last.additional_kwargs.stop_reason, "turn_capped");
  assert.deepEqual(last.tool_calls ?? [], []);
  const answered = new Set(out.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id));
  const calls = out.messages.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []) : []));
  assert.equal(calls.length, 3);
  assert.ok(calls.every((c) => answered.has(c.id!)));

  // The budget is per run: the next run gets three turns again, and ends with the answer.
  server.setScript([{ toolCalls: [read(5)] }, { content: "Now I stop." }]);
  const next = await run(a, "capped", "Continue");
  assert.equal(next.messages.at(-1)!.content, "Now I stop.");
});

test("a run of 60 tool turns (240 steps, past LangGraph's old limit of 100) is not cut by the recursion limit", async () => {
  const a = leadAgent("long", 300);
  // Four tools in turn, each call different: one tool 50 times in a row is loop detection's to stop.
  const calls = [
    (n: number) => ({ name: "ls", args: { description: `ls ${n}`, path: `${WS}/nothing-${n}` } }),
    (n: number) => read(n % 8),
    (n: number) => ({ name: "glob", args: { description: `glob ${n}`, pattern: `**/f${n % 8}*.txt`, path: WS } }),
    (n: number) => ({ name: "grep", args: { description: `grep ${n}`, pattern: `file ${n}$`, path: WS } }),
  ];
  server.setScript((req): ScriptedReply => {
    const n = toolResults(req);
    return n < 60 ? { toolCalls: [calls[n % 4]!(n)] } : { content: "Finally." };
  });
  const out = await run(a, "long", "go long");
  assert.equal(out.messages.at(-1)!.content, "Finally.");
  assert.equal(out.steps, 60 * 4 + 3);
  assert.ok(a.agent.recursionLimit >= out.steps, `recursion limit ${a.agent.recursionLimit} ≥ ${out.steps} steps`);
});
