/**
 * "DeerFlow: Compact Thread" (issue 15) in a real VS Code (code-server + chromium) against the
 * scripted model server: on the panel's thread, a summary model that fails shows the failure as
 * an error message and changes nothing; once it answers, the command says what it summarized, the
 * panel still shows every message, and the model's next request carries the summary instead of
 * the older messages. The summary request is told apart by the summary prompt; every other
 * request is the panel's scenario (../scenarios.ts). The automatic trigger is off
 * (`deerflow.summarization.triggerTokens: 0`), so only the command summarizes.
 * Screenshots go to test-results/vscode/<code-server version>/compact-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, RecordedRequest, ScriptedReply, ScriptFn } from "../../fixtures/modelServer.js";
import { textOf } from "../../fixtures/requests.js";
import { scenarioScript, tagged } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const SUMMARY = "SUMMARY-E2E: the user asked about the moon, then about the sun.";

const isSummary = (req: RecordedRequest): boolean => (req.body?.messages ?? []).length === 1 && textOf(req.body!.messages![0]).includes("Messages to summarize:");
const requestText = (req: RecordedRequest): string => (req.body?.messages ?? []).map(textOf).join("\n");

describe(`DeerFlow: Compact Thread in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let summaryReply: ScriptedReply = { error: { status: 500, message: "summary backend down (scripted)" } };

  before(async () => {
    const panel = scenarioScript({
      moon: [{ content: "The moon answer." }],
      sun: [{ content: "The sun answer." }],
      stars: [{ content: "The stars answer." }],
    });
    const script: ScriptFn = (req, i) => (isSummary(req) ? summaryReply : panel(req, i));
    model = await startModelServer({ script, chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-compact",
      settings: { "deerflow.summarization.triggerTokens": 0, "deerflow.summarization.keepMessages": 2 },
    });
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "compact-");
  /**
   * A notification the command showed, read in the notification center: a toast may hide before
   * it is read (1.100 hides an info toast behind an earlier error one), the center keeps them all.
   */
  const notification = async (text: string | RegExp, what: string) => {
    await runCommand(df!.page, "Notifications: Show Notifications");
    await shows(df!.page.locator(".notifications-center .notification-list-item", { hasText: text }), what);
    await runCommand(df!.page, "Notifications: Hide Notifications");
  };

  test("a failing summary model is an error message; then the thread compacts, the panel keeps every message, the next request uses the summary", () =>
    step("compact", async () => {
      const page = df!.page;
      const panel = new Panel(page);
      await panel.open();
      await panel.send(tagged("moon", "Tell me about the moon."));
      await shows(panel.message("ai", "The moon answer."), "the first answer");
      await panel.send(tagged("sun", "Tell me about the sun."));
      await shows(panel.message("ai", "The sun answer."), "the second answer");
      await shows(panel.status("success"), "the second run done");

      await runCommand(page, "DeerFlow: Compact Thread");
      await notification(/DeerFlow: Summary generation failed: .*summary backend down/, "the summary model's failure as an error message");
      await screenshot(page, "compact-01-failed");
      assert.ok(model.requests.some(isSummary), "the harness asked the model for a summary");

      summaryReply = { content: SUMMARY };
      await runCommand(page, "DeerFlow: Compact Thread");
      // h1, a1 summarized; the current request h2 and its answer stay in full (keep 2).
      await notification(
        "DeerFlow: thread compacted. 2 older messages are summarized for the model; the last 2 stay in full. Every message is still in the thread.",
        "the compaction's result",
      );
      for (const [role, text] of [["human", "Tell me about the moon."], ["ai", "The moon answer."], ["human", "Tell me about the sun."], ["ai", "The sun answer."]] as const) {
        await shows(panel.message(role, text), `"${text}" still in the panel after the compaction`);
      }
      await screenshot(page, "compact-02-compacted");

      const before = model.requests.length;
      await panel.send(tagged("stars", "And the stars?"));
      await shows(panel.message("ai", "The stars answer."), "the answer after the compaction");
      const next = model.requests.slice(before).find((r) => !isSummary(r) && requestText(r).includes("And the stars?"));
      assert.ok(next, "the run after the compaction asked the model");
      const text = requestText(next);
      assert.ok(text.includes(`## Conversation summary so far\n${SUMMARY}`), "the summary is in the request");
      assert.ok(!text.includes("Tell me about the moon.") && !text.includes("The moon answer."), "the summarized messages are not");
      assert.ok(text.includes("Tell me about the sun.") && text.includes("The sun answer."), "the preserved tail is");
      await shows(panel.message("human", "Tell me about the moon."), "the oldest message still in the panel");
      await screenshot(page, "compact-03-next-run");
    }));
});
