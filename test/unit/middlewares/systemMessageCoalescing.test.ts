// SystemMessageCoalescingMiddleware through the real agent graph (agent/graph/build.ts): system messages in the history (a
// middleware's reminder) are merged with the static prompt into ONE leading system message.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createMiddleware } from "langchain";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { coalesceSystemMessages, systemMessageCoalescingMiddleware } from "../../../extension/harness/middlewares/systemMessageCoalescing.js";
import { buildTestAgent, streamTurn, text } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

/** Stands in for DeerFlow's DynamicContext: puts a system reminder into the persisted history. */
const reminder = createMiddleware({
  name: "ReminderMiddleware",
  beforeAgent: () => ({ messages: [new SystemMessage({ content: "<system-reminder>today</system-reminder>", id: "reminder-1" })] }),
});

test("one leading system message per request: the prompt and in-history system messages joined by a blank line", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [reminder, systemMessageCoalescingMiddleware()] });
  server.setScript([{ content: "ok" }]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "coalesce-1", "hi");
  assert.equal(out.error, undefined, String(out.error));
  const sent = server.requests[first]!.body!.messages!;
  assert.deepEqual(sent.map((m) => m.role), ["system", "user"]);
  assert.equal(text(sent[0]), "You are DeerFlow.\n\n<system-reminder>today</system-reminder>");
  assert.ok(out.messages.some((m) => m.getType() === "system"), "the checkpoint keeps its system message: request-only");
});

test("without the middleware the same request carries two system messages (what strict backends reject)", async () => {
  const agent = buildTestAgent({ baseURL: server.url, middleware: [reminder] });
  server.setScript([{ content: "ok" }]);
  const first = server.requests.length;
  await streamTurn(agent, "coalesce-2", "hi");
  assert.equal(server.requests[first]!.body!.messages!.filter((m) => m.role === "system").length, 2);
});

test("pure: no system in the history → null (same request); first id kept, kwargs merged, only the newest date reminder", () => {
  const prompt = new SystemMessage({ content: "P", id: "sys-0" });
  assert.equal(coalesceSystemMessages(prompt, [new HumanMessage("x")]), null);
  const r1 = new SystemMessage({ content: "old date", additional_kwargs: { dynamic_context_reminder: true, a: 1 } });
  const r2 = new SystemMessage({ content: "new date", additional_kwargs: { dynamic_context_reminder: true, a: 2 } });
  const h = new HumanMessage("x");
  const out = coalesceSystemMessages(prompt, [r1, h, r2])!;
  assert.equal(out.systemMessage.text, "P\n\nnew date");
  assert.equal(out.systemMessage.id, "sys-0");
  assert.equal(out.systemMessage.additional_kwargs.a, 2);
  assert.deepEqual(out.messages, [h]);
  assert.equal(coalesceSystemMessages(new SystemMessage(""), [r1])!.systemMessage.text, "old date", "an empty prompt adds no blank lines");
});
