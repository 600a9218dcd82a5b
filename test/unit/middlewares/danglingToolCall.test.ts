// DanglingToolCallMiddleware: the pure patch (DeerFlow A16 cases) and, through the real agent graph (agent/graph/build.ts)
// against the scripted server (which answers 400 like OpenAI for an invalid history), that a thread
// with an unanswered call, an orphan result or a malformed call keeps working, request-only.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "langchain";
import { z } from "zod";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import {
  danglingToolCallMiddleware,
  EMPTY_NAME_RESULT,
  INTERRUPTED_RESULT,
  patchToolCallHistory,
} from "../../../extension/harness/middlewares/danglingToolCall.js";
import { toolErrorHandlingMiddleware } from "../../../extension/harness/middlewares/toolErrorHandling.js";
import { nonSystem, buildTestAgent, streamTurn, text } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const ai = (calls: Array<{ id: string; name: string; args?: Record<string, unknown> }>, extra: Record<string, unknown> = {}) =>
  new AIMessage({ content: "", tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.args ?? {}, type: "tool_call" as const })), ...extra });
const result = (id: string, content = "ok", name = "bash") => new ToolMessage({ content, tool_call_id: id, name });
const shape = (ms: ReturnType<typeof patchToolCallHistory>) =>
  (ms ?? []).map((m) => (ToolMessage.isInstance(m) ? `tool:${m.tool_call_id}` : m.getType()));

test("nothing to fix (no AI messages, all answered, valid names and args) → null, the request passes through", () => {
  assert.equal(patchToolCallHistory([new HumanMessage("hi"), new AIMessage("hello")]), null);
  assert.equal(patchToolCallHistory([new HumanMessage("hi"), ai([{ id: "c1", name: "bash" }]), result("c1"), new AIMessage("done")]), null);
});

test("[AI(call_1)] → a synthetic error result right after it, naming the tool, saying it was interrupted", () => {
  const patched = patchToolCallHistory([new HumanMessage("q"), ai([{ id: "call_1", name: "bash" }]), new HumanMessage("again")]);
  assert.deepEqual(shape(patched), ["human", "ai", "tool:call_1", "human"]);
  const t = patched![2] as ToolMessage;
  assert.equal(t.status, "error");
  assert.equal(t.name, "bash");
  assert.equal(t.content, INTERRUPTED_RESULT);
  assert.match(String(t.content), /interrupted/);
});

test("only missing ids are patched; non-adjacent results move next to their call; orphans are dropped", () => {
  const patched = patchToolCallHistory([
    new HumanMessage("q"),
    ai([{ id: "a", name: "ls" }, { id: "b", name: "bash" }]),
    new HumanMessage("interjection"),
    result("b", "late b"),
    result("zzz", "result of neither"),
  ]);
  assert.deepEqual(shape(patched), ["human", "ai", "tool:a", "tool:b", "human"]);
  assert.equal((patched![2] as ToolMessage).content, INTERRUPTED_RESULT);
  assert.equal((patched![3] as ToolMessage).content, "late b");
});

test("empty names become unknown_tool in structured and raw payloads; the result says the name was missing", () => {
  const msg = new AIMessage({
    content: "",
    tool_calls: [{ id: "e1", name: "", args: {}, type: "tool_call" }],
    additional_kwargs: { tool_calls: [{ id: "e1", type: "function", function: { name: "", arguments: "{}" } }] },
  });
  const patched = patchToolCallHistory([new HumanMessage("q"), msg])!;
  const fixed = patched[1] as AIMessage;
  assert.equal(fixed.tool_calls![0]!.name, "unknown_tool");
  assert.equal((fixed.additional_kwargs.tool_calls as any[])[0].function.name, "unknown_tool");
  assert.equal((patched[2] as ToolMessage).content, EMPTY_NAME_RESULT);
  assert.doesNotMatch((patched[2] as ToolMessage).text, /arguments were invalid/);
});

test("#4172: valid, empty-name and invalid-args calls all serialise with names and {} args, results in call order", () => {
  const msg = new AIMessage({
    content: "",
    tool_calls: [
      { id: "valid_call", name: "ls", args: { path: "/mnt/user-data/workspace" }, type: "tool_call" },
      { id: "empty_name_call", name: " ", args: {}, type: "tool_call" },
    ],
    invalid_tool_calls: [{ id: "invalid_args_call", name: "write_file", args: '{"path": "/x", "content": "unterminated', error: "Unexpected end of JSON input", type: "invalid_tool_call" }],
  });
  const patched = patchToolCallHistory([new HumanMessage("q"), msg, result("valid_call", "listing", "ls")])!;
  const fixed = patched[1] as AIMessage;
  assert.deepEqual(fixed.tool_calls!.map((c) => [c.id, c.name, c.args]), [
    ["valid_call", "ls", { path: "/mnt/user-data/workspace" }],
    ["empty_name_call", "unknown_tool", {}],
    ["invalid_args_call", "write_file", {}],
  ]);
  assert.deepEqual(fixed.invalid_tool_calls, []);
  assert.deepEqual(shape(patched).slice(2), ["tool:valid_call", "tool:empty_name_call", "tool:invalid_args_call"]);
  assert.match((patched[4] as ToolMessage).text, /^\[write_file failed before execution: .*no file was written.*Parser error: Unexpected end of JSON input\]$/s);
});

test("a raw-only provider payload with unparsable arguments is normalised to \"{}\" and answered", () => {
  const msg = new AIMessage({ content: "", additional_kwargs: { tool_calls: [{ id: "r1", type: "function", function: { name: "grep", arguments: "not json{" } }] } });
  const patched = patchToolCallHistory([new HumanMessage("q"), msg])!;
  assert.equal(((patched[1] as AIMessage).additional_kwargs.tool_calls as any[])[0].function.arguments, "{}");
  // @langchain/core parses the raw payload into invalid_tool_calls, with its parser's message.
  assert.match((patched[2] as ToolMessage).text, /^\[Tool call could not be executed because its arguments were invalid: .+\]$/);
});

test("blank ids get a stable synthetic id; valid odd ids are kept byte for byte", () => {
  const patched = patchToolCallHistory([new HumanMessage("q"), ai([{ id: "", name: "ls" }, { id: " call_1 ", name: "bash" }]), result(" call_1 ")])!;
  const calls = (patched[1] as AIMessage).tool_calls!;
  assert.equal(calls[0]!.id, "deerflow_synthetic_tool_call_1_call_0");
  assert.equal(calls[1]!.id, " call_1 ");
  assert.deepEqual(shape(patched).slice(2), ["tool:deerflow_synthetic_tool_call_1_call_0", "tool: call_1 "]);
});

test("through the agent: a history left with an unanswered call is sent provider-valid, and the checkpoint is untouched", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [danglingToolCallMiddleware()] });
  server.setScript([{ content: "Recovered." }]);
  const first = server.requests.length;
  // As a killed run leaves it: the assistant's tool call saved, its result never written.
  const out = await streamTurn(agent, "dangling-1", [
    new HumanMessage("run the tests"),
    ai([{ id: "call_killed", name: "bash", args: { description: "tests", command: "npm test" } }]),
    new HumanMessage("what happened?"),
  ]);
  assert.equal(out.error, undefined, String(out.error));
  const req = server.requests[first]!;
  assert.equal(req.status, 200, req.error);
  const sent = nonSystem(req.body!.messages);
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool", "user"]);
  assert.equal(sent[2]!.tool_call_id, "call_killed");
  assert.equal(text(sent[2]), INTERRUPTED_RESULT);
  assert.deepEqual(out.messages.map((m) => m.getType()), ["human", "ai", "human", "ai"], "the placeholder is request-only");
});

test("without the middleware the same history is the provider's 400 (the scripted server validates like OpenAI)", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [] });
  server.setScript([{ content: "never" }]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "dangling-2", [new HumanMessage("q"), ai([{ id: "call_x", name: "bash" }]), new HumanMessage("again")]);
  assert.ok(out.error, "the run fails");
  assert.equal(server.requests[first]!.status, 400);
  assert.match(server.requests[first]!.error!, /did not have response messages: call_x/);
});

const echo = tool(({ text: t }: { text: string }) => Promise.resolve(`echo: ${t}`), {
  name: "echo",
  description: "Echo the text back",
  schema: z.object({ text: z.string() }),
});

test("a malformed tool call from the model (invalid JSON arguments) does not crash the run, and the next turn is valid", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [danglingToolCallMiddleware(), toolErrorHandlingMiddleware()], tools: [echo] });
  server.setScript([
    { toolCalls: [{ name: "echo", rawArguments: "not json{", id: "bad_1" }, { name: "echo", args: { text: "hi" }, id: "good_1" }] },
    { content: "Handled." },
    { content: "Second turn." },
  ]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "malformed-1", "call echo");
  assert.equal(out.error, undefined, String(out.error));
  assert.equal(out.messages.at(-1)!.text, "Handled.");
  const second = nonSystem(server.requests[first + 1]!.body!.messages);
  const assistant = second.find((m) => m.role === "assistant")!;
  assert.deepEqual(assistant.tool_calls!.map((c) => [c.id, c.function?.name, c.function?.arguments]), [
    ["good_1", "echo", '{"text":"hi"}'],
    ["bad_1", "echo", "{}"],
  ]);
  const results = second.filter((m) => m.role === "tool");
  assert.deepEqual(results.map((m) => m.tool_call_id), ["good_1", "bad_1"]);
  assert.equal(text(results[0]), "echo: hi");
  assert.match(text(results[1]), /arguments were invalid/);

  const next = await streamTurn(agent, "malformed-1", "and now?");
  assert.equal(next.error, undefined, String(next.error));
  assert.equal(server.requests[first + 2]!.status, 200);
});

test("a model whose only call is malformed ends the turn; the next turn answers it with the invalid-arguments result", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [danglingToolCallMiddleware(), toolErrorHandlingMiddleware()], tools: [echo] });
  server.setScript([{ toolCalls: [{ name: "echo", rawArguments: "{{{", id: "only_bad" }] }, { content: "Sorry." }]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "malformed-2", "call echo");
  assert.equal(out.error, undefined, String(out.error));
  const next = await streamTurn(agent, "malformed-2", "retry please");
  assert.equal(next.error, undefined, String(next.error));
  const sent = nonSystem(server.requests[first + 1]!.body!.messages);
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool", "user"]);
  assert.equal(sent[2]!.tool_call_id, "only_bad");
  assert.match(text(sent[2]), /arguments were invalid/);
});
