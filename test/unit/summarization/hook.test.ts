// The beforeSummarize hook point (DeerFlow's before_summarization hooks, e.g. the memory flush)
// through the real lead chain (agent/middlewareChain.ts) and the agent graph, against the scripted
// model server: called once a summary exists, with the messages about to be summarized; never for
// a summary that failed; a failing hook is logged and changes nothing else.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, ScriptedReply } from "../../fixtures/modelServer.js";
import { buildMiddlewareChain } from "../../../extension/harness/agent/middlewareChain.js";
import type { ChainContext } from "../../../extension/harness/agent/middlewareChain.js";
import { threadStateFields } from "../../../extension/harness/state/threadState.js";
import { buildAgentGraph } from "../../../extension/harness/agent/graph/build.js";
import { SUMMARIZATION_DEFAULTS } from "../../../extension/harness/middlewares/summarization.js";
import { setDiagnostics } from "../../../extension/harness/diagnostics.js";
import { chatModel, streamTurn, threadFixture } from "../middlewares/helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const warnings: string[] = [];
const infos: string[] = [];
setDiagnostics({ info: (m) => infos.push(m), warn: (m) => warnings.push(m) });

type Summarization = NonNullable<ChainContext["summarization"]>;

function agentWith(beforeSummarize: ChainContext["beforeSummarize"], tune: (s: Summarization) => Summarization = (s) => s) {
  const { dirs, blobs } = threadFixture("hook");
  const model = chatModel(server.url);
  const ctx: ChainContext = {
    dirs,
    blobs,
    model,
    supportsVision: false,
    planMode: false,
    llmRetry: { maxAttempts: 1 },
    summarization: tune({
      settings: { ...SUMMARIZATION_DEFAULTS, trigger: [{ type: "messages", value: 3 }], keep: { type: "messages", value: 1 }, trimTokensToSummarize: null },
      candidates: [{ name: "scripted", model }],
      tokenModel: "scripted",
    }),
    ...(beforeSummarize ? { beforeSummarize } : {}),
  };
  return buildAgentGraph({ model, tools: [], systemPrompt: "You are DeerFlow.", stateFields: threadStateFields, middleware: buildMiddlewareChain(ctx), checkpointer: new MemorySaver() });
}

/** Turn 1 answers; turn 2 crosses 3 messages: the summary call, then the answer. */
async function twoTurns(agent: ReturnType<typeof agentWith>, thread: string, summary: ScriptedReply) {
  server.setScript([{ content: "Answer one." }, summary, { content: "Answer two." }]);
  await streamTurn(agent, thread, "first question");
  return streamTurn(agent, thread, "second question");
}

test("the hook gets the messages about to be summarized, once the summary exists", async () => {
  const seen: BaseMessage[][] = [];
  const agent = agentWith((messages) => {
    seen.push(messages);
    return Promise.resolve();
  });
  const out = await twoTurns(agent, "t-hook", { content: "SUMMARY" });
  assert.equal(out.error, undefined);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0]!.map((m) => [m.getType(), m.content]), [["human", "first question"], ["ai", "Answer one."]]);
  assert.equal(out.values.summary_text, "SUMMARY");
  assert.equal(out.messages.length, 4, "nothing left the state");
});

test("no hook call for a summary that failed; the failure is a custom event, the turn goes on", async () => {
  let calls = 0;
  const agent = agentWith(() => {
    calls++;
    return Promise.resolve();
  });
  const out = await twoTurns(agent, "t-nohook", { error: { status: 500 } });
  assert.equal(out.error, undefined);
  assert.equal(calls, 0);
  assert.equal(out.values.summary_text ?? null, null);
  assert.equal(out.custom.filter((c) => c.type === "summarization_failed").length, 1);
  assert.equal(out.messages.at(-1)?.content, "Answer two.");
});

test("a hook that throws is logged, not fatal: the summary is still stored", async () => {
  warnings.length = 0;
  const agent = agentWith(() => Promise.reject(new Error("memory store offline")));
  const out = await twoTurns(agent, "t-badhook", { content: "SUMMARY-2" });
  assert.equal(out.error, undefined);
  assert.equal(out.values.summary_text, "SUMMARY-2");
  assert.ok(warnings.some((w) => w.includes("beforeSummarize hook failed: memory store offline")), warnings.join("\n"));
});

test("the model's tokenizer is loaded only near a token trigger: far below it the estimate decides", async () => {
  infos.length = 0;
  const withTokens = (value: number) => (s: Summarization): Summarization => ({ ...s, tokenModel: "gpt-4o-mini", settings: { ...s.settings, trigger: [{ type: "tokens", value }] } });
  const far = agentWith(undefined, withTokens(1_000_000));
  const quiet = await twoTurns(far, "t-far", { content: "unused" });
  assert.equal(quiet.values.summary_text ?? null, null);
  assert.ok(!infos.some((l) => l.includes("gpt-4o-mini")), "no tokenizer for a thread far below the trigger");
  const near = agentWith(undefined, withTokens(15)); // [h1, a1, h2] are 3 × (2 + 4) = 18 tokens; h1 alone 6
  const summarized = await twoTurns(near, "t-near", { content: "SUMMARY-NEAR" });
  assert.equal(summarized.values.summary_text, "SUMMARY-NEAR");
  assert.deepEqual(infos.filter((l) => l.includes("gpt-4o-mini")), ['token counts for model "gpt-4o-mini" use its tokenizer (js-tiktoken o200k_base)']);
});

test("an error before any summary call (here a summary prompt that is not text) skips the compaction: logged, journaled, the turn goes on", async () => {
  warnings.length = 0;
  const broken = (s: Summarization): Summarization => ({ ...s, settings: { ...s.settings, summaryPrompt: undefined as unknown as string } });
  const agent = agentWith(undefined, broken);
  server.setScript([{ content: "Answer one." }, { content: "Answer two." }]);
  await streamTurn(agent, "t-broken", "first question");
  const out = await streamTurn(agent, "t-broken", "second question");
  assert.equal(out.error, undefined);
  assert.equal(out.values.summary_text ?? null, null);
  assert.equal(out.custom.filter((c) => c.type === "summarization_failed").length, 1);
  assert.ok(warnings.some((w) => w.startsWith("summarization: skipped:")), warnings.join("\n"));
  assert.equal(out.messages.at(-1)?.content, "Answer two.");
  assert.equal(out.messages.length, 4, "nothing left the state");
});
