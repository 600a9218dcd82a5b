// The panel's sorting of failed model requests (issue 30 item 2), on the errors a real ChatOpenAI
// throws: a closed port, a server answering 401 / 403 / 404 / 500, and one that never answers.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ChatOpenAI } from "@langchain/openai";
import { classifyRequestFailure, endpointOf, modelTarget, plainDetail } from "../../../extension/harness/models/requestFailure.js";

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return (s.address() as AddressInfo).port;
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function failureOf(port: number, timeout?: number) {
  const model = new ChatOpenAI({ model: "m-1", apiKey: "sk-test", maxRetries: 0, ...(timeout ? { timeout } : {}), configuration: { baseURL: `http://127.0.0.1:${port}/v1` } });
  const err = await model.invoke("hi").then(() => assert.fail("the request should fail"), (e: unknown) => e);
  return classifyRequestFailure(err, modelTarget(model), "my-model");
}

const json = (status: number, body: unknown): Parameters<typeof createServer>[1] => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

test("a closed port is a refused connection, named host:port", async () => {
  const port = await closedPort();
  const f = await failureOf(port);
  assert.equal(f.kind, "connection_refused");
  assert.equal(f.endpoint, `127.0.0.1:${port}`);
  assert.equal(f.model, "my-model");
  assert.match(f.summary, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

test("401 and 403 are auth failures; the summary carries no URL (LangChain's troubleshooting link)", async () => {
  for (const status of [401, 403]) {
    const port = await serve(json(status, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }));
    const f = await failureOf(port);
    assert.equal(f.kind, "auth");
    assert.equal(f.status, status);
    assert.doesNotMatch(f.summary, /https?:|langchain/i);
  }
});

test("404 is a missing model, naming the model id", async () => {
  const port = await serve(json(404, { error: { message: "The model `m-1` does not exist", code: "model_not_found" } }));
  const f = await failureOf(port);
  assert.equal(f.kind, "model_not_found");
  assert.match(f.summary, /"m-1"/);
});

test("no answer within the model's timeout is a timeout", async () => {
  const port = await serve(() => undefined); // accepts, never answers
  const f = await failureOf(port, 200);
  assert.equal(f.kind, "timeout");
});

test("anything else is other, with the provider's words cleaned of URLs", async () => {
  const port = await serve(json(500, { error: { message: "Upstream exploded, see https://status.example.com/x" } }));
  const f = await failureOf(port);
  assert.equal(f.kind, "other");
  assert.equal(f.status, 500);
  assert.match(f.summary, /Upstream exploded/);
  assert.doesNotMatch(f.summary, /https?:/);
});

test("endpointOf: the scheme's port when the URL names none; empty for no URL", () => {
  assert.equal(endpointOf("https://api.openai.com/v1"), "api.openai.com:443");
  assert.equal(endpointOf("http://localhost/v1"), "localhost:80");
  assert.equal(endpointOf("http://127.0.0.1:9/v1"), "127.0.0.1:9");
  assert.equal(endpointOf(undefined), "");
  assert.equal(endpointOf("not a url"), "");
  assert.deepEqual(modelTarget({}), { baseURL: undefined, modelId: "" });
});

test("plainDetail drops LangChain's troubleshooting URL and keeps one line", () => {
  const text = "401 Incorrect API key provided.\n\nTroubleshooting URL: https://docs.langchain.com/oss/javascript/langchain/errors/MODEL_AUTHENTICATION/\n";
  assert.equal(plainDetail(text), "401 Incorrect API key provided.");
});

test("a VS Code language model's failure keeps its own words and is never an API-key problem (it has no key)", () => {
  const err = Object.assign(new Error("The VS Code language model deerflow-test/scripted failed: the scripted provider refuses this request"), { status: 403 });
  const f = classifyRequestFailure(err, { baseURL: undefined, modelId: "deerflow-test/scripted" }, "vscode-lm:deerflow-test/scripted");
  assert.equal(f.kind, "other");
  assert.equal(f.endpoint, "");
  assert.match(f.summary, /the scripted provider refuses this request/);
});

test("a VS Code language model instance has no endpoint", () => {
  assert.deepEqual(modelTarget({ clientConfig: { baseURL: "vscode-lm:" }, model: "deerflow-test/scripted" }), { baseURL: undefined, modelId: "deerflow-test/scripted" });
});
