// ClarificationMiddleware through the real agent graph (agent/graph/build.ts): ask_clarification ends the run with the
// formatted question and the human_input payload, and the next run continues the thread.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { AIMessage} from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { clarificationMiddleware, clarificationRequestId, formatClarification, humanInputPayload, normalizeOptions } from "../../../extension/harness/middlewares/clarification.js";
import { buildTestAgent, nonSystem, text, turn } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

test("options as a list, a JSON string or a plain string render as numbered lines; none → no list", () => {
  const q = { question: "Which environment?", clarification_type: "approach_choice" };
  for (const options of [["dev", "staging", "prod"], '["dev", "staging", "prod"]']) {
    const t = formatClarification({ ...q, options });
    assert.equal(t, "🔀 Which environment?\n\n  1. dev\n  2. staging\n  3. prod");
  }
  assert.equal(formatClarification({ ...q, options: "dev" }), "🔀 Which environment?\n\n  1. dev");
  for (const options of [undefined, null, [], ""]) assert.doesNotMatch(formatClarification({ ...q, options }), /1\./);
  assert.deepEqual(normalizeOptions([" a ", "a", "", "<b>b</b>", 3]), ["a", "b", "3"]);
  assert.deepEqual(normalizeOptions({ option: ["x", { v: "y" }] }), ["x", "y"]);
});

test("context comes before the question; the icon follows the type (❓ by default)", () => {
  assert.equal(formatClarification({ question: "Delete it?", clarification_type: "risk_confirmation", context: "This removes prod data." }), "⚠️ This removes prod data.\n\nDelete it?");
  assert.equal(formatClarification({ question: "Path?", clarification_type: "bogus" }), "❓ Path?");
});

test("payload: v1 choice_with_other with option ids, free_text without options; stable request ids", () => {
  const p = humanInputPayload({ question: "Pick", clarification_type: "approach_choice", options: ["Option A", "Option B"] }, "call-abc", "clarification:call-abc");
  assert.deepEqual(p, {
    version: 1,
    kind: "human_input_request",
    source: "ask_clarification",
    request_id: "clarification:call-abc",
    clarification_type: "approach_choice",
    question: "Pick",
    input_mode: "choice_with_other",
    tool_call_id: "call-abc",
    options: [
      { id: "option-1", label: "Option A", value: "Option A" },
      { id: "option-2", label: "Option B", value: "Option B" },
    ],
  });
  const free = humanInputPayload({ question: "Why?", clarification_type: "missing_info" }, "c", "clarification:c");
  assert.equal(free.input_mode, "free_text");
  assert.ok(!("options" in free));
  assert.equal(clarificationRequestId("call-clarify-1", "x"), "clarification:call-clarify-1");
  assert.equal(clarificationRequestId(undefined, "same"), clarificationRequestId("", "same"));
  assert.match(clarificationRequestId(undefined, "same"), /^clarification:[0-9a-f]{16}$/);
});

test("ask_clarification ends the run on the question; the answer in the next run continues the thread", async () => {
  server.setScript([
    {
      toolCalls: [
        { id: "call-abc", name: "ask_clarification", args: { question: "Which environment?", clarification_type: "approach_choice", context: "Deploy target is unclear.", options: ["dev", "staging", "prod"] } },
      ],
    },
    { content: "Deploying to staging." },
  ]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [clarificationMiddleware()] });
  const s1 = await turn(agent, "clar-1", "deploy it");
  assert.equal(server.requests.length - first, 1, "the model is not called again after the question");
  assert.ok(server.requests[first]!.body!.tools!.some((t) => t.function.name === "ask_clarification"));
  const last = s1.messages.at(-1)!;
  assert.ok(ToolMessage.isInstance(last));
  assert.equal(last.name, "ask_clarification");
  assert.equal(last.id, "clarification:call-abc");
  assert.equal(last.content, "🔀 Deploy target is unclear.\n\nWhich environment?\n\n  1. dev\n  2. staging\n  3. prod");
  assert.equal((last.artifact).human_input.request_id, "clarification:call-abc");
  assert.equal(last.additional_kwargs.human_input && (last.additional_kwargs.human_input as any).input_mode, "choice_with_other");

  const s2 = await turn(agent, "clar-1", "staging");
  assert.equal(server.requests.length - first, 2);
  const sent = nonSystem(server.requests[first + 1]!.body!.messages);
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool", "user"]);
  assert.match(text(sent[2]), /Which environment\?/);
  assert.equal(text(sent[3]), "staging");
  assert.equal(s2.messages.at(-1)!.content, "Deploying to staging.");
});

test("other tools are not intercepted", async () => {
  server.setScript([{ toolCalls: [{ name: "nope", args: {} }] }, { content: "ok" }]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, middleware: [clarificationMiddleware()] });
  const s = await turn(agent, "clar-2", "go");
  assert.equal(server.requests.length - first, 2);
  const tool = s.messages.find((m) => ToolMessage.isInstance(m))!;
  assert.notEqual(tool.name, "ask_clarification");
});

test("parallel calls: whichever order the results land in, the run ends on the question", async () => {
  for (const clarificationFirst of [true, false]) {
    const calls = [
      { name: "ask_clarification", args: { question: "Which year?", clarification_type: "missing_info" } },
      { name: "unknown_tool", args: {} },
    ];
    if (!clarificationFirst) calls.reverse();
    server.setScript([{ toolCalls: calls }, { content: "must not be requested" }]);
    const first = server.requests.length;
    const agent = buildTestAgent({ baseURL: server.url, middleware: [clarificationMiddleware()] });
    const s = await turn(agent, `clar-par-${clarificationFirst}`, "plan a trip");
    assert.equal(server.requests.length - first, 1, `no model call after the question (clarification first: ${clarificationFirst})`);
    assert.equal(s.messages.filter((m) => ToolMessage.isInstance(m)).length, 2, "the other call still ran");
    const askId = (s.messages[1] as AIMessage).tool_calls!.find((c) => c.name === "ask_clarification")!.id;
    assert.ok(s.messages.some((m) => m.id === `clarification:${askId}`));
    // The answer continues the thread.
    server.setScript([{ content: "2027 it is." }]);
    const s2 = await turn(agent, `clar-par-${clarificationFirst}`, "2027");
    assert.equal(s2.messages.at(-1)!.content, "2027 it is.");
  }
});
