/**
 * vscode.lm models in a real VS Code (issue 25): a test-only extension (../lmProvider.ts)
 * registers a scripted LanguageModelChatProvider, vendor `deerflow-test`, as Copilot or a BYOK
 * extension would. On code-server 4.139.1 (VS Code 1.139, Copilot Chat built in and signed out):
 * Select Model lists it beside the configured model, a panel run on it streams and calls a tool
 * (served by the host's LanguageModelChat.sendRequest), Cancel aborts the provider's request, and
 * the provider's error reaches the panel as a readable error, and `@deerflow` answers in the Chat
 * view (Copilot signed out; see ../chat-participants.md). On 4.100.3 (VS Code 1.100) no
 * extension can register a model (the provider API is 1.104+): the picker offers the configured
 * model only and a run on it works as before.
 * Screenshots go to test-results/vscode/<code-server version>/vscodelm-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { editorTab, runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";
import { LM_MODEL_NAME, startLmRecorder, writeLmProviderExtension } from "../lmProvider.js";
import type { LmRecorder } from "../lmProvider.js";

const version = defaultCodeServer();
const CHAT_PROMPTS = { "ctrl+alt+f": "@deerflow [file] Write me some notes.", "ctrl+alt+a": "@deerflow [approve] Add a task." };
const HAS_PROVIDER_API = version !== "4.100.3";

describe(`vscode.lm models in DeerFlow (code-server ${version} + chromium)`, () => {
  let model: ModelServer;
  let recorder: LmRecorder;
  let df: DeerFlowSession | undefined;
  let panel: Panel;
  let extDir: string;

  before(async () => {
    // The configured model answers on 4.100.3 only; on 4.139.1 a request to it fails the suite.
    model = await startModelServer({ script: [{ content: "Configured model here." }] });
    recorder = await startLmRecorder();
    extDir = writeLmProviderExtension(join(mkdtempSync(join(tmpdir(), "deerflow-lm-provider-")), "ext"));
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-lm",
      alsoLink: [extDir],
      env: { DEERFLOW_LM_TEST_URL: recorder.url },
      // 1.139's AI features are on here (the other suites turn them off): vscode.lm lives there.
      settings: { "chat.disableAIFeatures": false, "deerflow.memory.enabled": false },
      // Later chat prompts go in through Chat's own open-with-query command: typing "@deerflow"
      // a second time raced the mention suggestions on a loaded machine ("@agent" was accepted).
      keybindings: Object.entries(CHAT_PROMPTS).map(([key, query]) => ({ key, command: "workbench.action.chat.open", args: { query } })),
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await recorder?.close();
    await model?.close();
    if (extDir) rmSync(join(extDir, ".."), { recursive: true, force: true });
  });

  const step = failureCapture(() => df, "vscodelm-");
  const pickerRow = (text: string) => df!.page.locator(".quick-input-list .monaco-list-row", { hasText: text });
  /** DeerFlow: Select Model, up to its own QuickPick (runCommand waits for the palette to close, which this one keeps open). */
  const openModelPicker = async () => {
    const page = df!.page;
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input[type='text']");
    await input.fill(">DeerFlow: Select Model");
    await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "DeerFlow: Select Model" }).waitFor({ timeout: 15_000 });
    await page.keyboard.press("Enter");
    await shows(page.locator(".quick-input-widget input[placeholder='The model new runs use']"), "the Select Model picker");
  };

  if (HAS_PROVIDER_API) {
    test("Select Model lists the vscode.lm model beside the configured one; a run on it streams and calls a tool", () =>
      step("picker-run", async () => {
        await recorder.waitFor((e) => e.event === "registered", "that it registered its model");
        await panel.open();
        await openModelPicker();
        await shows(pickerRow(`${LM_MODEL_NAME} (vscode.lm deerflow-test/scripted)`), "the vscode.lm model in the Select Model picker");
        await shows(pickerRow("scripted-e2e"), "the configured model in the same picker");
        await screenshot(df!.page, "vscodelm-01-model-picker");
        await pickerRow(LM_MODEL_NAME).click();

        const before = recorder.events.filter((e) => e.event === "request").length;
        await panel.send("[tool] What is in the workspace?");
        await shows(panel.toolCalls.first(), "the ls call the vscode.lm model asked for");
        await shows(panel.message("ai", /The workspace has: .+\./), "the streamed answer after the tool result");
        await shows(panel.status("success"), "the run ending success");
        const requests = recorder.events.filter((e) => e.event === "request").slice(before);
        assert.equal(requests.length, 2, "two model requests: the tool call, then the answer");
        assert.ok((requests[0]!.tools as string[]).includes("ls"), "DeerFlow's tools reached the provider");
        assert.equal(requests[1]!.toolResult, true, "the tool result went back to the provider");
        assert.equal(model.requests.length, 0, "the configured endpoint was never asked");
        await screenshot(df!.page, "vscodelm-02-run-with-tool");
      }));

    test("Cancel aborts the provider's request", () =>
      step("cancel", async () => {
        await panel.send("[hang] Take your time.");
        await shows(panel.message("ai", "Working on it"), "the first words of the hanging answer");
        await panel.cancelButton.click();
        await recorder.waitFor((e) => e.event === "cancelled", "that its request was cancelled");
        await shows(panel.status("interrupted"), "the run ending interrupted");
        await screenshot(df!.page, "vscodelm-03-cancelled");
      }));

    test("a provider error reaches the panel as a readable error", () =>
      step("error", async () => {
        await panel.send("[fail] Try it.");
        // One alert above the composer (issue 30 item 2): which model failed, the provider's words, the next steps.
        const alert = panel.view.getByRole("alert").filter({ hasText: "deerflow-test/scripted" });
        await shows(alert, "which model failed, in the panel's alert");
        await shows(alert.filter({ hasText: "the scripted provider refuses this request" }), "the provider's error in the alert");
        await shows(alert.getByRole("button", { name: "Retry" }), "Retry in the alert");
        await shows(alert.getByRole("button", { name: "Show Logs" }), "Show Logs in the alert");
        await shows(panel.view.getByTestId("run-error").filter({ hasText: "Model request failed" }), "the thread's record of the failure");
        await screenshot(df!.page, "vscodelm-04-provider-error");
      }));

    test("@deerflow in the Chat view (Copilot signed out) runs on the chat's vscode.lm model: tool progress, then the streamed answer", () =>
      step("chat", async () => {
        const page = df!.page;
        const before = recorder.events.filter((e) => e.event === "request").length;
        await runCommand(page, "Chat: Open Chat");
        const input = page.locator(".interactive-input-part .monaco-editor").first();
        await shows(input, "the Chat view's input");
        await input.click();
        await page.keyboard.type("@deerflow [tool] Which files are here?");
        await page.keyboard.press("Enter");
        const session = page.locator(".interactive-session");
        await shows(session.getByText(/The workspace has: .+\./).first(), "@deerflow's answer in the Chat view", 60_000);
        // 1.139 folds the progress lines of a finished answer into "Completed N steps in …".
        await shows(session.getByText(/Running ls|Completed \d+ steps?/).first(), "the tool call as a progress line (folded into the steps summary)");
        const requests = recorder.events.filter((e) => e.event === "request").slice(before);
        assert.equal(requests.length, 2, "the chat turn ran through DeerFlow's agent: the tool call, then the answer");
        await screenshot(page, "vscodelm-05-chat-answer");
        // The same run system: the panel's thread shows the chat's turn too.
        await shows(panel.message("human", "Which files are here?"), "the chat's prompt on the panel's thread");
      }));

    test("@deerflow: a presented file is a link that opens it; a call waiting on approval gets Approve / Reject / Open in Panel, and Approve decides it", () =>
      step("chat-artifact-approval", async () => {
        const page = df!.page;
        const session = page.locator(".interactive-session");
        await page.keyboard.press("Control+Alt+F");
        const anchor = session.locator("a", { hasText: "notes.md" }).first();
        await shows(anchor, "the presented file as a link in the answer", 60_000);
        await anchor.click();
        await shows(editorTab(page, "notes.md"), "notes.md opened in an editor");

        await page.keyboard.press("Control+Alt+A");
        const approve = session.getByRole("button", { name: "Approve" }).last();
        await shows(approve, "the Approve button for the protected write", 60_000);
        await shows(session.getByRole("button", { name: "Reject" }).last(), "the Reject button");
        await shows(session.getByRole("button", { name: "Open in Panel" }).last(), "the Open in Panel button");
        assert.equal(existsSync(join(df!.cs.workspace, ".vscode", "tasks.json")), false, "nothing is written before the decision");
        await screenshot(page, "vscodelm-06-chat-approval-buttons");
        await approve.click();
        await recorder.waitFor((e) => e.event === "request" && e.resultId === "call_protected", "the approved call's result", 60_000);
        assert.equal(existsSync(join(df!.cs.workspace, ".vscode", "tasks.json")), true, "the approved write happened");
      }));
  } else {
    test("without the provider API (VS Code 1.100) the picker offers the configured model only, and runs on it work", () =>
      step("no-provider-api", async () => {
        await recorder.waitFor((e) => e.event === "unsupported", "that this VS Code has no provider API");
        await panel.open();
        await openModelPicker();
        await shows(pickerRow("scripted-e2e"), "the configured model in the picker");
        assert.equal(await pickerRow("vscode.lm").count(), 0, "no vscode.lm model is offered");
        await screenshot(df!.page, "vscodelm-01-model-picker");
        await df!.page.keyboard.press("Escape");
        await panel.send("Hello?");
        await shows(panel.message("ai", "Configured model here."), "the configured model's answer");
      }));
  }
});
