// Model resolution: configured names, env defaults, ad-hoc endpoints, and the errors users see.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { createChatModel, resolveModel, runKeys } from "../../../extension/harness/models/factory.js";
import { HarnessError } from "../../../extension/harness/errors.js";

const config = parseHarnessConfig(
  {
    models: [
      { name: "fast", model: "gpt-fast", base_url: "http://127.0.0.1:1/v1", api_key_env: "FAST_KEY" },
      { name: "eyes", model: "gpt-vision", supports_vision: true, max_tokens: 1000 },
    ],
    default_model: "eyes",
  },
  "test",
);

test("a configured name resolves to its model id, endpoint and capabilities; the default is default_model", () => {
  const fast = resolveModel(config, { name: "fast" }, {});
  assert.equal(fast.model, "gpt-fast");
  assert.equal(fast.baseURL, "http://127.0.0.1:1/v1");
  assert.equal(fast.apiKeySource, "FAST_KEY");
  assert.equal(fast.supportsVision, false);
  const def = resolveModel(config, {}, { OPENAI_BASE_URL: "http://env/v1" });
  assert.equal(def.name, "eyes");
  assert.equal(def.baseURL, "http://env/v1", "OPENAI_BASE_URL is the default endpoint");
  assert.equal(def.apiKeySource, "OPENAI_API_KEY");
  assert.equal(def.supportsVision, true);
  assert.equal(def.maxTokens, 1000);
});

test("an unknown name is an error naming the configured models", () => {
  assert.throws(
    () => resolveModel(config, { name: "gpt-9" }, {}),
    (e: unknown) => e instanceof HarnessError && e.code === "unknown_model" && e.message === 'Unknown model "gpt-9". Configured models: fast, eyes.',
  );
});

test("nothing configured: OPENAI_BASE_URL + OPENAI_MODEL define the model; neither → a clear error", () => {
  const empty = parseHarnessConfig({}, "test");
  const m = resolveModel(empty, {}, { OPENAI_BASE_URL: "http://127.0.0.1:2/v1", OPENAI_MODEL: "qwen" });
  assert.equal(m.model, "qwen");
  assert.equal(m.baseURL, "http://127.0.0.1:2/v1");
  assert.throws(() => resolveModel(empty, {}, {}), (e: unknown) => e instanceof HarnessError && e.code === "no_models" && /No chat models are configured/.test(e.message));
  assert.throws(() => resolveModel(empty, { name: "qwen2" }, { OPENAI_MODEL: "qwen" }), /Unknown model "qwen2". Configured models: qwen\./);
});

test("--base-url with --model is an ad-hoc model for that invocation; --base-url alone is a usage error", () => {
  const m = resolveModel(config, { name: "llama3", baseURL: "http://127.0.0.1:3/v1" }, {});
  assert.equal(m.model, "llama3");
  assert.equal(m.baseURL, "http://127.0.0.1:3/v1");
  assert.throws(() => resolveModel(config, { baseURL: "http://x/v1" }, {}), (e: unknown) => e instanceof HarnessError && e.code === "usage");
});

test("the chat model takes the key from the named env var, an explicit key wins, and retries are left to the middleware", () => {
  const fast = resolveModel(config, { name: "fast" }, {});
  const fromEnv = createChatModel(fast, { env: { FAST_KEY: "sk-from-env" } });
  assert.equal(fromEnv.apiKey, "sk-from-env");
  assert.equal(fromEnv.model, "gpt-fast");
  assert.equal((fromEnv as unknown as { caller: { maxRetries: number } }).caller.maxRetries, 0);
  assert.equal(createChatModel(fast, { env: { FAST_KEY: "a" }, apiKey: "sk-explicit" }).apiKey, "sk-explicit");
});

test("invalid configuration is rejected with the field named", () => {
  assert.throws(() => parseHarnessConfig({ models: [{ name: "x" }] }, "cfg.json"), /Invalid DeerFlow configuration in cfg.json: models\[x\]\.model/);
  assert.throws(() => parseHarnessConfig({ models: [{ name: "x", model: "a" }, { name: "x", model: "b" }] }, "c"), /configured twice/);
  assert.throws(() => parseHarnessConfig({ models: [{ name: "x", model: "a", api_key_env: "BAD NAME" }] }, "c"), /api_key_env/);
});

test("a server that streams deltas without `role` still yields an AI message (not a generic chat message)", async () => {
  const { createServer } = await import("node:http");
  const { AIMessageChunk } = await import("@langchain/core/messages");
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.end(`${chunk({ content: "no " })}${chunk({ content: "role" })}${chunk({}, "stop")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const port = (server.address() as { port: number }).port;
    const model = createChatModel(resolveModel(parseHarnessConfig({}, "t"), { name: "m", baseURL: `http://127.0.0.1:${port}/v1` }, {}));
    let full: InstanceType<typeof AIMessageChunk> | undefined;
    for await (const c of await model.stream("hi")) {
      assert.ok(AIMessageChunk.isInstance(c), `chunk is ${c.constructor.name}`);
      full = full ? full.concat(c) : c;
    }
    assert.equal(full?.content, "no role");
  } finally {
    server.close();
  }
});

test("runKeys: the run's key goes to the run's own model only; other configured models get the key held for their source; an ad-hoc model only ever the run's", () => {
  const config = parseHarnessConfig(
    {
      models: [
        { name: "a", model: "a-id", base_url: "https://a.example/v1" },
        { name: "b", model: "b-id", base_url: "https://b.example/v1" },
        { name: "c", model: "c-id", base_url: "https://c.example/v1", api_key_env: "C_KEY" },
      ],
    },
    "t",
  );
  const a = resolveModel(config, { name: "a" });
  const b = resolveModel(config, { name: "b" });
  const c = resolveModel(config, { name: "c" });
  const held = (source: string) => ({ OPENAI_API_KEY: "held-openai", C_KEY: "held-c" })[source];
  // The CLI: --api-key for a; b shares a's key source but is another endpoint → the environment.
  const cli = runKeys(a, "run-key");
  assert.deepEqual([cli(a), cli(b), cli(c)], ["run-key", undefined, undefined]);
  // The server: each model's own source; the run key (if any) only for the run's model.
  const server = runKeys(a, undefined, held);
  assert.deepEqual([server(a), server(b), server(c)], ["held-openai", "held-openai", "held-c"]);
  // An ad-hoc endpoint never gets a held key, only the key its run was given.
  const adHoc = resolveModel(config, { name: "x-id", baseURL: "https://typed.example/v1" });
  assert.equal(runKeys(a, undefined, held)(adHoc), undefined);
  assert.equal(runKeys(adHoc, undefined, held)(adHoc), undefined);
  assert.equal(runKeys(adHoc, "typed-key", held)(adHoc), "typed-key");
  assert.equal(runKeys(adHoc, "typed-key", held)(a), "held-openai", "the typed key stays with its endpoint");
});
