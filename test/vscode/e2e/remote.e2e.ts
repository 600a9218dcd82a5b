/**
 * Issue 26 item 4 in a real VS Code (code-server + chromium): the extension on a remote harness.
 * A real `deerflow serve` (dist/cli.js, its own data dir, token file and model: the scripted model
 * server) serves a folder named like the workbench's folder but elsewhere on disk, so the
 * workspace is NOT shared: the panel runs threads on the server, whose files reach the window
 * only through `files/read`. User settings name the server (`deerflow.harness.url`); the token is
 * typed into DeerFlow: Set Remote Harness Token's password box.
 *
 * Checked through what a user sees: without a token (and later with a wrong one) the server's
 * 401 is an error that says to set the token; with it, the status bar names the server, the
 * model picker lists the server's model (not the window's), a run with tool calls streams, its
 * artifact opens from a download (the editor shows the server's bytes), a protected write waits
 * for an approval decided in the panel, a window reload mid-run replays the thread while the
 * run goes on on the server, and a server that goes away is retried until it is back. Screenshots: test-results/vscode/<version>/remote-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { editorTab, openWorkbench, runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";
import { repoRoot } from "../launch.js";

const TOKEN = "e2e-remote-token-0123456789";
const REPORT = "# Remote report\n\nWritten on the server, opened here from a download.\n";
const RELOAD_TEXT = "This answer streams on the server across a window reload: one two three four five six seven eight nine ten.";
const out = (name: string): string => `/mnt/user-data/outputs/${name}`;

const SCENARIOS: Scenarios = {
  report: [
    { toolCalls: [{ id: "call_write", name: "write_file", args: { description: "Write the report", path: out("report.md"), content: REPORT } }] },
    { toolCalls: [{ id: "call_present", name: "present_files", args: { filepaths: [out("report.md")] } }] },
    { content: "The report is ready on the server." },
  ],
  // A write under .husky is protected: it asks, whatever the server's write policy.
  hook: [
    { toolCalls: [{ id: "call_hook", name: "write_file", args: { description: "Add a hook", path: "/mnt/user-data/workspace/.husky/pre-commit", content: "echo remote hook\n" } }] },
    { content: "The hook is in place." },
  ],
  reload: [{ content: RELOAD_TEXT, gate: { afterChunks: 5, until: "reload" } }],
  after: [{ content: "Back on the same thread." }],
};

/** `deerflow serve` on a free port, its listening line read from stdout. */
async function startServe(opts: { folder: string; dataDir: string; tokenFile: string; model: ModelServer; port?: number }): Promise<{ url: string; proc: ChildProcessWithoutNullStreams; log: () => string }> {
  const proc = spawn(
    process.execPath,
    [join(repoRoot, "dist", "cli.js"), "serve", "--workspace", `${basename(opts.folder)}=${opts.folder}`, "--data-dir", opts.dataDir, "--token-file", opts.tokenFile, "--model", "server-model", "--base-url", opts.model.url, "--port", String(opts.port ?? 0)],
    { env: { ...process.env, OPENAI_API_KEY: "sk-e2e-server-key" } },
  );
  let log = "";
  proc.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const lines = createInterface({ input: proc.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    proc.once("exit", (code) => reject(new Error(`deerflow serve exited (${code}) before listening:\n${log}`)));
    lines.on("line", (line) => {
      log += `${line}\n`;
      try {
        const msg = JSON.parse(line) as { event?: string; url?: string };
        if (msg.event === "listening" && msg.url) resolve(msg.url);
      } catch {
        // Not a JSON line.
      }
    });
  });
  return { url, proc, log: () => log };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe(`DeerFlow on a remote harness in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  let df: DeerFlowSession | undefined;
  let panel: Panel;
  const root = mkdtempSync(join(tmpdir(), "deerflow-e2e-remote-"));
  /** The served folder: named "workspace" like code-server's copy, but another folder. */
  const served = join(root, "server", "workspace");
  const serverData = join(root, "server-data");
  const tokenFile = join(root, "token");

  before(async () => {
    mkdirSync(served, { recursive: true });
    mkdirSync(serverData, { recursive: true });
    writeFileSync(join(served, "README.md"), "The server's copy.\n");
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    serve = await startServe({ folder: served, dataDir: serverData, tokenFile, model });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-remote",
      // The window's own fallback model has another name: the picker must list the server's.
      env: { OPENAI_MODEL: "window-model" },
      settings: { "deerflow.harness.url": serve.url },
    });
    panel = new Panel(df.page);
    assert.notEqual(df.cs.workspace, served, "the workbench's folder is not the served one");
    assert.equal(basename(df.cs.workspace), basename(served), "…but it has the served one's name");
  });

  after(async () => {
    await df?.close();
    serve?.proc.kill("SIGTERM");
    if (serve && serve.proc.exitCode === null) await new Promise((r) => serve!.proc.once("exit", r));
    await model?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const step = failureCapture(() => df, "remote-");
  const toast = (text: string | RegExp) => df!.page.locator(".notification-toast", { hasText: text });
  const statusItem = (text: string) => df!.page.locator(".statusbar-item", { hasText: text });
  const host = (): string => new URL(serve!.url).host;

  /** DeerFlow: Set Remote Harness Token, typed into its password box. */
  const setToken = async (token: string): Promise<void> => {
    const page = df!.page;
    await runCommandKeepOpen(page, "DeerFlow: Set Remote Harness Token");
    const box = page.locator(".quick-input-widget input[type='password']");
    await shows(box, "the token's password input box");
    await box.fill(token);
    await page.keyboard.press("Enter");
    await box.waitFor({ state: "hidden", timeout: 15_000 });
  };

  test("without a token the server's 401 is an error that says to set it", () =>
    step("no-token", async () => {
      // Opening the panel activates the extension, which connects without a token.
      await panel.open();
      await shows(toast(/needs a token \(HTTP 401\)\. Set it with DeerFlow: Set Remote Harness Token/), "the 'needs a token (HTTP 401)' error", 60_000);
      await shows(panel.view.getByTestId("notice").filter({ hasText: "needs a token (HTTP 401)" }), "the same message in the panel");
      await shows(statusItem(`DeerFlow: ${host()} refused the token`), "the status bar's refused-token item");
      await screenshot(df!.page, "remote-01-no-token");
    }));

  test("with the token: the status bar names the server, the picker lists its model, a run with tool calls streams and its artifact opens from a download", () =>
    step("run", async () => {
      await setToken(TOKEN);
      await shows(statusItem(`DeerFlow: ${host()}`).filter({ hasNotText: "refused" }), "the status bar item naming the connected server", 60_000);
      const picker = panel.view.getByTestId("model-picker");
      await shows(picker.filter({ hasText: "server-model" }), "the server's model in the panel's picker");
      assert.doesNotMatch((await picker.textContent()) ?? "", /window-model/, "the window's own model is not offered on a remote harness");

      await panel.send(tagged("report", "Write a report on the server."));
      await shows(panel.toolCalls.first(), "the write_file call streamed from the server");
      await shows(panel.message("ai", "The report is ready on the server."), "the final answer");
      await shows(panel.status("success"), "the run ends success");
      const onServer = filesUnder(join(served, ".deerflow", "threads")).filter((f) => f.endsWith(join("outputs", "report.md")));
      assert.equal(onServer.length, 1, "the report was written in the served folder");
      assert.equal(readFileSync(onServer[0]!, "utf8"), REPORT);
      assert.equal(existsSync(join(df!.cs.workspace, ".deerflow")), false, "nothing was written in the window's folder");
      assert.ok(model.requests.length > 0 && model.requests.every((r) => r.headers["authorization"] === "Bearer sk-e2e-server-key"), "every model call used the server's key: the window's never left it");
      await screenshot(df!.page, "remote-02-run");

      const artifact = panel.artifacts.getByText("report.md").first();
      await shows(artifact, "the presented report in the artifacts list");
      await artifact.click();
      await shows(editorTab(df!.page, "report.md"), "an editor tab for the downloaded report");
      await shows(df!.page.locator(".monaco-editor .view-lines", { hasText: "opened here from a download" }), "the server's bytes in the editor");
      const storage = join(df!.cs.userDataDir, "User", "globalStorage");
      const copies = filesUnder(storage).filter((f) => f.includes(`${join("remote")}`) && f.endsWith(join("outputs", "report.md")));
      assert.equal(copies.length, 1, `one downloaded copy in the extension's global storage (${filesUnder(storage).join(", ")})`);
      assert.equal(readFileSync(copies[0]!, "utf8"), REPORT);
      await screenshot(df!.page, "remote-03-artifact");

      // Open Thread Outputs likewise: the thread's one output, downloaded, opens.
      await runCommand(df!.page, "View: Close All Editors");
      await editorTab(df!.page, "report.md").waitFor({ state: "hidden", timeout: 15_000 });
      await runCommand(df!.page, "DeerFlow: Open Thread Outputs");
      await shows(editorTab(df!.page, "report.md"), "the downloaded output opened by Open Thread Outputs");
      await shows(df!.page.locator(".monaco-editor .view-lines", { hasText: "opened here from a download" }), "its content");
    }));

  test("a protected write waits for an approval decided in the panel, then runs on the server", () =>
    step("approval", async () => {
      await panel.send(tagged("hook", "Add a pre-commit hook."));
      const card = panel.view.locator('[data-testid="approval-card"][data-tool-call-id="call_hook"]');
      await shows(card, "the approval card for the protected write");
      assert.equal(existsSync(join(served, ".husky", "pre-commit")), false, "nothing written before the decision");
      await screenshot(df!.page, "remote-04-approval");
      await card.getByRole("button", { name: "Approve", exact: true }).click();
      await shows(panel.message("ai", "The hook is in place."), "the run goes on after the approval");
      await shows(panel.status("success"), "the resumed run ends success");
      assert.equal(readFileSync(join(served, ".husky", "pre-commit"), "utf8"), "echo remote hook\n", "the server wrote the approved file");
      assert.equal(existsSync(join(df!.cs.workspace, ".husky")), false);
    }));

  test("a window reload mid-run replays the thread, and the run goes on on the server", () =>
    step("reload", async () => {
      await panel.send(tagged("reload", "Answer across a reload."));
      await model.waitForGate("reload");
      await shows(panel.message("ai", "This answer streams"), "the part streamed before the reload");
      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      await shows(panel.message("human", "Write a report on the server."), "an earlier turn replayed after the reload");
      await shows(panel.message("human", "Answer across a reload."), "the running turn's prompt replayed");
      const partial = panel.message("ai", "This answer streams");
      await shows(partial, "the streamed part rebuilt from the server's journal");
      assert.doesNotMatch((await partial.textContent()) ?? "", /nine ten/, "the held-back words are not shown yet");
      await shows(panel.status("running"), "the run still running on the server");
      await screenshot(df!.page, "remote-05-after-reload");
      model.gate("reload").open();
      await shows(panel.message("ai", "nine ten."), "the rest of the answer streams in after the reload");
      await shows(panel.status("success"), "the run ends success");
    }));

  test("a server that goes away is retried (and said so); back, the thread goes on where it was", () =>
    step("reconnect", async () => {
      const port = Number(new URL(serve!.url).port);
      const exited = new Promise((r) => serve!.proc.once("exit", r));
      serve!.proc.kill("SIGTERM");
      await exited;
      await shows(statusItem(`DeerFlow: ${host()} unreachable`), "the status bar's unreachable item");
      await shows(toast(/Cannot reach the remote harness at http:\/\/127\.0\.0\.1:\d+: E[A-Z]+\. Retrying with backoff/), "the warning that it is retrying");
      await screenshot(df!.page, "remote-06-unreachable");
      serve = await startServe({ folder: served, dataDir: serverData, tokenFile, model, port });
      await shows(statusItem(`DeerFlow: ${host()}`).filter({ hasNotText: /unreachable|refused/ }), "the status bar item once it is back", 60_000);
      await panel.send(tagged("after", "Are you back?"));
      await shows(panel.message("ai", "Back on the same thread."), "a run on the same thread after the reconnect");
      await shows(panel.status("success"), "it ends success");
      await shows(panel.message("human", "Answer across a reload."), "the thread's earlier turns are still shown");
    }));

  test("a wrong token is refused with the 401 message", () =>
    step("wrong-token", async () => {
      await setToken("not-the-token");
      await shows(toast(/refused the token \(HTTP 401\)\. Set the right one with DeerFlow: Set Remote Harness Token/), "the 'refused the token (HTTP 401)' error");
      await shows(statusItem(`DeerFlow: ${host()} refused the token`), "the status bar's refused-token item");
      assert.doesNotMatch(readFileSync(join(df!.cs.userDataDir, "User", "settings.json"), "utf8"), /not-the-token|e2e-remote-token/, "no token in the settings");
      await screenshot(df!.page, "remote-07-wrong-token");
    }));
});

/** Runs a command whose own input box stays open (runCommand waits for the palette to close). */
async function runCommandKeepOpen(page: DeerFlowSession["page"], title: string): Promise<void> {
  const input = page.locator(".quick-input-widget input[type='text']");
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible", timeout: 15_000 });
    await input.fill(`>${title}`);
    try {
      await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: title }).first().waitFor({ state: "visible", timeout: 5_000 });
      break;
    } catch (e) {
      await page.keyboard.press("Escape");
      if (attempt >= 10) throw new Error(`the command palette never offered "${title}"`, { cause: e });
    }
  }
  await page.keyboard.press("Enter");
}

