// TitleMiddleware through the real agent graph (agent/graph/build.ts): a title after the first exchange (local fallback or
// a title model whose tokens never reach the run's message stream), never regenerated.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { HumanMessage } from "@langchain/core/messages";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { buildTitlePrompt, fallbackTitle, parseTitle, shouldGenerateTitle, titleMiddleware } from "../../../extension/harness/middlewares/title.js";
import { AIMessage } from "@langchain/core/messages";
import { buildTestAgent, chatModel, turn } from "./helpers.js";

let server: ModelServer;
let titleServer: ModelServer;
before(async () => {
  server = await startModelServer();
  titleServer = await startModelServer();
});
after(async () => {
  await server.close();
  await titleServer.close();
});

test("fallback: the user text; long text → exactly 50 chars + '...'; empty → New Conversation", () => {
  assert.equal(fallbackTitle("请帮我写测试"), "请帮我写测试");
  assert.equal(fallbackTitle("x".repeat(80)), "x".repeat(50) + "...");
  assert.equal(fallbackTitle("x".repeat(50)), "x".repeat(50));
  assert.equal(fallbackTitle(""), "New Conversation");
  assert.ok(fallbackTitle("y".repeat(80), 20).length <= 20);
  assert.equal(fallbackTitle(`${"a".repeat(49)} tail`), `${"a".repeat(49)}...`, "trailing space trimmed before the ellipsis");
});

test("parseTitle strips think blocks and quotes, clamps to 60", () => {
  assert.equal(parseTitle('<think>hmm</think>"Deploy plan"'), "Deploy plan");
  assert.equal(parseTitle("<think>only thinking</think>"), "");
  assert.equal(parseTitle("z".repeat(80)).length, 60);
});

test("only the first complete exchange: one real user message and an AI message, no title yet", () => {
  const h = new HumanMessage("hi");
  const a = new AIMessage("hello");
  assert.equal(shouldGenerateTitle({ messages: [h] }), false);
  assert.equal(shouldGenerateTitle({ messages: [h, a] }), true);
  assert.equal(shouldGenerateTitle({ messages: [h, a], title: "t" }), false);
  assert.equal(shouldGenerateTitle({ messages: [h, a, new HumanMessage("again"), new AIMessage("x")] }), false);
  const reminder = new HumanMessage({ content: "r", name: "todo_reminder", additional_kwargs: { hide_from_ui: true } });
  const dyn = new HumanMessage({ content: "d", additional_kwargs: { dynamic_context_reminder: true } });
  assert.equal(shouldGenerateTitle({ messages: [dyn, h, reminder, a] }), true, "hidden reminders do not count");
});

test("local fallback: the first exchange sets the title from the typed text (not the uploads block); never regenerated", async () => {
  server.setScript([{ content: "Sure." }, { content: "Again." }]);
  const agent = buildTestAgent({ baseURL: server.url, middleware: [titleMiddleware()] });
  const typed = "Please refactor the payment module and add tests for the edge cases we discussed";
  const human = new HumanMessage({ content: `<current_uploads>…</current_uploads>\n\n${typed}`, additional_kwargs: { original_user_content: typed } });
  const s1 = await turn(agent, "title-1", human);
  assert.equal(s1.title, typed.slice(0, 50).trimEnd() + "...");
  const s2 = await turn(agent, "title-1", "something else entirely");
  assert.equal(s2.title, s1.title);
});

test("title model: DeerFlow's prompt, tagged nostream (no tokens in the run's messages stream), quotes stripped", async () => {
  server.setScript([{ content: "Here is the plan." }]);
  titleServer.setScript([{ content: '"Trip to Kyoto"' }]);
  const firstTitle = titleServer.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [titleMiddleware(chatModel(titleServer.url, "title-model"))] });
  const streamed: string[] = [];
  const stream = await agent.graph.stream({ messages: [new HumanMessage("Plan a trip to Kyoto")] }, { configurable: { thread_id: "title-2" }, streamMode: ["messages"] });
  for await (const [, [chunk]] of stream as AsyncIterable<[string, [any, any]]>) streamed.push(typeof chunk.content === "string" ? chunk.content : "");
  const snap = await agent.graph.getState({ configurable: { thread_id: "title-2" } });
  assert.equal((snap.values).title, "Trip to Kyoto");
  const req = titleServer.requests[firstTitle]!;
  assert.equal(req.body!.model, "title-model");
  assert.deepEqual(req.body!.messages, [
    {
      role: "user",
      content: "Generate a concise title (max 6 words) for this conversation.\nUser: Plan a trip to Kyoto\nAssistant: Here is the plan.\n\nReturn ONLY the title, no quotes, no explanation.",
    },
  ]);
  assert.ok(!streamed.join("").includes("Kyoto\""), "title tokens are not streamed");
  assert.ok(!streamed.join("").includes("Trip to"), "title tokens are not streamed");
  assert.match(streamed.join(""), /Here is the plan/);
});

test("a failing title model falls back to the local title", async () => {
  server.setScript([{ content: "ok" }]);
  titleServer.setScript([{ error: { status: 500 } }]);
  const agent = buildTestAgent({ baseURL: server.url, middleware: [titleMiddleware(chatModel(titleServer.url))] });
  const s = await turn(agent, "title-3", "fix the build");
  assert.equal(s.title, "fix the build");
});

test("DeerFlow's title keys: max_words and prompt_template shape the prompt, max_chars the fallback and the parsed title", () => {
  assert.equal(buildTitlePrompt("u", "a", { maxWords: 3, promptTemplate: "At most {max_words} words. U={user_msg} A={assistant_msg}" }), "At most 3 words. U=u A=a");
  assert.equal(fallbackTitle("a".repeat(30), 20), `${"a".repeat(17)}...`);
  assert.equal(parseTitle('"A title that is long"', 10), "A title th");
});
