// ToolErrorHandlingMiddleware through the real agent graph (agent/graph/build.ts): a throwing tool becomes DeerFlow's error
// ToolMessage (A17), the model sees it and the run goes on; LangGraph interrupts are not swallowed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { tool, ToolMessage } from "langchain";
import { interrupt } from "@langchain/langgraph";
import { z } from "zod";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { toolErrorHandlingMiddleware, toolErrorMessage } from "../../../extension/harness/middlewares/toolErrorHandling.js";
import { nonSystem, buildTestAgent, streamTurn, text } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const webSearch = tool(
  (): Promise<string> => {
    throw new Error("network down");
  },
  { name: "web_search", description: "Search the web", schema: z.object({ query: z.string() }) },
);

test("a tool that throws becomes an error ToolMessage with DeerFlow's text; the model sees it and the run goes on", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [toolErrorHandlingMiddleware()], tools: [webSearch] });
  server.setScript([{ toolCalls: [{ name: "web_search", args: { query: "deerflow" }, id: "tc-42" }] }, { content: "I could not search." }]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "tool-error-1", "search please");
  assert.equal(out.error, undefined, String(out.error));
  const result = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
  assert.equal(result.status, "error");
  assert.equal(result.name, "web_search");
  assert.equal(result.tool_call_id, "tc-42");
  assert.equal(result.content, "Error: Tool 'web_search' failed with Error: network down. Continue with available context, or choose an alternative tool.");
  assert.deepEqual(result.additional_kwargs.deerflow_tool_meta, {
    status: "error",
    error_type: "transient",
    recoverable_by_model: true,
    recommended_next_action: "choose_alternative",
    source: "exception",
  });
  const sent = nonSystem(server.requests[first + 1]!.body!.messages);
  assert.match(text(sent.at(-1)), /Tool 'web_search' failed/);
  assert.equal(out.messages.at(-1)!.text, "I could not search.");
});

test("the detail is capped at 500 characters; a missing id becomes missing_tool_call_id", () => {
  const msg = toolErrorMessage({ name: "bash" }, new TypeError("x".repeat(2000)));
  assert.equal(msg.tool_call_id, "missing_tool_call_id");
  const detail = msg.text.slice("Error: Tool 'bash' failed with TypeError: ".length).split(". Continue")[0]!;
  assert.equal(detail.length, 500);
  assert.ok(detail.endsWith("..."));
});

test("arguments that fail the tool's schema are answered the same way, naming the parsing error", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [toolErrorHandlingMiddleware()], tools: [webSearch] });
  server.setScript([{ toolCalls: [{ name: "web_search", args: { q: 1 }, id: "bad-args" }] }, { content: "ok" }]);
  const out = await streamTurn(agent, "tool-error-2", "search");
  assert.equal(out.error, undefined, String(out.error));
  const result = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
  assert.equal(result.status, "error");
  assert.match(result.text, /^Error: Tool 'web_search' failed with ToolInputParsingException: /);
});

test("a LangGraph interrupt inside a tool is re-raised, not converted: the run pauses for the human", async () => {
  const ask = tool((): string => String(interrupt({ question: "ok?" })), { name: "ask", description: "Ask", schema: z.object({}) });
  const agent = buildTestAgent({ baseURL: server.url, middleware: [toolErrorHandlingMiddleware()], tools: [ask] });
  server.setScript([{ toolCalls: [{ name: "ask", args: {}, id: "ask-1" }] }]);
  const out = await streamTurn(agent, "tool-error-3", "ask me");
  assert.equal(out.error, undefined, String(out.error));
  const snap = await agent.graph.getState({ configurable: { thread_id: "tool-error-3" } });
  assert.deepEqual(snap.tasks.flatMap((t) => t.interrupts.map((i) => i.value)), [{ question: "ok?" }]);
  assert.ok(!out.messages.some((m) => ToolMessage.isInstance(m)), "no error result was made from the interrupt");
});
