/**
 * The test infrastructure on its own (no DeerFlow code): code-server + chromium + a development
 * extension from the payload URL + environment reaching the extension host + a webview round trip,
 * and cleanup leaving no process behind. When this suite passes and panel.e2e.ts fails, the
 * product is at fault, not the harness around it.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchCodeServer, processGroupMembers } from "../launch.js";
import { CODE_SERVERS, defaultCodeServer } from "../codeServers.js";
import type { CodeServer } from "../launch.js";
import { launchBrowser, openWorkbench, runCommand, screenshot, webview } from "../workbench.js";
import type { Browser } from "../workbench.js";
import { PROBE_CONTAINER, PROBE_OPEN_COMMAND, writeProbeExtension } from "../probeExtension.js";

describe(`VS Code test infrastructure (code-server ${defaultCodeServer()} + chromium)`, () => {
  let cs: CodeServer;
  let browser: Browser;
  let probeDir: string;
  const fakeModelUrl = "http://127.0.0.1:9/v1";

  before(async () => {
    probeDir = writeProbeExtension(mkdtempSync(join(tmpdir(), "deerflow-probe-ext-")));
    cs = await launchCodeServer({ extension: { kind: "dev", path: probeDir }, env: { OPENAI_BASE_URL: fakeModelUrl }, label: "deerflow-vscode-infra" });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await cs?.cleanup();
    if (probeDir) rmSync(probeDir, { recursive: true, force: true });
  });

  test("the workbench loads the development extension", async () => {
    const t = await openWorkbench(browser.page, cs.url, PROBE_CONTAINER);
    console.log(`  code-server ${cs.version} (Code ${cs.vscodeVersion}, ${cs.node}) listening after ${cs.listenMs} ms; workbench ${Math.round(t.workbenchMs)} ms, extension in activity bar ${Math.round(t.activityBarMs)} ms`);
  });

  test("a palette command opens its webview, which round-trips to the extension host with our environment and Node", async () => {
    await runCommand(browser.page, PROBE_OPEN_COMMAND);
    const view = webview(browser.page);
    await view.getByRole("button", { name: "Ping" }).click({ timeout: 30_000 });
    // The extension host reports the VS Code inside this code-server and the Node it runs on (Node
    // 24 for 4.139.1): the harness the extension spawns with process.execPath runs on that Node.
    const reply = `env ${fakeModelUrl} vscode ${cs.vscodeVersion} node v${CODE_SERVERS[cs.version].nodeMajor}.`;
    await view.getByTestId("reply").filter({ hasText: reply }).waitFor({ timeout: 15_000 });
    await screenshot(browser.page, "00-infra-probe");
    console.log(`  memory: code-server tree ${cs.rssMiB()} MiB, chromium ${browser.rssMiB()} MiB`);
  });

  test("cleanup stops the whole process group", async () => {
    await browser.close();
    await cs.cleanup();
    assert.deepEqual(processGroupMembers(cs.pid), [], "no process of code-server's group is left");
  });
});
