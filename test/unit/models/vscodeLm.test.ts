/**
 * The vscode.lm RPC model bridge (issue 25): ChatVSCodeLM in the harness, over a real JSON-RPC
 * connection pair (vscode-jsonrpc on in-memory streams, the library the harness and host use),
 * with the host end played by a scripted `lm/chat` handler that speaks the wire protocol
 * (protocol/lm.ts) as host/lm/serve.ts does. Covers streaming, tool-call parts both ways,
 * cancellation mid-stream (the host's token is cancelled), each error kind, the tool cap, and
 * the host's mapping of LanguageModelError kinds onto the wire.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, type CancellationToken, type MessageConnection } from "vscode-languageserver/node.js";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { AIMessageChunk } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ChatVSCodeLM } from "../../../extension/harness/models/vscodeLm/chatModel.js";
import { connectionLmTransport } from "../../../extension/harness/server/lmTransport.js";
import { VsCodeLmError } from "../../../extension/harness/models/vscodeLm/errors.js";
import { LmToolsError } from "../../../extension/harness/models/vscodeLm/tools.js";
import { createChatModel, resolveModel } from "../../../extension/harness/models/factory.js";
import { parseHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { HarnessError } from "../../../extension/harness/errors.js";
import { lmErrorCode } from "../../../extension/host/lm/errors.js";
import type { LmChatParams, LmChatResult, LmErrorCode } from "../../../extension/protocol/lm.js";

type Script = (params: LmChatParams, token: CancellationToken, send: (parts: LmChatParams["messages"][number]["content"]) => void) => Promise<LmChatResult>;

let harnessSide: MessageConnection;
let hostSide: MessageConnection;
let script: Script;
const seen: LmChatParams[] = [];

const result = (input: number, output: number): LmChatResult => ({
  usage: { input_tokens: input, output_tokens: output, estimated: true },
  model: { id: "scripted-1", vendor: "deerflow-test", family: "scripted", name: "Scripted" },
});

before(() => {
  const toHost = new PassThrough();
  const toHarness = new PassThrough();
  harnessSide = createMessageConnection(new StreamMessageReader(toHarness), new StreamMessageWriter(toHost));
  hostSide = createMessageConnection(new StreamMessageReader(toHost), new StreamMessageWriter(toHarness));
  hostSide.onRequest("lm/chat", (params: LmChatParams, token: CancellationToken) => {
    seen.push(params);
    const send = (parts: LmChatParams["messages"][number]["content"]) => void hostSide.sendNotification("lm/chunk", { requestId: params.requestId, parts });
    return script(params, token, send);
  });
  harnessSide.listen();
  hostSide.listen();
});

after(() => {
  harnessSide.dispose();
  hostSide.dispose();
});

function model(): ChatVSCodeLM {
  return new ChatVSCodeLM({ selector: { vendor: "deerflow-test", family: "scripted" }, transport: connectionLmTransport(harnessSide) });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

test("text streams chunk by chunk (the first arrives before the host has finished), with estimated usage and one counted request", async () => {
  const firstSeen = deferred();
  script = async (_p, _t, send) => {
    send([{ type: "text", text: "Hel" }]);
    await firstSeen.promise; // the host goes on only once the harness has the first chunk
    send([{ type: "text", text: "lo" }]);
    return result(12, 3);
  };
  const m = model();
  const chunks: AIMessageChunk[] = [];
  for await (const c of await m.stream([new SystemMessage("Be brief."), new HumanMessage("Say hello")])) {
    chunks.push(c);
    firstSeen.resolve();
  }
  assert.deepEqual(chunks.map((c) => c.content).filter(Boolean), ["Hel", "lo"]);
  const last = chunks.at(-1)!;
  assert.deepEqual(last.usage_metadata, { input_tokens: 12, output_tokens: 3, total_tokens: 15 });
  assert.equal(last.response_metadata.usage_estimated, true);
  assert.equal(last.response_metadata.finish_reason, "stop");
  assert.equal(m.requests, 1);
  // The system prompt goes first as a User message, merged with the prompt (roles alternate).
  assert.deepEqual(seen.at(-1)!.messages, [{ role: "user", content: [{ type: "text", text: "Be brief." }, { type: "text", text: "Say hello" }] }]);
  assert.deepEqual(seen.at(-1)!.model, { vendor: "deerflow-test", family: "scripted" });
});

test("tool-call parts become tool calls (names mapped back), and a tool turn's history goes out as call and result parts", async () => {
  script = (_p, _t, send) => {
    send([{ type: "text", text: "Looking." }]);
    send([{ type: "tool_call", callId: "c2", name: "docs_search", input: { q: "lm" } }]);
    return Promise.resolve(result(40, 9));
  };
  const readFile = tool(() => Promise.resolve("x"), { name: "read_file", description: "Read a file", schema: z.object({ path: z.string() }) });
  const dotted = tool(() => Promise.resolve("y"), { name: "docs.search", description: "Search docs", schema: z.object({ q: z.string() }) });
  const m = model();
  const answer: AIMessageChunk = await m.bindTools([readFile, dotted]).invoke([
    new HumanMessage("read it"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read_file", args: { path: "/a" } }] }),
    new ToolMessage({ tool_call_id: "c1", content: "file text" }),
  ]);
  assert.equal(answer.content, "Looking.");
  assert.deepEqual(answer.tool_calls?.map((c) => ({ id: c.id, name: c.name, args: c.args })), [{ id: "c2", name: "docs.search", args: { q: "lm" } }]);
  assert.equal(answer.response_metadata.finish_reason, "tool_calls");
  const sent = seen.at(-1)!;
  assert.deepEqual(sent.tools?.map((t) => t.name), ["read_file", "docs_search"]);
  assert.equal((sent.tools?.[0]?.inputSchema as { properties?: Record<string, unknown> }).properties?.path !== undefined, true);
  assert.deepEqual(sent.messages, [
    { role: "user", content: [{ type: "text", text: "read it" }] },
    { role: "assistant", content: [{ type: "tool_call", callId: "c1", name: "read_file", input: { path: "/a" } }] },
    { role: "user", content: [{ type: "tool_result", callId: "c1", text: "file text" }] },
  ]);
});

test("an abort mid-stream cancels the host's request and ends the call at once", async () => {
  const hostCancelled = deferred();
  script = (_p, token, send) =>
    new Promise((_, reject) => {
      send([{ type: "text", text: "partial" }]);
      token.onCancellationRequested(() => {
        hostCancelled.resolve();
        reject(new ResponseError(-32800, "cancelled", { code: "lm_cancelled" }));
      });
    });
  const controller = new AbortController();
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const c of await model().stream([new HumanMessage("go on forever")], { signal: controller.signal })) {
      got.push(typeof c.content === "string" ? c.content : JSON.stringify(c.content));
      controller.abort(new Error("run cancelled"));
    }
  });
  assert.deepEqual(got, ["partial"]);
  await hostCancelled.promise; // the host's token saw the cancel
});

const KINDS: Array<[LmErrorCode, RegExp, number | undefined]> = [
  ["lm_not_found", /not available \(NotFound\).*Select Model/, 404],
  ["lm_no_permissions", /may not use .*\(NoPermissions\).*Allow DeerFlow/, 403],
  ["lm_blocked", /\(Blocked\).*Wait a minute/, 429],
  ["lm_model_not_supported", /model_not_supported: enable the model in Copilot Chat/, 400],
  ["lm_cancelled", /was cancelled in VS Code/, undefined],
  ["lm_failed", /failed: provider exploded/, undefined],
];

for (const [code, text, status] of KINDS) {
  test(`the host's ${code} ends the call with a readable error that says what to do`, async () => {
    script = () => Promise.reject(new ResponseError(-32000, code === "lm_failed" ? "provider exploded" : "from the host", { code }));
    await assert.rejects(model().invoke([new HumanMessage("hi")]), (e: unknown) => {
      assert.ok(e instanceof VsCodeLmError, String(e));
      assert.equal(e.code, code);
      assert.equal(e.status, status);
      assert.match(e.message, text);
      assert.match(e.message, /deerflow-test\/scripted/);
      return true;
    });
  });
}

test("more than 128 tools is a clear error before any request", async () => {
  const before = seen.length;
  const many = Array.from({ length: 129 }, (_, i) => tool(() => Promise.resolve(""), { name: `t${i}`, description: "d", schema: z.object({}) }));
  await assert.rejects(model().bindTools(many).invoke([new HumanMessage("hi")]), (e: unknown) => e instanceof LmToolsError && /129 tools.*at most 128/.test(e.message));
  assert.equal(seen.length, before);
});

test("a vscode-lm: name resolves without configuration; with no editor connected (the CLI) the model says it cannot reach vscode.lm", () => {
  const config = parseHarnessConfig({ models: [{ name: "fast", model: "gpt-fast" }] }, "test");
  const r = resolveModel(config, { name: "vscode-lm:copilot/gpt-4o" }, {});
  assert.deepEqual(r.vscodeLm, { vendor: "copilot", family: "gpt-4o" });
  assert.equal(r.supportsVision, false);
  assert.throws(() => resolveModel(config, { name: "vscode-lm:copilot" }, {}), (e: unknown) => e instanceof HarnessError && e.code === "unknown_model");
  assert.throws(() => createChatModel(r), (e: unknown) => e instanceof HarnessError && e.code === "vscode_lm_unavailable" && /only the DeerFlow extension inside VS Code/.test(e.message));
});

test("the host maps LanguageModelError kinds, Copilot's model_not_supported and cancellation onto the wire codes", () => {
  assert.equal(lmErrorCode({ name: "LanguageModelError", code: "NotFound", message: "x" }, false), "lm_not_found");
  assert.equal(lmErrorCode({ name: "NoPermissions", code: "", message: "x" }, false), "lm_no_permissions");
  assert.equal(lmErrorCode({ name: "LanguageModelError", code: "Blocked", message: "x" }, false), "lm_blocked");
  assert.equal(lmErrorCode(new Error('Request Failed: 400 {"error":{"code":"model_not_supported"}}'), false), "lm_model_not_supported");
  assert.equal(lmErrorCode(new Error("anything"), true), "lm_cancelled");
  assert.equal(lmErrorCode(new Error("boom"), false), "lm_failed");
});
