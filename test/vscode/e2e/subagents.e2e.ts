/**
 * Issue 14 in the panel, in a real VS Code (code-server + chromium) against the scripted model
 * server: one model turn dispatches two `task` calls; their subagent cards stream side by side
 * (each subagent runs a tool, then its answer is held mid-stream by a gate), survive a window
 * reload with their steps and partial words, keep updating after it and finish with DeerFlow's
 * result; a cancelled run cancels its subagent, and the card says so.
 *
 * The subagents' replies are chosen by their own prompt's tag (the `task` call's `prompt` carries
 * `[e2e:sub-…]`; a subagent's one user message is that prompt, see ../scenarios.ts). Subagents are
 * on through the `deerflow.subagents.enabled` setting. Screenshots go to
 * test-results/vscode/<code-server version>/subagents-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import type { Locator } from "playwright-core";
import { openWorkbench, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const WS = "/mnt/user-data/workspace";
const ALPHA = "Alpha findings: the alpha module greets users and keeps a small cache of names for later visits.";
const BETA = "Beta findings: the beta module writes a daily report and rotates old reports after a week.";

const task = (id: string, description: string, scenario: string) => ({
  id,
  name: "task",
  args: { description, prompt: tagged(scenario, `Look into ${description} and report back.`), subagent_type: "general-purpose" },
});

const SCENARIOS: Scenarios = {
  fanout: [
    { toolCalls: [task("call_alpha", "Survey alpha", "sub-alpha"), task("call_beta", "Survey beta", "sub-beta")] },
    { content: "Both subagents reported back: alpha caches names, beta rotates reports." },
  ],
  // Each subagent lists the workspace, then streams its answer and is held after a few words.
  "sub-alpha": [
    { toolCalls: [{ id: "call_alpha_ls", name: "ls", args: { description: "List for alpha", path: WS } }] },
    { content: ALPHA, gate: { afterChunks: 4, until: "sub-alpha" } },
  ],
  "sub-beta": [
    { toolCalls: [{ id: "call_beta_ls", name: "ls", args: { description: "List for beta", path: WS } }] },
    { content: BETA, gate: { afterChunks: 4, until: "sub-beta" } },
  ],
  stop: [{ toolCalls: [task("call_stop", "Endless survey", "sub-hang")] }, { content: "(never reached)" }],
  // Held after its first chunk and never released: only the cancel ends it.
  "sub-hang": [{ content: "Surveying forever and ever.", gate: { afterChunks: 1, until: "sub-hang" } }],
};

describe(`DeerFlow subagent cards in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-subagents",
      workspaceFiles: { "alpha.ts": "export const alpha = 1;\n", "beta.ts": "export const beta = 2;\n" },
      settings: { "deerflow.subagents.enabled": true },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "subagents-");

  const card = (taskId: string): Locator => panel.view.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);
  const cardIn = (taskId: string, status: string): Locator => panel.view.locator(`[data-testid="task-card"][data-task-id="${taskId}"][data-status="${status}"]`);
  const stepCall = (taskId: string, callId: string, status: string): Locator =>
    card(taskId).locator(`[data-testid="tool-call"][data-tool-call-id="${callId}"][data-status="${status}"]`);

  /** Both subagents ran their tool and are held mid-answer: the cards show it. */
  async function bothHeld(when: string): Promise<void> {
    for (const [id, words, callId] of [["call_alpha", "Alpha findings", "call_alpha_ls"], ["call_beta", "Beta findings", "call_beta_ls"]] as const) {
      await shows(cardIn(id, "running"), `the ${id} card running ${when}`);
      await shows(stepCall(id, callId, "success"), `the ${id} subagent's own ls call, done, in its card ${when}`);
      await shows(card(id).getByTestId("task-output").filter({ hasText: words }), `the ${id} subagent's streamed words ${when}`);
      assert.doesNotMatch((await card(id).textContent()) ?? "", /rotates old reports|later visits/, `the held-back words of ${id} are not shown ${when}`);
    }
  }

  test("two task calls of one turn: cards stream side by side, survive a reload, keep updating and finish", () =>
    step("fanout", async () => {
      await panel.open();
      await panel.send(tagged("fanout", "Survey alpha and beta in parallel."));
      // Both gates are reached only when both subagents run at once (each waits mid-answer).
      await Promise.all([model.waitForGate("sub-alpha"), model.waitForGate("sub-beta")]);
      await shows(card("call_alpha"), "a card for the first task call");
      await shows(card("call_beta"), "a card for the second task call");
      assert.equal(await card("call_alpha").getByTestId("task-description").textContent(), "Survey alpha");
      assert.equal(await card("call_alpha").getByTestId("task-type").textContent(), "general-purpose");
      await bothHeld("while they stream");
      await shows(card("call_alpha").getByTestId("task-tokens").filter({ hasText: /^[\d,]+ tokens$/ }), "the first subagent's tokens so far");
      const [a, b] = [await card("call_alpha").boundingBox(), await card("call_beta").boundingBox()];
      assert.ok(a && b, "both cards are laid out");
      assert.ok(Math.abs(a.y - b.y) < 2 && b.x > a.x + a.width - 1, `the two cards sit side by side (alpha ${JSON.stringify(a)}, beta ${JSON.stringify(b)})`);
      await screenshot(df!.page, "subagents-01-two-cards-streaming");

      // A window reload mid-subagent: the cards are rebuilt from the journal.
      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      await shows(panel.status("running"), "the run still running after the reload");
      await bothHeld("after the window reload");
      await screenshot(df!.page, "subagents-02-after-reload");

      // The rebuilt cards keep updating: one subagent finishes while the other still runs.
      model.gate("sub-alpha").open();
      await shows(cardIn("call_alpha", "completed").getByTestId("task-result").filter({ hasText: "later visits." }), "the first card completed with its result after the reload");
      await shows(cardIn("call_beta", "running"), "the second card still running while the first is done");
      await screenshot(df!.page, "subagents-03-one-finished");
      model.gate("sub-beta").open();
      await shows(cardIn("call_beta", "completed").getByTestId("task-result").filter({ hasText: "after a week." }), "the second card completed with its result");
      await shows(panel.message("ai", "Both subagents reported back"), "the lead's answer after both subagents");
      await shows(panel.status("success"), "the run ends success");
      for (const id of ["call_alpha", "call_beta"]) {
        assert.match((await card(id).getByTestId("task-tokens").textContent()) ?? "", /^[\d,]+ tokens$/, `the ${id} card shows its tokens`);
      }
      // The lead model read DeerFlow's result text for both.
      const last = model.requests.filter((r) => r.body?.messages?.some((m) => m.role === "tool")).at(-1)!;
      const tools = (last.body?.messages ?? []).filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
      assert.ok(tools.some((t) => t.includes(`Task Succeeded. Result: ${ALPHA}`)) && tools.some((t) => t.includes(`Task Succeeded. Result: ${BETA}`)), `the lead read both results: ${tools.join(" | ")}`);
      await screenshot(df!.page, "subagents-04-finished");
    }));

  test("Cancel stops the run with its subagent: the card shows cancelled", () =>
    step("cancel", async () => {
      await panel.send(tagged("stop", "Start a survey that never ends."));
      const hung = await model.waitForGate("sub-hang");
      await shows(cardIn("call_stop", "running"), "the card of a subagent whose model is held mid-answer");
      await panel.cancelButton.click();
      await shows(panel.status("interrupted"), "the run ends interrupted");
      await shows(cardIn("call_stop", "cancelled"), "the subagent card shows cancelled");
      await model.waitForRequests(hung + 1, { settled: true });
      assert.equal(model.requests[hung]!.clientAborted, true, "the subagent's model request was aborted");
      await screenshot(df!.page, "subagents-05-cancelled");
    }));
});
