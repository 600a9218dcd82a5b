// LLMErrorHandlingMiddleware through the real agent graph (agent/graph/build.ts) against the scripted server's error replies
// (A18): transient failures retried with `llm_retry` custom events, non-transient ones not retried,
// the final failure a typed error with DeerFlow's readable text, and the thread usable afterwards.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, ScriptedReply } from "../../fixtures/modelServer.js";
import {
  classifyLlmError,
  DEFAULT_LLM_RETRY,
  llmErrorHandlingMiddleware,
  LlmCallError,
  retryAfterMs,
  retryDelayMs,
} from "../../../extension/harness/middlewares/llmErrorHandling.js";
import { danglingToolCallMiddleware } from "../../../extension/harness/middlewares/danglingToolCall.js";
import { findCoded, nonSystem, buildTestAgent, streamTurn } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

/** Tiny real delays: the loop really sleeps, the suite stays fast. */
const FAST = { baseDelayMs: 5, capDelayMs: 20, burstBaseDelayMs: 10 };
const agentWith = (opts: Parameters<typeof llmErrorHandlingMiddleware>[0] = FAST) =>
  buildTestAgent({ baseURL: server.url, middleware: [danglingToolCallMiddleware(), llmErrorHandlingMiddleware(opts)] });

async function runScript(threadId: string, script: ScriptedReply[], opts?: Parameters<typeof llmErrorHandlingMiddleware>[0]) {
  server.setScript(script);
  const first = server.requests.length;
  const out = await streamTurn(agentWith(opts), threadId, "hello");
  return { ...out, requests: server.requests.slice(first) };
}

test("a busy provider twice, then an answer: one successful turn, 3 attempts, two llm_retry events", async () => {
  const out = await runScript("llm-1", [
    { error: { status: 429, headers: { "retry-after": "0" } } },
    { error: { status: 503 } },
    { content: "ok" },
  ]);
  assert.equal(out.error, undefined, String(out.error));
  assert.equal(out.requests.length, 3);
  assert.equal(out.messages.at(-1)!.text, "ok");
  assert.deepEqual(out.messages.map((m) => m.getType()), ["human", "ai"]);
  const retries = out.custom.filter((c) => c.type === "llm_retry");
  assert.equal(retries.length, 2);
  assert.deepEqual(retries.map((r) => [r.attempt, r.max_attempts, r.reason]), [[1, 3, "transient"], [2, 3, "transient"]]);
  assert.equal(retries[0]!.wait_ms, 0, "Retry-After: 0 is honoured verbatim");
  assert.ok(retries[1]!.wait_ms >= FAST.baseDelayMs && retries[1]!.wait_ms <= FAST.capDelayMs, String(retries[1]!.wait_ms));
  assert.equal(retries[0]!.message, "LLM request retry 1/3: provider request failed temporarily. Retrying in 1s.");
});

test("a connection reset mid-stream and a dropped connection are transient too", async () => {
  const out = await runScript("llm-2", [{ drop: true }, { content: "partial answer that is cut", dropAfterChunks: 2 }, { content: "whole" }]);
  assert.equal(out.error, undefined, String(out.error));
  assert.equal(out.requests.length, 3);
  assert.equal(out.messages.at(-1)!.text, "whole");
  assert.equal(out.custom.filter((c) => c.type === "llm_retry").length, 2);
});

test("a provider that keeps failing: the run fails with DeerFlow's readable reason after 3 attempts, and the thread keeps working", async () => {
  const out = await runScript("llm-3", [{ error: { status: 503 } }, { error: { status: 503 } }, { error: { status: 503 } }]);
  assert.equal(out.requests.length, 3);
  const err = findCoded<LlmCallError>(out.error);
  assert.ok(err instanceof LlmCallError, String(out.error));
  assert.equal(err.code, "llm_call_failed");
  assert.equal(err.reason, "transient");
  assert.equal(err.attempts, 3);
  assert.match(err.message, /^The configured LLM provider is temporarily unavailable after multiple retries\. .*\(503 /);
  assert.equal(err.errorType, "InternalServerError");
  assert.deepEqual(out.messages.map((m) => m.getType()), ["human"], "nothing half-written: no assistant message saved");

  // The next run on the same thread works and sends a valid history.
  server.setScript([{ content: "Back." }]);
  const first = server.requests.length;
  const agent = agentWith();
  const again = await streamTurn(agent, "llm-3b", "hello");
  assert.equal(again.error, undefined);
  assert.equal(server.requests[first]!.status, 200);
});

test("the same thread: a failed turn leaves [human]; the next turn sends [user, user] and succeeds", async () => {
  const agent = agentWith();
  server.setScript([{ error: { status: 502 } }, { error: { status: 502 } }, { error: { status: 502 } }, { content: "Recovered." }]);
  const first = server.requests.length;
  const failed = await streamTurn(agent, "llm-4", "first question");
  assert.ok(failed.error);
  const ok = await streamTurn(agent, "llm-4", "second question");
  assert.equal(ok.error, undefined, String(ok.error));
  const sent = nonSystem(server.requests[first + 3]!.body!.messages);
  assert.deepEqual(sent.map((m) => [m.role, m.content]), [["user", "first question"], ["user", "second question"]]);
});

test("non-transient errors are not retried: 400 generic, 401 auth, quota", async () => {
  const bad = await runScript("llm-5", [{ error: { status: 400, message: "Unsupported parameter: 'foo'." } }]);
  assert.equal(bad.requests.length, 1);
  const e400 = findCoded<LlmCallError>(bad.error)!;
  assert.equal(e400.reason, "generic");
  assert.match(e400.message, /^LLM request failed: 400 Unsupported parameter: 'foo'\.$/);
  assert.equal(bad.custom.length, 0);

  const auth = await runScript("llm-6", [{ error: { status: 401 } }]);
  assert.equal(auth.requests.length, 1);
  assert.equal(findCoded<LlmCallError>(auth.error)!.reason, "auth");
  assert.match(findCoded<LlmCallError>(auth.error)!.message, /authentication or access is invalid/);

  const quota = await runScript("llm-7", [{ error: { status: 429, code: "insufficient_quota", message: "You exceeded your current quota." } }]);
  assert.equal(quota.requests.length, 1);
  const q = findCoded<LlmCallError>(quota.error)!;
  assert.equal(q.reason, "quota");
  assert.match(q.message, /out of quota/);
});

test("a burst-rate 429 gets 2 attempts at most: the event says 1/2", async () => {
  const out = await runScript("llm-8", [
    { error: { status: 429, code: "limit_burst_rate", message: "Request rate increased too quickly." } },
    { error: { status: 429, code: "limit_burst_rate", message: "Request rate increased too quickly." } },
  ]);
  assert.equal(out.requests.length, 2);
  const retries = out.custom.filter((c) => c.type === "llm_retry");
  assert.deepEqual(retries.map((r) => [r.attempt, r.max_attempts, r.reason]), [[1, 2, "burst_rate"]]);
  assert.match(retries[0]!.message, /^LLM request retry 1\/2: provider is throttling request burst rate\./);
  assert.match(findCoded<LlmCallError>(out.error)!.message, /burst-rate/);
});

test("delays: decorrelated jitter within [base, min(cap, prev*3)], burst base for burst-rate, Retry-After honoured", () => {
  const lo = { ...DEFAULT_LLM_RETRY, random: () => 0 };
  const hi = { ...DEFAULT_LLM_RETRY, random: () => 0.999999 };
  assert.equal(retryDelayMs(lo, undefined, "transient"), 1000);
  assert.equal(retryDelayMs(hi, undefined, "transient"), 3000);
  assert.equal(retryDelayMs(hi, 3000, "transient"), 8000, "capped");
  assert.equal(retryDelayMs(lo, undefined, "burst_rate"), 5000);
  assert.equal(retryDelayMs(hi, undefined, "burst_rate"), 8000);
  assert.deepEqual(DEFAULT_LLM_RETRY, { maxAttempts: 3, baseDelayMs: 1000, capDelayMs: 8000, burstBaseDelayMs: 5000 });
  assert.equal(retryAfterMs({ headers: new Headers({ "retry-after": "2" }) }), 2000);
  assert.equal(retryAfterMs({ headers: { "retry-after-ms": "150" } }), 150);
  assert.equal(retryAfterMs({ headers: new Headers({ "retry-after": new Date(Date.now() + 3000).toUTCString() }) }, Date.now()) ! > 1000, true);
  assert.equal(retryAfterMs({ headers: new Headers() }), undefined);
});

test("classification by status and error class, not by our own messages", () => {
  const status = (s: number) => Object.assign(new Error(`${s} x`), { status: s });
  for (const s of [408, 409, 425, 429, 500, 502, 503, 504]) assert.deepEqual(classifyLlmError(status(s)), { retriable: true, reason: "transient" }, String(s));
  for (const s of [400, 404, 422]) assert.equal(classifyLlmError(status(s)).retriable, false, String(s));
  assert.equal(classifyLlmError(status(403)).reason, "auth");
  assert.deepEqual(classifyLlmError(Object.assign(new TypeError("terminated"), { cause: { code: "UND_ERR_SOCKET" } })), { retriable: true, reason: "transient" });
  assert.deepEqual(classifyLlmError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })), { retriable: true, reason: "transient" });
  assert.deepEqual(classifyLlmError(new Error("boom")), { retriable: false, reason: "generic" });
});

test("a cancelled run is not retried: the abort propagates at once", async () => {
  const agent = agentWith({ baseDelayMs: 60_000, capDelayMs: 60_000, burstBaseDelayMs: 60_000 });
  server.setScript([{ error: { status: 503 } }, { content: "never" }]);
  const controller = new AbortController();
  const first = server.requests.length;
  const pending = agent.graph.invoke({ messages: [{ role: "user", content: "x" }] }, { configurable: { thread_id: "llm-9" }, signal: controller.signal, streamMode: "values" });
  await server.waitForRequests(first + 1, { settled: true });
  controller.abort(new Error("cancelled by the user"));
  await assert.rejects(pending);
  assert.equal(server.requests.length, first + 1, "no second attempt after the cancel");
});
