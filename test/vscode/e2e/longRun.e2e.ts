/**
 * Issue 20's long runs in the panel, in a real VS Code (code-server + chromium) against the
 * scripted model server: a run with 300 tool-call cards keeps the panel's DOM bounded — the
 * cards near the viewport are in it, the others are not, at the bottom and after scrolling to
 * the top. Two shapes: two model turns of 150 parallel calls (the cards of one row windowed
 * inside it, webview/components/callWindow.ts), and 300 sequential tool turns in one run (one
 * card per row, the message list's own virtualisation). The second needs the lead's turn budget
 * (issue 20 items 1-2: a run bounded by model turns, not LangGraph steps) on main. Per-event
 * cost is measured by `npm run bench` ("webview model"), not here. Screenshots go to
 * test-results/vscode/<code-server version>/long-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, ScriptedReply, ScriptedToolCall } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const WS = "/mnt/user-data/workspace";
const CARDS = 300;
const FILES = 150;
/**
 * The most cards the panel may hold in its DOM (a 600px-high list plus 600px overscan each way
 * holds ~60 folded cards): far below the 300 of the run, whatever the window's size.
 */
const MAX_CARDS_IN_DOM = 100;

/** Read-only calls on distinct targets, the tools rotating (LoopDetection counts calls per tool). */
function call(id: string, k: number): ScriptedToolCall {
  const f = `f${k % FILES}.txt`;
  switch (k % 4) {
    case 0:
      return { id, name: "read_file", args: { description: `Read ${f} (${k})`, path: `${WS}/${f}` } };
    case 1:
      return { id, name: "glob", args: { description: `Find ${f} (${k})`, pattern: f, path: WS } };
    case 2:
      return { id, name: "grep", args: { description: `Search note ${k}`, pattern: `note ${k}\\b`, path: WS } };
    default:
      return { id, name: "ls", args: { description: `List (${k})`, path: `${WS}${"/.".repeat(k % 7)}` } };
  }
}

const PARALLEL_DONE = "All 300 parallel calls are answered.";
const SEQUENTIAL_DONE = "All 300 sequential turns are done.";
const parallel: ScriptedReply[] = [
  { content: "Reading everything at once.", toolCalls: Array.from({ length: CARDS / 2 }, (_, k) => call(`call_p0_${k}`, k)) },
  { toolCalls: Array.from({ length: CARDS / 2 }, (_, k) => call(`call_p1_${k}`, CARDS / 2 + k)) },
  { content: PARALLEL_DONE },
];
const sequential: ScriptedReply[] = [
  ...Array.from({ length: CARDS }, (_, k): ScriptedReply => ({ toolCalls: [call(`call_s_${k}`, k)] })),
  { content: SEQUENTIAL_DONE },
];
const SCENARIOS: Scenarios = { parallel, sequential };

describe(`DeerFlow panel: 300 tool-call cards, a bounded DOM (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 0, waitTimeoutMs: 300_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-long",
      workspaceFiles: Object.fromEntries(Array.from({ length: FILES }, (_, k) => [`f${k}.txt`, `note ${k}\n`])),
      // Room for 300 sequential turns plus the answer in one run.
      // Summarization off: the scripted model picks its reply by counting the turns after the
      // tagged prompt, which a summary of the long context would fold away.
      settings: { "deerflow.maxTurnsPerRun": CARDS + 50, "deerflow.memory.enabled": false, "deerflow.summarization.enabled": false },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "long-");
  const cardsInDom = () => panel.toolCalls.count();
  const card = (id: string) => panel.view.locator(`[data-testid="tool-call"][data-tool-call-id="${id}"]`);

  /** The run's calls all answered: its last model request carried every result. */
  function answeredIn(name: string): number {
    const last = model.requests.filter((r) => (r.body?.messages ?? []).some((m) => typeof m.content === "string" && m.content.includes(`[e2e:${name}]`))).at(-1);
    return (last?.body?.messages ?? []).filter((m) => m.role === "tool").length;
  }

  async function checkBounded(name: string, first: string, last: string, shot: string): Promise<void> {
    assert.equal(answeredIn(name), CARDS, `the run's last model request carries all ${CARDS} tool results`);
    await shows(card(last), "the last tool-call card, at the bottom of the list");
    const atBottom = await cardsInDom();
    assert.ok(atBottom > 0 && atBottom <= MAX_CARDS_IN_DOM, `${atBottom} of ${CARDS} tool-call cards in the DOM at the bottom (at most ${MAX_CARDS_IN_DOM})`);
    await screenshot(df!.page, `${shot}-bottom`);
    // Scrolled to the top (as a user would, with the list's own scroll), the first cards come in
    // and the last ones go.
    await panel.messages.evaluate((el) => {
      el.scrollTop = 0;
    });
    await shows(card(first), "the first tool-call card once the list is scrolled to the top");
    await card(last).waitFor({ state: "detached", timeout: 10_000 });
    const atTop = await cardsInDom();
    assert.ok(atTop > 0 && atTop <= MAX_CARDS_IN_DOM, `${atTop} of ${CARDS} tool-call cards in the DOM at the top (at most ${MAX_CARDS_IN_DOM})`);
    await screenshot(df!.page, `${shot}-top`);
    // Scrolled up, the list no longer follows new rows; "Scroll to latest" brings it back (and
    // the next prompt into view).
    await panel.view.getByRole("button", { name: "Scroll to latest" }).click();
    await shows(card(last), "the last tool-call card again after Scroll to latest");
    console.log(`  ${name}: ${atBottom} cards in the DOM at the bottom, ${atTop} at the top, of ${CARDS}`);
  }

  test("two model turns of 150 parallel calls: each row shows only its cards near the viewport", () =>
    step("parallel", async () => {
      await panel.open();
      await panel.send(tagged("parallel", "Read every file, all at once."));
      await shows(panel.message("ai", PARALLEL_DONE), "the answer after 300 parallel calls", 180_000);
      await shows(panel.status("success"), "the parallel run ends success");
      await checkBounded("parallel", "call_p0_0", "call_p1_149", "long-01-parallel");
    }));

  test("300 sequential tool turns in one run: the list shows only the rows near the viewport", () =>
    step("sequential", async () => {
      // A thread of its own: the parallel run's 300 results are not this run's context.
      await runCommand(df!.page, "DeerFlow: New Thread");
      await panel.send(tagged("sequential", "Go through the files one call at a time."));
      // However it ends (a run cut short must fail here at once, not after the long wait).
      await shows(panel.view.locator('[data-testid="run-status"]:not([data-status="running"]):not([data-status="pending"])'), "the end of the 300-turn run", 600_000);
      const status = panel.view.getByTestId("run-status");
      assert.equal(await status.getAttribute("data-status"), "success", `the 300-turn run ends success, not: ${await status.textContent()}`);
      await shows(panel.message("ai", SEQUENTIAL_DONE), "the answer after 300 sequential tool turns");
      await checkBounded("sequential", "call_s_0", "call_s_299", "long-02-sequential");
    }));
});
