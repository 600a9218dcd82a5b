/**
 * A newcomer's first run (issue 30 items 1 and 2), from an empty profile: no deerflow.models, no
 * OPENAI_* in the environment, no key. The panel opens on a start state (not an error, nothing an
 * alert); a message typed then stays in the composer; Add Model… asks in VS Code's input boxes
 * (base URL prefilled with OpenAI's, model id, API key in a password box), writes the model to the
 * settings this window reads and selects it; the kept message then sends. A wrong key is a 401:
 * one alert naming the endpoint with Retry, Show Logs and Set API Key; Set API Key then Retry
 * answers. A model whose port refuses the connection: the alert names host:port, Retry and Show
 * Logs, no Set API Key. Screenshots: test-results/vscode/<version>/firstrun-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { screenshot } from "../workbench.js";
import { freePort } from "../launch.js";
import { defaultCodeServer } from "../codeServers.js";

const version = defaultCodeServer();
const GOOD_KEY = "sk-first-run-right";
const WRONG_KEY = "sk-first-run-wrong";

/** The quick input showing `title` (an input box of Add Model or Set API Key), then its text field. */
async function inputBox(page: Page, title: string | RegExp): Promise<ReturnType<Page["locator"]>> {
  await shows(page.locator(".quick-input-widget .quick-input-title", { hasText: title }), `the input box "${String(title)}"`);
  return page.locator(".quick-input-widget .quick-input-box input");
}

async function answer(page: Page, title: string | RegExp, value: string): Promise<void> {
  const input = await inputBox(page, title);
  await input.fill(value);
  await page.keyboard.press("Enter");
}

/** Runs a palette command whose own input box then opens (runCommand waits for the palette to close, which this keeps open). */
async function startCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input[type='text']");
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: title }).waitFor({ timeout: 15_000 });
  await page.keyboard.press("Enter");
}

describe(`DeerFlow's first run from an empty profile (code-server ${version} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({
      script: (req) => {
        const last = req.body?.messages?.at(-1);
        if (typeof last?.content === "string" && last.content.startsWith("Generate a concise title")) return { content: "First steps" };
        if (req.headers.authorization !== `Bearer ${GOOD_KEY}`) return { error: { status: 401 } };
        return { content: "Hello from your new model." };
      },
    });
    df = await startDeerFlow({
      model,
      label: "deerflow-first-run",
      // Nothing anywhere: no environment model (startDeerFlow's default), no settings.
      env: { OPENAI_BASE_URL: "", OPENAI_MODEL: "", OPENAI_API_KEY: "" },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "firstrun-");
  const setup = () => panel.view.getByRole("region", { name: "Set up a model" });
  const alert = () => panel.view.getByRole("alert");

  test("the panel opens on a start state with Add Model…, and nothing in it is an alert", () =>
    step("start-state", async () => {
      await panel.open();
      await shows(setup().getByRole("button", { name: "Add Model…" }), "Add Model… in the panel's start state");
      await shows(setup().getByText("Choose a model to start"), "the start state's heading");
      assert.equal(await alert().count(), 0, "no alert before the first Send");
      await screenshot(df!.page, "firstrun-01-start-state");
    }));

  test("the Skills and MCP Servers sections are there when empty, and a skill or server added on disk shows within 10 s", () =>
    step("sections", async () => {
      const skills = panel.view.getByTestId("skills-section");
      const mcp = panel.view.getByTestId("mcp-section");
      await shows(skills, "the Skills section, with no skill yet");
      await shows(mcp, "the MCP Servers section, with no server yet");
      await skills.locator("summary").click();
      await mcp.locator("summary").click();
      await shows(skills.getByText("No skills."), "the Skills section's empty state");
      await shows(skills.getByRole("button", { name: "Add Skill…" }), "Add Skill… in the Skills section");
      await shows(mcp.getByText("No MCP servers."), "the MCP Servers section's empty state");
      await shows(mcp.getByRole("button", { name: "Add MCP Server…" }), "Add MCP Server… in the MCP Servers section");
      const ws = df!.cs.workspace;
      mkdirSync(join(ws, ".claude", "skills", "release-notes"), { recursive: true });
      writeFileSync(join(ws, ".claude", "skills", "release-notes", "SKILL.md"), "---\nname: release-notes\ndescription: Writes release notes from the changelog.\n---\n\nRead CHANGELOG.md.\n");
      await shows(skills.locator('[data-testid="skill"][data-name="release-notes"]'), "the skill written to .claude/skills, without a run or a reload", 10_000);
      mkdirSync(join(ws, ".vscode"), { recursive: true });
      writeFileSync(join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { notes: { command: "node", args: ["notes-server.js"] } } }));
      await shows(mcp.locator('[data-testid="mcp-server"][data-name="notes"]'), "the server written to .vscode/mcp.json, without a run or a reload", 10_000);
      assert.equal(await mcp.locator('[data-testid="mcp-server"][data-name="notes"]').getAttribute("data-state"), "needs_approval", "a workspace server waits for its Allow");
      await screenshot(df!.page, "firstrun-01b-sections");
      await skills.locator("summary").click();
      await mcp.locator("summary").click();
    }));

  test("a message sent with no model stays in the composer, and the start state says so", () =>
    step("draft-kept", async () => {
      await panel.submit("Say hello to my first model");
      await shows(setup().getByText("Your message is kept in the box below"), "the start state saying the message is kept");
      assert.equal(await panel.messageBox.inputValue(), "Say hello to my first model", "the draft is still in the message box");
      assert.equal(await panel.message("human").count(), 0, "nothing was sent");
      assert.equal(model.requests.length, 0, "no model was asked");
    }));

  test("Add Model… asks for the base URL (OpenAI's prefilled), the model id and the key, then the kept message sends; a wrong key is one alert with Retry, Show Logs and Set API Key", () =>
    step("add-model-401", async () => {
      const page = df!.page;
      await setup().getByRole("button", { name: "Add Model…" }).click();
      const url = await inputBox(page, "DeerFlow: Add Model (1/3)");
      assert.equal(await url.inputValue(), "https://api.openai.com/v1", "OpenAI's base URL is filled in");
      await url.fill(model.url);
      await page.keyboard.press("Enter");
      await answer(page, "DeerFlow: Add Model (2/3)", "scripted-first");
      const key = await inputBox(page, "DeerFlow: Add Model (3/3)");
      assert.equal(await key.getAttribute("type"), "password", "the key is typed into a password box");
      await key.fill(WRONG_KEY);
      await page.keyboard.press("Enter");
      await setup().waitFor({ state: "hidden", timeout: 30_000 }).catch((e: unknown) => {
        throw new Error("Not gone within 30 s: the start state, once the model was added.", { cause: e });
      });
      assert.equal(await panel.messageBox.inputValue(), "Say hello to my first model", "the draft survived Add Model");
      await panel.sendButton.click();
      await shows(panel.message("human", "Say hello to my first model"), "the kept message, sent");
      const endpoint = `127.0.0.1:${model.port}`;
      await shows(alert().filter({ hasText: endpoint }), `one alert naming the endpoint ${endpoint}`, 60_000);
      await shows(alert().filter({ hasText: "did not accept the API key" }), "the alert saying the key was refused");
      for (const name of ["Retry", "Show Logs", "Set API Key"]) await shows(alert().getByRole("button", { name }), `${name} in the alert`);
      assert.equal(await alert().count(), 1, "one alert");
      const text = await panel.view.locator("body").innerText();
      assert.doesNotMatch(text, /--base-url|--model|Troubleshooting|https?:\/\/\S*langchain/i, "no CLI flags or library URLs in the panel");
      assert.equal(model.requests.at(-1)?.headers.authorization, `Bearer ${WRONG_KEY}`, "the key typed into Add Model reached the endpoint");
      await screenshot(page, "firstrun-02-wrong-key");
    }));

  test("Set API Key from the alert, then Retry: the answer streams", () =>
    step("set-key-retry", async () => {
      const page = df!.page;
      await alert().getByRole("button", { name: "Set API Key" }).click();
      const key = await inputBox(page, /DEERFLOW_SCRIPTED_FIRST_API_KEY/);
      assert.equal(await key.getAttribute("type"), "password", "a password box");
      await key.fill(GOOD_KEY);
      await page.keyboard.press("Enter");
      await shows(alert().getByRole("button", { name: "Retry" }), "Retry still offered");
      await alert().getByRole("button", { name: "Retry" }).click();
      await shows(panel.message("ai", "Hello from your new model."), "the answer after Retry", 60_000);
      await alert().waitFor({ state: "hidden", timeout: 15_000 });
      assert.equal(model.requests.at(-1)?.headers.authorization, `Bearer ${GOOD_KEY}`, "the new key was used");
    }));

  test("the model is in the settings this window reads, with no key in any settings file", () =>
    step("settings", () => {
      const dir = df!.cs.userDataDir;
      const files = ["Machine", "User"].map((d) => join(dir, d, "settings.json")).filter((f) => existsSync(f));
      const withModels = files.filter((f) => readFileSync(f, "utf8").includes('"deerflow.models"'));
      assert.equal(withModels.length, 1, `one settings file holds deerflow.models (${files.join(", ")})`);
      assert.match(withModels[0]!, /Machine/, "the remote machine's settings: where a code-server window reads a machine-scoped setting");
      const models = (JSON.parse(readFileSync(withModels[0]!, "utf8")) as Record<string, unknown>)["deerflow.models"];
      assert.deepEqual(models, [{ name: "scripted-first", model: "scripted-first", base_url: model.url, api_key_env: "DEERFLOW_SCRIPTED_FIRST_API_KEY" }]);
      for (const d of ["Machine", "User"]) {
        for (const f of existsSync(join(dir, d)) ? readdirSync(join(dir, d)).filter((n) => n.endsWith(".json")) : []) {
          const text = readFileSync(join(dir, d, f), "utf8");
          assert.ok(!text.includes(GOOD_KEY) && !text.includes(WRONG_KEY), `no API key in ${d}/${f}`);
        }
      }
      return Promise.resolve();
    }));

  test("a model whose port refuses the connection: the alert names host:port with Retry and Show Logs, and no Set API Key", () =>
    step("refused", async () => {
      const page = df!.page;
      const closed = await freePort();
      await startCommand(page, "DeerFlow: Add Model…");
      await answer(page, "DeerFlow: Add Model (1/3)", `http://127.0.0.1:${closed}/v1`);
      await answer(page, "DeerFlow: Add Model (2/3)", "offline-model");
      await answer(page, "DeerFlow: Add Model (3/3)", "");
      await panel.send("Are you there?");
      const endpoint = `127.0.0.1:${closed}`;
      await shows(alert().filter({ hasText: endpoint }).filter({ hasText: "could not be reached" }), `the alert naming ${endpoint} as unreachable`, 90_000);
      await shows(alert().getByRole("button", { name: "Retry" }), "Retry in the alert");
      await shows(alert().getByRole("button", { name: "Show Logs" }), "Show Logs in the alert");
      assert.equal(await alert().getByRole("button", { name: "Set API Key" }).isVisible(), false, "no Set API Key for a refused connection");
      await screenshot(page, "firstrun-03-refused");
    }));

  test("with three models every one is clickable in the panel's picker, which opens upward inside the view", () =>
    step("picker", async () => {
      const page = df!.page;
      await startCommand(page, "DeerFlow: Add Model…");
      await answer(page, "DeerFlow: Add Model (1/3)", model.url);
      await answer(page, "DeerFlow: Add Model (2/3)", "third-model");
      await answer(page, "DeerFlow: Add Model (3/3)", GOOD_KEY);
      const picker = panel.view.getByTestId("model-picker");
      await shows(panel.view.locator('[data-testid="model-picker"][data-model="third-model"]'), "the third model, selected");
      for (const name of ["scripted-first", "offline-model", "third-model"]) {
        await picker.click();
        const option = panel.view.getByRole("option", { name });
        await shows(option, `${name} in the open picker`);
        if (name === "scripted-first") await screenshot(page, "firstrun-04-picker-open");
        await option.click();
        await shows(panel.view.locator(`[data-testid="model-picker"][data-model="${name}"]`), `${name} selected by a click`);
      }
    }));

  test("a model on another machine with no key is flagged before a send, with Set API Key", () =>
    step("key-missing", async () => {
      const page = df!.page;
      const before = model.requests.length;
      await startCommand(page, "DeerFlow: Add Model…");
      await answer(page, "DeerFlow: Add Model (1/3)", "https://models.example.invalid/v1");
      await answer(page, "DeerFlow: Add Model (2/3)", "remote-model");
      await answer(page, "DeerFlow: Add Model (3/3)", "");
      await shows(setup().getByText("No API key for remote-model"), "the start state flagging the missing key");
      await setup().getByRole("button", { name: "Set API Key" }).click();
      await answer(page, /DEERFLOW_REMOTE_MODEL_API_KEY/, "sk-remote");
      await setup().waitFor({ state: "hidden", timeout: 15_000 }).catch((e: unknown) => {
        throw new Error("Not gone within 15 s: the missing-key flag, once the key was set.", { cause: e });
      });
      assert.equal(model.requests.length, before, "nothing was sent to find out");
    }));
});
