// TodoMiddleware (plan mode) through the real agent graph (agent/graph/build.ts): write_todos state, the todo_reminder when
// the list scrolled out of context, and the completion nudges (transient, at most 2 per run).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { formatTodos, hasToolCallIntentOrError, todoMiddleware } from "../../../extension/harness/middlewares/todo.js";
import { buildTestAgent, nonSystem, text, turn } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const TODOS = [
  { content: "Set up project", status: "completed" },
  { content: "Write tests", status: "in_progress" },
  { content: "Deploy", status: "pending" },
];

function systemText(body: any): string {
  const sys = body.messages.find((m: any) => m.role === "system");
  return typeof sys.content === "string" ? sys.content : sys.content.map((b: any) => b.text).join("");
}

test("formatTodos: DeerFlow's `- [status] content` lines; a missing status is pending", () => {
  assert.equal(formatTodos([...TODOS, { content: "Celebrate" }] as any), "- [completed] Set up project\n- [in_progress] Write tests\n- [pending] Deploy\n- [pending] Celebrate");
});

test("tool intent: tool calls, invalid calls, raw provider calls and finish_reason tool_calls are not final answers", () => {
  assert.equal(hasToolCallIntentOrError(new AIMessage("done")), false);
  assert.equal(hasToolCallIntentOrError(new AIMessage({ content: "", tool_calls: [{ name: "ls", args: {}, id: "1" }] })), true);
  assert.equal(hasToolCallIntentOrError(new AIMessage({ content: "", invalid_tool_calls: [{ name: "ls", args: "{", id: "1", error: "bad" }] })), true);
  assert.equal(hasToolCallIntentOrError(new AIMessage({ content: "", additional_kwargs: { function_call: { name: "ls", arguments: "{}" } } })), true);
  assert.equal(hasToolCallIntentOrError(new AIMessage({ content: "", response_metadata: { finish_reason: "tool_calls" } })), true);
});

test("write_todos sets todos; an unfinished list nudges the model twice with only the open items, never persisted", async () => {
  const first = server.requests.length;
  server.setScript([
    { toolCalls: [{ name: "write_todos", args: { todos: TODOS } }] },
    { content: "All done!" },
    { content: "Still done." },
    { content: "Really done." },
  ]);
  const agent = buildTestAgent({ baseURL: server.url, middleware: [todoMiddleware()] });
  const s = await turn(agent, "todo-1", "build it");
  const reqs = server.requests.slice(first);
  assert.equal(reqs.length, 4, "one tool round, one final answer, two nudges, then the run may end");
  assert.deepEqual(s.todos, TODOS);
  assert.ok(reqs[0]!.body!.tools!.some((t) => t.function.name === "write_todos"));
  for (const r of reqs) assert.match(systemText(r.body), /`write_todos`/, "the todo section stays in every system prompt");
  // The nudged requests end with the answer and the transient reminder listing only open items.
  for (const r of reqs.slice(2)) {
    const msgs = nonSystem(r.body!.messages);
    const last = msgs.at(-1)!;
    assert.equal(last.role, "user");
    assert.equal(last.name, "todo_completion_reminder");
    assert.match(text(last), /^<system_reminder>\nYou have incomplete todo items that must be finished before giving your final response:\n\n- \[in_progress\] Write tests\n- \[pending\] Deploy\n\n/);
    assert.doesNotMatch(text(last), /Set up project/);
    assert.equal(msgs.at(-2)!.role, "assistant");
    assert.equal(msgs.filter((m) => m.name === "todo_completion_reminder").length, 1, "one reminder per request");
  }
  assert.deepEqual(
    s.messages.map((m) => m.getType()),
    ["human", "ai", "tool", "ai", "ai", "ai"],
    "every answer kept, no reminder in state",
  );
  assert.ok(!s.messages.some((m) => m.name === "todo_completion_reminder"));

  // A new run gets its own two nudges (the count is per run).
  server.setScript([{ content: "Hi again." }, { content: "x" }, { content: "y" }]);
  const second = server.requests.length;
  await turn(agent, "todo-1", "status?");
  assert.equal(server.requests.length - second, 3);
});

test("no nudge when every todo is completed, or when there are none", async () => {
  server.setScript([
    { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "a", status: "completed" }] } }] },
    { content: "Done." },
  ]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [todoMiddleware()] });
  await turn(agent, "todo-2", "go");
  assert.equal(server.requests.length - first, 2);
  server.setScript([{ content: "Plain answer." }]);
  await turn(agent, "todo-3", "hello");
  assert.equal(server.requests.length - first, 3);
});

test("todo_reminder: todos in state but no write_todos call visible → one hidden reminder with the items", async () => {
  server.setScript([{ content: "ok" }, { content: "ok" }, { content: "ok" }, { content: "ok" }, { content: "ok" }]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [todoMiddleware()] });
  const config = { configurable: { thread_id: "todo-4" } };
  // As after summarisation: the list survives in state, its write_todos call does not.
  await agent.graph.updateState(config, { messages: [new HumanMessage("earlier")], todos: [{ content: "Deploy", status: "completed" }, { content: "Ship", status: "pending" }] });
  const s = await turn(agent, "todo-4", "continue");
  const req = server.requests[first]!;
  const reminder = nonSystem(req.body!.messages).at(-1)!;
  assert.equal(reminder.role, "user");
  assert.equal(reminder.name, "todo_reminder");
  assert.match(text(reminder), /<system_reminder>[\s\S]*- \[completed\] Deploy\n- \[pending\] Ship[\s\S]*<\/system_reminder>/);
  const persisted = s.messages.filter((m) => m.name === "todo_reminder");
  assert.equal(persisted.length, 1, "the reminder is kept (DeerFlow), so it is not injected twice");
  assert.equal(persisted[0]!.additional_kwargs.hide_from_ui, true);
  for (const r of server.requests.slice(first + 1)) {
    assert.equal(nonSystem(r.body!.messages).filter((m) => m.name === "todo_reminder").length, 1);
  }
});

test("parallel write_todos calls are refused and the model is asked again", async () => {
  server.setScript([
    { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "a", status: "pending" }] } }, { name: "write_todos", args: { todos: [] } }] },
    { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "a", status: "completed" }] } }] },
    { content: "Done." },
  ]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [todoMiddleware()] });
  const s = await turn(agent, "todo-5", "go");
  assert.equal(server.requests.length - first, 3);
  const tools = server.requests[first + 1]!.body!.messages!.filter((m) => m.role === "tool");
  assert.equal(tools.length, 2);
  for (const t of tools) assert.match(text(t), /should never be called multiple times in parallel/);
  assert.deepEqual(s.todos, [{ content: "a", status: "completed" }]);
});
