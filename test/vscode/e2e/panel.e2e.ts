/**
 * The DeerFlow panel in a real VS Code (code-server in headless chromium; the runner picks the
 * version through DEERFLOW_CODE_SERVER), against the
 * scripted OpenAI-compatible model server: everything between the model and the pixels is real —
 * the extension host, the harness process it starts, SQLite, the sandbox tools, the webview.
 *
 * One code-server and one browser for the whole suite (memory: ~0.5 + ~1.2 GiB); the tests run in
 * order on one thread, each prompt tagged with its scenario (see ../scenarios.ts). Gates hold a
 * reply mid-stream so "partial text is visible" is asserted at a known point, not raced.
 * Screenshots go to test-results/vscode/<code-server version>/.
 */
import { after, before, describe, test } from "node:test";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged, tinyPng } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { editorTab, openWorkbench, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const STREAM_TEXT = "Streaming words arrive one by one: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omega.";
const RELOAD_TEXT = "This answer survives a window reload: first second third fourth fifth sixth seventh eighth ninth tenth.";
const SKILL_TEXT = "Here is the slide in brand colors: title, three bullets and the logo in the corner.";
const REPORT = "# Report\n\nhello-workspace greets people by name.\n";
const CODE = 'const greeting: string = "hello";\nexport default greeting;';
const CODE_ANSWER = "```ts\n" + CODE + "\n```\n";

const SCENARIOS: Scenarios = {
  // afterChunks counts SSE events: the role chunk, then one word per chunk.
  stream: [{ content: STREAM_TEXT, gate: { afterChunks: 6, until: "stream" } }],
  report: [
    { content: "Let me look at the workspace first.", toolCalls: [{ name: "ls", args: { description: "See the workspace", path: "/mnt/user-data/workspace" } }] },
    { toolCalls: [{ name: "write_file", args: { description: "Write the report", path: "/mnt/user-data/outputs/report.md", content: REPORT } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] },
    { content: `The report is ready: report.md.\n\n${CODE_ANSWER}` },
  ],
  image: [
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/workspace/pic.png" } }] },
    { content: "I looked at pic.png: a small blue square." },
  ],
  cancel: [{ hang: true }],
  reload: [{ content: RELOAD_TEXT, gate: { afterChunks: 5, until: "reload" } }],
  skill: [{ content: SKILL_TEXT, gate: { afterChunks: 4, until: "skill" } }],
};
/** A skill copied unchanged from anthropics/skills (Apache-2.0, its LICENSE beside it), as a user keeps it. */
const SKILL_FILES = Object.fromEntries(
  ["SKILL.md", "LICENSE.txt"].map((f) => [`.agents/skills/brand-guidelines/${f}`, readFileSync(`test/fixtures/skills/anthropics/brand-guidelines/${f}`)]),
);

describe(`DeerFlow panel in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;
  let peak = { codeServer: 0, chromium: 0 };
  let sampler: NodeJS.Timeout | undefined;

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 10, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({ model, label: "deerflow-vscode-panel", workspaceFiles: { "pic.png": tinyPng(), ...SKILL_FILES } });
    panel = new Panel(df.page);
    const d = df;
    // Peak memory, sampled once a second (a measurement, not a wait).
    sampler = setInterval(() => {
      peak = { codeServer: Math.max(peak.codeServer, d.cs.rssMiB()), chromium: Math.max(peak.chromium, d.browser.rssMiB()) };
    }, 1000);
    sampler.unref();
    console.log(`  code-server listening after ${df.cs.listenMs} ms; workbench ${Math.round(df.firstLoad.workbenchMs)} ms; DeerFlow in the activity bar after ${Math.round(df.firstLoad.activityBarMs)} ms`);
  });

  after(async () => {
    if (sampler) clearInterval(sampler);
    if (df) {
      console.log(`  peak memory: code-server tree (with the harness) ${peak.codeServer} MiB, chromium ${peak.chromium} MiB; browser console errors: ${df.browser.consoleErrors.length}`);
      await df.close();
    }
    await model?.close();
  });

  const step = failureCapture(() => df, "");

  test("DeerFlow: Open Panel from the command palette shows the panel", () =>
    step("open-panel", async () => {
      await panel.open();
      await panel.sendButton.waitFor({ state: "visible" });
      await screenshot(df!.page, "01-panel-open");
    }));

  test("a prompt's answer streams in: partial text while the model holds, then all of it", () =>
    step("stream", async () => {
      await panel.send(tagged("stream", "Say something, slowly."));
      await model.waitForGate("stream");
      const answer = panel.message("ai", "Streaming words arrive");
      await answer.waitFor({ state: "visible", timeout: 20_000 });
      assert.doesNotMatch((await answer.textContent()) ?? "", /omega/, "the held-back words are not shown yet");
      await panel.status("running").waitFor({ timeout: 10_000 });
      await screenshot(df!.page, "02-streaming-partial");
      model.gate("stream").open();
      await panel.message("ai", "kappa lambda omega.").waitFor({ timeout: 20_000 });
      await panel.status("success").waitFor({ timeout: 20_000 });
      await screenshot(df!.page, "03-streamed");
    }));

  test("a tool call shows, and the presented file appears as an artifact that opens in an editor tab", () =>
    step("artifact", async () => {
      await panel.send(tagged("report", "Write a report on this workspace."));
      await panel.toolCalls.filter({ hasText: "ls" }).first().waitFor({ timeout: 30_000 });
      await screenshot(df!.page, "04-tool-call");
      const artifact = panel.artifacts.getByText("report.md").first();
      await artifact.waitFor({ timeout: 30_000 });
      await panel.message("ai", "The report is ready").waitFor({ timeout: 30_000 });
      await panel.status("success").waitFor({ timeout: 20_000 });
      // Workspace files by their path in the folder; others (outputs) as they are (issue 30 item 5).
      assert.equal(await panel.toolCalls.filter({ hasText: "ls" }).first().getByTestId("tool-target").textContent(), ".");
      assert.equal(await panel.toolCalls.filter({ hasText: "write_file" }).first().getByTestId("tool-target").textContent(), "/mnt/user-data/outputs/report.md");
      // The answer's code block: highlighted, with a Copy button that copies exactly the code.
      const block = panel.message("ai", "The report is ready").getByTestId("code-block");
      await block.locator(".hljs-keyword", { hasText: "const" }).first().waitFor({ timeout: 10_000 });
      await block.getByRole("button", { name: "Copy ts code" }).click();
      await block.getByRole("button", { name: "Copy ts code" }).filter({ hasText: "Copied" }).waitFor({ timeout: 10_000 });
      assert.equal(await df!.page.evaluate(() => navigator.clipboard.readText()), CODE);
      await screenshot(df!.page, "05a-code-block");
      await artifact.click();
      await editorTab(df!.page, "report.md").waitFor({ timeout: 20_000 });
      await df!.page.locator(".monaco-editor .view-lines", { hasText: "greets people by name" }).waitFor({ timeout: 20_000 });
      await screenshot(df!.page, "05-artifact-opened");
    }));

  test("a viewed image shows in the cache, and Clear empties it", () =>
    step("image", async () => {
      await panel.send(tagged("image", "Look at pic.png."));
      const cached = panel.viewedImages.getByText("pic.png").first();
      await cached.waitFor({ timeout: 30_000 });
      await panel.viewedImages.locator("img").first().waitFor({ timeout: 20_000 });
      await panel.message("ai", "a small blue square").waitFor({ timeout: 30_000 });
      await panel.status("success").waitFor({ timeout: 20_000 });
      await screenshot(df!.page, "06-image-cache");
      await panel.viewedImages.getByRole("button", { name: "Clear" }).click();
      await cached.waitFor({ state: "detached", timeout: 20_000 });
      await screenshot(df!.page, "07-image-cache-cleared");
    }));

  test("Cancel ends a long run as interrupted and aborts the model request", () =>
    step("cancel", async () => {
      const before = model.requests.length;
      await panel.send(tagged("cancel", "Think about this for a very long time."));
      const [, hung] = await Promise.all([panel.status("running").waitFor({ timeout: 20_000 }), model.waitForRequests(before + 1)]);
      const request = hung.at(-1)!;
      await panel.cancelButton.click();
      await panel.status("interrupted").waitFor({ timeout: 20_000 });
      await panel.runStatus.filter({ hasText: "Stopped" }).waitFor({ timeout: 10_000 });
      await model.waitForRequests(request.index + 1, { settled: true });
      assert.equal(request.clientAborted, true, "the harness aborted the hung model request");
      await screenshot(df!.page, "08-cancelled");
    }));

  test("a window reload mid-run restores the messages and keeps streaming", () =>
    step("reload", async () => {
      await panel.send(tagged("reload", "Answer, and keep going across a reload."));
      await model.waitForGate("reload");
      await panel.message("ai", "This answer survives").waitFor({ timeout: 20_000 });
      await screenshot(df!.page, "09-before-reload");

      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      // In code-server the old window's extension host (and the harness running this run) lives
      // on after a reload; the new window's harness must follow the run through the database.
      // Only messages near the end are checked: a virtualized list need not render the first ones.
      await shows(panel.message("human", "Think about this for a very long time"), "an earlier turn is restored after the reload");
      await shows(panel.message("human", "keep going across a reload"), "the running turn's prompt is restored after the reload");
      await shows(panel.status("running"), "after the reload the panel shows the run as still running");
      const partial = panel.message("ai", "This answer survives");
      await shows(partial, "the part of the answer streamed before the reload is restored");
      assert.doesNotMatch((await partial.textContent()) ?? "", /tenth/, "the held-back words are not shown yet");
      await screenshot(df!.page, "10-after-reload");

      model.gate("reload").open();
      await shows(panel.message("ai", "ninth tenth."), "the rest of the answer streams in after the reload");
      await shows(panel.status("success"), "the run ends success in the reloaded panel");
      await screenshot(df!.page, "11-after-reload-finished");
    }));
  test("Skills: the section lists the workspace's skill, / completes its name, and the activated run streams", () =>
    step("skills", async () => {
      const section = panel.view.getByTestId("skills-section");
      await shows(section, "the Skills section");
      await section.locator("summary").click();
      await shows(section.locator('[data-testid="skill"][data-name="brand-guidelines"][data-enabled="true"]'), "brand-guidelines listed, enabled");
      await panel.messageBox.click();
      await panel.messageBox.fill("/bra");
      await shows(panel.view.getByTestId("skill-completion").filter({ hasText: "/brand-guidelines" }), "the / completion offers brand-guidelines");
      await screenshot(df!.page, "12-skill-completion");
      await panel.messageBox.press("Tab");
      assert.equal(await panel.messageBox.inputValue(), "/brand-guidelines ");
      await panel.messageBox.pressSequentially(tagged("skill", "make a slide"));
      const before = model.requests.length;
      await panel.sendButton.click();
      await model.waitForGate("skill");
      // The gate holds after the role chunk and three words.
      await shows(panel.message("ai", "Here is the"), "the activated run's answer streams in");
      assert.doesNotMatch((await panel.message("ai", "Here is the").textContent()) ?? "", /corner/, "the held-back words are not shown yet");
      model.gate("skill").open();
      await shows(panel.message("ai", "logo in the corner."), "the rest of the answer");
      await shows(panel.status("success"), "the activated run ends success");
      const sent = model.requests.slice(before).map((r) => JSON.stringify(r.body?.messages ?? [])).find((t) => t.includes("<slash_skill_activation>"));
      assert.ok(sent?.includes("brand-guidelines"), "the model was sent the activation of brand-guidelines");
      await screenshot(df!.page, "13-skill-run");

      // Open SKILL.md, then Disable: DeerFlow's skills.<name>.enabled, shown at once.
      await section.getByTestId("open-skill").click();
      await editorTab(df!.page, "SKILL.md").waitFor({ timeout: 20_000 });
      await section.getByTestId("skill-enabled").click();
      await shows(section.locator('[data-testid="skill"][data-name="brand-guidelines"][data-enabled="false"]'), "brand-guidelines disabled");
      await panel.messageBox.fill("/bra");
      assert.equal(await panel.view.getByTestId("skill-completion").count(), 0, "a disabled skill is not offered");
      await panel.messageBox.fill("");
    }));
});
