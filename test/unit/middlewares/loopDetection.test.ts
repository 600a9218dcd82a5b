// LoopDetectionMiddleware (A19) through the real agent graph (agent/graph/build.ts): the 3rd identical tool-call set queues a
// warning delivered on the next request after the tool results (request-only), the 5th is replaced
// by a forced final answer; hashing is order-independent; per-tool frequency limits.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, tool } from "langchain";
import { z } from "zod";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { HARD_STOP, hashToolCalls, LOOP_WARNING, loopDetectionMiddleware } from "../../../extension/harness/middlewares/loopDetection.js";
import { danglingToolCallMiddleware } from "../../../extension/harness/middlewares/danglingToolCall.js";
import { nonSystem, buildTestAgent, streamTurn, text } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const read = tool(({ path }: { path: string }) => Promise.resolve(`contents of ${path}`), {
  name: "read_file",
  description: "Read",
  schema: z.object({ path: z.string(), start_line: z.number().optional(), end_line: z.number().optional() }),
});
const ls = tool(({ path }: { path: string }) => Promise.resolve(`listing of ${path}`), { name: "ls", description: "List", schema: z.object({ path: z.string() }) });

test("hash: same calls same hash, order-independent, stringified args equal dict args, read ranges bucketed", () => {
  const a = { name: "ls", args: { path: "/a" } };
  const b = { name: "grep", args: { pattern: "x", path: "/b" } };
  assert.equal(hashToolCalls([a, b]), hashToolCalls([b, a]));
  assert.equal(hashToolCalls([a]), hashToolCalls([{ name: "ls", args: '{"path": "/a"}' }]));
  assert.equal(hashToolCalls([{ name: "read_file", args: { path: "/f", start_line: 10, end_line: 50 } }]), hashToolCalls([{ name: "read_file", args: { path: "/f", start_line: 50, end_line: 10 } }]));
  assert.notEqual(hashToolCalls([{ name: "read_file", args: { path: "/f", start_line: 1 } }]), hashToolCalls([{ name: "read_file", args: { path: "/f", start_line: 401 } }]));
  assert.notEqual(hashToolCalls([{ name: "grep", args: { pattern: "x" } }]), hashToolCalls([{ name: "grep", args: { pattern: "y" } }]));
  assert.notEqual(hashToolCalls([{ name: "write_file", args: { path: "/o", content: "1" } }]), hashToolCalls([{ name: "write_file", args: { path: "/o", content: "2" } }]));
  assert.equal(hashToolCalls([{ name: "bash", args: { command: "ls", description: "one" } }]), hashToolCalls([{ name: "bash", args: { command: "ls", description: "two" } }]), "only salient args count");
});

test("3rd identical set → a loop_warning after the tool results on the next request (once); 5th → forced stop", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [danglingToolCallMiddleware(), loopDetectionMiddleware()], tools: [read, ls] });
  // The model keeps reading the same two files, listing them in a different order each time.
  server.setScript((_req, i) => ({
    toolCalls: i % 2 === 0
      ? [{ name: "read_file", args: { path: "/mnt/user-data/workspace/a.ts" } }, { name: "ls", args: { path: "/mnt/user-data/workspace" } }]
      : [{ name: "ls", args: { path: "/mnt/user-data/workspace" } }, { name: "read_file", args: { path: "/mnt/user-data/workspace/a.ts" } }],
    content: `attempt ${i + 1}`,
  }));
  const first = server.requests.length;
  const out = await streamTurn(agent, "loop-1", "fix the bug");
  assert.equal(out.error, undefined, String(out.error));
  const requests = server.requests.slice(first);
  assert.equal(requests.length, 5, "the 5th identical set ended the run");
  for (const [i, r] of requests.entries()) assert.equal(r.status, 200, `request ${i}: ${r.error}`);

  const warned = requests.map((r) => nonSystem(r.body!.messages).filter((m) => m.role === "user" && m.name === "loop_warning"));
  assert.deepEqual(warned.map((w) => w.length), [0, 0, 0, 1, 0], "warned after the 3rd set, drained once");
  const fourth = nonSystem(requests[3]!.body!.messages);
  assert.deepEqual(fourth.slice(-4).map((m) => m.role), ["assistant", "tool", "tool", "user"], "after the tool results");
  assert.equal(text(fourth.at(-1)), LOOP_WARNING);
  assert.match(LOOP_WARNING, /LOOP DETECTED/);

  const last = out.messages.at(-1) as AIMessage;
  assert.ok(AIMessage.isInstance(last));
  assert.deepEqual(last.tool_calls, []);
  assert.equal(last.additional_kwargs.tool_calls, undefined);
  assert.equal(last.response_metadata.finish_reason, "stop");
  assert.equal(last.text, `attempt 5\n\n${HARD_STOP}`);
  assert.ok(!out.messages.some((m) => m.name === "loop_warning"), "the warning is request-only");
});

test("per-tool frequency: many different reads of one tool warn, then stop (thresholds configurable)", async () => {
  const agent = buildTestAgent({
    baseURL: server.url,
    middleware: [loopDetectionMiddleware({ toolFreqWarn: 3, toolFreqHardLimit: 5 })],
    tools: [read],
  });
  server.setScript((_req, i) => ({ toolCalls: [{ name: "read_file", args: { path: `/mnt/user-data/workspace/f${i}.ts` } }] }));
  const first = server.requests.length;
  const out = await streamTurn(agent, "loop-2", "read everything");
  assert.equal(out.error, undefined, String(out.error));
  const requests = server.requests.slice(first);
  assert.equal(requests.length, 5);
  const warning = nonSystem(requests[3]!.body!.messages).at(-1)!;
  assert.equal(warning.name, "loop_warning");
  assert.match(text(warning), /^\[LOOP DETECTED\] You have called read_file 3 times without producing a final answer\./);
  assert.match(out.messages.at(-1)!.text, /\[FORCED STOP\] Tool read_file called 5 times — exceeded the per-tool safety limit\./);
});

test("different tool calls never trip it; a warning is not carried into the next run", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [loopDetectionMiddleware({ warnThreshold: 2 })], tools: [ls] });
  server.setScript([
    { toolCalls: [{ name: "ls", args: { path: "/a" } }] },
    { toolCalls: [{ name: "ls", args: { path: "/a" } }] }, // 2nd identical → warning queued...
    { content: "done" },
    { content: "fresh" },
  ]);
  const first = server.requests.length;
  await streamTurn(agent, "loop-3", "go");
  const out2 = await streamTurn(agent, "loop-3", "next question");
  assert.equal(out2.error, undefined);
  const requests = server.requests.slice(first);
  assert.equal(nonSystem(requests[2]!.body!.messages).at(-1)!.name, "loop_warning");
  assert.ok(!nonSystem(requests[3]!.body!.messages).some((m) => m.name === "loop_warning"), "drained: not repeated in the next run");
});
