/**
 * Issue 15's "tokens and cost you can see" in the panel, in a real VS Code (code-server +
 * chromium) against the scripted model server, which reports usage with OpenAI's cached and
 * reasoning details. The configured model is gpt-4o on the scripted endpoint with
 * `pricing_provider: "openai"`, so the harness prices it from the genai-prices table bundled with
 * the pinned package (gpt-4o: $2.50 / M input, $1.25 / M cached input, $10 / M output). The
 * "cost unknown" wording (a model the table cannot know) is covered by the header's unit test
 * (test/unit/usage/header.test.ts) and the harness's null cost by test/integration/usage.test.ts.
 * Screenshots go to test-results/vscode/<code-server version>/usage-*.png.
 */
import { after, before, describe, test } from "node:test";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { openWorkbench, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const WS = "/mnt/user-data/workspace";

const SCENARIOS: Scenarios = {
  // Two model calls: 1,000 + 2,000 in (400 + 600 cached), 100 + 75 out (30 reasoning).
  first: [
    {
      toolCalls: [{ id: "call_look", name: "ls", args: { description: "Look around", path: WS } }],
      usage: { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 30 } },
    },
    { content: "The workspace holds one file.", usage: { prompt_tokens: 2000, completion_tokens: 75, prompt_tokens_details: { cached_tokens: 600 }, completion_tokens_details: { reasoning_tokens: 0 } } },
  ],
  second: [{ content: "Still one file.", usage: { prompt_tokens: 600, completion_tokens: 30 } }],
};

describe(`DeerFlow usage and cost in the panel header (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-usage",
      workspaceFiles: { "notes.md": "# Notes\n" },
      settings: {
        "deerflow.models": [{ name: "gpt-4o", model: "gpt-4o", base_url: model.url, pricing_provider: "openai" }],
        "deerflow.memory.enabled": false,
      },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "usage-");
  const runUsage = (text: string) => panel.view.getByTestId("usage-run").filter({ hasText: text });
  const threadUsage = (text: string) => panel.view.getByTestId("usage-thread").filter({ hasText: text });

  test("a run's tokens (cached and reasoning included) and estimated cost, then the thread's total over two runs, also after a reload", () =>
    step("header", async () => {
      await panel.open();
      await panel.send(tagged("first", "What is in the workspace?"));
      await shows(panel.message("ai", "The workspace holds one file."), "the answer of the first run");
      await shows(panel.status("success"), "the first run done");
      // (2,000 uncached × $2.50 + 1,000 cached × $1.25 + 175 out × $10) / 1e6 = $0.0080.
      await shows(runUsage("Last run: 3,000 in (1,000 cached) · 175 out (30 reasoning) · ≈ $0.0080 (est.)"), "the first run's usage and cost in the header");
      await shows(threadUsage("Thread: 3,175 tokens · ≈ $0.0080 (est.)"), "the thread's total after one run");
      await screenshot(df!.page, "usage-01-first-run");

      await panel.send(tagged("second", "Anything else?"));
      await shows(panel.message("ai", "Still one file."), "the answer of the second run");
      // No cached or reasoning tokens: those details are left out. (600 × $2.50 + 30 × $10) / 1e6 = $0.0018.
      await shows(runUsage("Last run: 600 in · 30 out · ≈ $0.0018 (est.)"), "the second run's usage, without zero details");
      await shows(threadUsage("Thread: 3,805 tokens · ≈ $0.0098 (est.)"), "the thread's total over both runs");
      await screenshot(df!.page, "usage-02-thread-total");

      // After a window reload the header is rebuilt from threads/state.
      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      await shows(runUsage("Last run: 600 in · 30 out · ≈ $0.0018 (est.)"), "the last run's usage after the reload");
      await shows(threadUsage("Thread: 3,805 tokens · ≈ $0.0098 (est.)"), "the thread's total after the reload");
      await screenshot(df!.page, "usage-03-after-reload");
    }));
});
