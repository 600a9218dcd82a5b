/**
 * Issue 20's turn budget in the panel, in a real VS Code (code-server + chromium) against the
 * scripted model server: with `deerflow.maxTurnsPerRun` at 3, a model that keeps calling tools
 * gets its run ended `success` / `turn_capped` after its third model turn, every call answered.
 * The panel shows that ending and Continue; Continue survives a window reload and starts the next
 * run on the thread (prompt "Continue"), which streams and succeeds; the palette's "DeerFlow:
 * Continue Run" does the same; a typed message instead ends the offer.
 * The harness half (the graph's budget, the stop reason, the setting's plumbing) is the lead's
 * (issue 20 items 1-2): this suite needs it on main. Screenshots go to
 * test-results/vscode/<code-server version>/turns-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, RequestMessage, ScriptedReply } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { openWorkbench, runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const WS = "/mnt/user-data/workspace";
const MAX_TURNS = 3;
const NOTES = ["alpha.txt", "beta.txt", "gamma.txt", "delta.txt", "epsilon.txt"];

/**
 * A model that reads one note per turn, four of them, and then answers: past a budget of three
 * turns. The step counts the assistant messages after the tagged prompt, so the continued run
 * gets the fourth read (or, if the harness's turn-capped message goes back to the model as an
 * assistant message, the answer) and then the answer: it ends within its own budget either way.
 */
function reader(id: string, done: string): ScriptedReply[] {
  return [
    ...NOTES.slice(0, MAX_TURNS + 1).map((f, k): ScriptedReply => ({ toolCalls: [{ id: `call_${id}_${k}`, name: "read_file", args: { description: `Read ${f}`, path: `${WS}/${f}` } }] })),
    { content: done },
    { content: done },
  ];
}

const SCENARIOS: Scenarios = {
  capped: reader("capped", "Continued: all the notes are read."),
  palette: reader("palette", "Continued from the palette: done."),
  typed: reader("typed", "(never reached: the user typed instead)"),
  other: [{ content: "Something else, then." }],
};

const text = (m: RequestMessage): string => (typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join(""));

describe(`DeerFlow's turn budget and Continue in the panel (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-turns",
      workspaceFiles: Object.fromEntries(NOTES.map((f) => [f, `the note ${f}\n`])),
      settings: { "deerflow.maxTurnsPerRun": MAX_TURNS, "deerflow.memory.enabled": false },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "turns-");
  const bar = () => panel.view.getByTestId("turn-capped");
  const continueButton = () => panel.view.getByRole("button", { name: "Continue" });
  const cappedStatus = () => panel.view.locator('[data-testid="run-status"][data-status="success"][data-stop-reason="turn_capped"]');
  /** After a reload the status has no run of its own ("idle"): only the stop reason says it. */
  const cappedAfterReload = () => panel.view.locator('[data-testid="run-status"][data-stop-reason="turn_capped"]');
  /** The latest of the harness's turn-budget messages (each capped run leaves one in the thread). */
  const cappedMessage = () => panel.view.locator('[data-testid="message"][data-role="ai"][data-stop-reason="turn_capped"]').last();
  /** Model requests of the scenario (title requests aside), in order. */
  const requestsOf = (name: string) => model.requests.filter((r) => {
    const msgs = r.body?.messages ?? [];
    return msgs.some((m) => m.role === "user" && text(m).includes(`[e2e:${name}]`)) && !text(msgs.at(-1) ?? { role: "user", content: "" }).startsWith("Generate a concise title");
  });

  async function cappedRun(name: string, prompt: string): Promise<void> {
    await panel.send(tagged(name, prompt));
    await shows(bar(), `the turn-budget ending of the "${name}" run`, 60_000);
    await shows(cappedStatus(), "the run status says the run stopped at its turn budget");
    await shows(cappedMessage(), "the harness's message about the turn budget, as the thread's last AI message");
    assert.equal(requestsOf(name).length, MAX_TURNS, `the run made exactly its ${MAX_TURNS} model turns`);
  }

  test("a run past its turn budget ends turn-capped with every call answered; Continue survives a reload and the next run succeeds", () =>
    step("continue", async () => {
      await panel.open();
      await cappedRun("capped", "Read every note, one at a time.");
      for (const f of NOTES.slice(0, MAX_TURNS)) {
        await shows(panel.view.locator('[data-testid="tool-call"][data-status="success"]', { hasText: f }), `the answered read_file call on ${f}`);
      }
      assert.equal(await panel.view.locator('[data-testid="tool-call"][data-status="unanswered"], [data-testid="tool-call"][data-status="pending"]').count(), 0, "no call is left without its result");
      assert.match((await panel.view.getByTestId("turn-capped-text").textContent()) ?? "", /Continue starts the next run on this thread with the prompt .Continue./, "the bar says what Continue does");
      await screenshot(df!.page, "turns-01-capped");

      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      await shows(continueButton(), "Continue is still offered after a window reload");
      await shows(cappedAfterReload(), "the turn-budget ending is still shown after the reload");
      await screenshot(df!.page, "turns-02-capped-after-reload");

      const before = requestsOf("capped").length;
      await continueButton().click();
      await shows(panel.message("human", /^\s*You\s*Continue\s*$/), "the prompt Continue as the next run's message");
      await shows(panel.message("ai", "Continued: all the notes are read."), "the continued run's answer streams in");
      await shows(panel.view.locator('[data-testid="run-status"][data-status="success"]:not([data-stop-reason])'), "the continued run ends success");
      await bar().waitFor({ state: "hidden", timeout: 10_000 });
      const next = requestsOf("capped").slice(before);
      assert.ok(next.length >= 1 && next.length <= MAX_TURNS, `the continued run made 1 to ${MAX_TURNS} model turns (made ${next.length})`);
      const sent = next[0]!.body?.messages ?? [];
      // The prompt as the model gets it (InputSanitization fences user input in its markers).
      assert.match(text(sent.filter((m) => m.role === "user").at(-1)!), /(^|\n)Continue(\n|$)/, "the continued run's prompt is Continue");
      assert.equal(sent.filter((m) => m.role === "tool").length, MAX_TURNS, "the next run carries the capped run's answered calls");
      await screenshot(df!.page, "turns-03-continued");
    }));

  test("DeerFlow: Continue Run from the palette continues too; a typed message instead ends the offer", () =>
    step("palette", async () => {
      await cappedRun("palette", "Read the notes again.");
      await runCommand(df!.page, "DeerFlow: Continue Run");
      await shows(panel.message("ai", "Continued from the palette: done."), "the run the palette's Continue Run started");
      await bar().waitFor({ state: "hidden", timeout: 10_000 });

      await cappedRun("typed", "And once more.");
      await panel.send(tagged("other", "Never mind, do something else."));
      await shows(panel.message("ai", "Something else, then."), "the typed message's answer");
      await shows(panel.view.locator('[data-testid="run-status"][data-status="success"]:not([data-stop-reason])'), "a plain success once another run ran");
      assert.equal(await bar().isVisible(), false, "Continue is gone once another run started");
      await screenshot(df!.page, "turns-04-typed-instead");
    }));
});
