// Model options through the real CLI: supports_thinking / when_thinking_enabled / reasoning_effort
// in the configuration reach the request body the way @langchain/openai 1.5.8 sends them
// (`modelKwargs` merged into the body, `reasoning: {effort}` → `reasoning_effort`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, sandboxDirs, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

async function runWith(dirs: Dirs, model: string) {
  server.setScript([{ content: "ok" }]);
  const first = server.requests.length;
  const r = await runCli(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--model", model, "--prompt", "hi"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-1000));
  const sent = server.requests.slice(first);
  assert.equal(sent.length, 1);
  return sent[0]!.body!;
}

test("thinking and reasoning effort from deerflow.models reach the request body; an effort the model does not declare is not sent", async () => {
  const dirs = sandboxDirs();
  const base = { model: "scripted", base_url: server.url };
  writeFileSync(
    join(dirs.dataDir, "config.json"),
    JSON.stringify({
      models: [
        // supports_thinking alone: the OpenAI-compatible convention (DeerFlow's config.example gateways).
        { name: "gateway", ...base, supports_thinking: true, supports_reasoning_effort: true, reasoning_effort: "high" },
        // vLLM/Qwen style, and an effort the model does not declare support for (dropped, as DeerFlow).
        { name: "qwen", ...base, supports_thinking: true, when_thinking_enabled: { extra_body: { chat_template_kwargs: { enable_thinking: true } } }, reasoning_effort: "low" },
        // Thinking settings on a model that does not support thinking: thinking is off, and DeerFlow
        // then sends the switch-off for that convention (here Anthropic-style `thinking`).
        { name: "plain", ...base, thinking: { type: "enabled" } },
      ],
    }),
  );
  const gateway = await runWith(dirs, "gateway");
  assert.deepEqual(gateway.thinking, { type: "enabled" });
  assert.equal(gateway.reasoning_effort, "high");

  const qwen = await runWith(dirs, "qwen");
  assert.deepEqual(qwen.chat_template_kwargs, { enable_thinking: true });
  assert.equal(qwen.thinking, undefined);
  assert.equal(qwen.reasoning_effort, undefined);

  const plain = await runWith(dirs, "plain");
  assert.deepEqual(plain.thinking, { type: "disabled" });
  assert.equal(plain.reasoning_effort, undefined);
  assert.equal(plain.chat_template_kwargs, undefined);
});
