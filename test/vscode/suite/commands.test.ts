/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { deerflow, EXTENSION_ID, execute, folderPath, next, withoutFailures } from "./helpers.js";
import { useScriptedModel } from "./scriptedModel.js";

interface Contributed {
  command: string;
  title: string;
  category?: string;
}

describe("commands", () => {
  const model = useScriptedModel();

  it("registers every contributed command, all in the DeerFlow category", async () => {
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Contributed[] } }).contributes.commands;
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of contributed) {
      assert.equal(c.category, "DeerFlow", c.command);
      assert.ok(registered.has(c.command), `${c.command} is registered`);
    }
    const titles = contributed.map((c) => c.title);
    for (const t of ["Open Panel", "New Thread", "Cancel Run", "Attach Files…", "Clear Viewed Images", "Select Model", "Set API Key", "Show Logs", "Open Thread Outputs", "Toggle Plan Mode", "Open Sandbox Terminal", "Rebuild Sandbox Container"]) {
      assert.ok(titles.includes(t), `DeerFlow: ${t} is contributed`);
    }
  });

  it("Open Panel shows the DeerFlow view, loaded and answered, without a failure", async () => {
    const api = await deerflow();
    // Already on screen (an earlier test opened it) or it loads now: either way it ends up ready.
    const loaded = api.panel.ready ? Promise.resolve() : next(api.panel.onDidBecomeReady, () => true, "the panel's webview to load and be answered");
    await withoutFailures(async () => {
      await vscode.commands.executeCommand("deerflow.openPanel");
      await loaded;
    });
    assert.equal(api.panel.visible, true, "the DeerFlow view is visible");
    assert.equal(api.panel.ready, true);
  });

  it("New Thread creates a thread in the workspace folder and shows it", async () => {
    const api = await deerflow();
    const id = await execute<string>("deerflow.newThread");
    assert.equal(typeof id, "string");
    assert.equal(api.session.shownThreadId, id);
    const threads = await api.harness.request("threads/list", { workspaceFolder: folderPath() });
    assert.ok(threads.some((t) => t.thread_id === id));
  });

  it("Attach Files… takes files for the next run; only names reach the panel", async () => {
    const api = await deerflow();
    const file = vscode.Uri.file(join(folderPath(), "README.md"));
    const count = await execute<number>("deerflow.attachFiles", [file]);
    assert.equal(count, 1);
    assert.deepEqual(api.session.pendingAttachments, [file.fsPath]);
    api.session.removeAttachment(0);
    assert.equal(api.session.pendingAttachments.length, 0);
  });

  it("Select Model picks a configured model (the environment's when none are configured)", async () => {
    const api = await deerflow();
    assert.equal(await execute("deerflow.selectModel", model.name), model.name);
    assert.equal(api.session.model(), model.name);
  });

  it("Toggle Plan Mode flips plan mode and back", async () => {
    const api = await deerflow();
    const before = api.session.planMode;
    assert.equal(await execute("deerflow.togglePlanMode"), !before);
    assert.equal(api.session.planMode, !before);
    assert.equal(await execute("deerflow.togglePlanMode"), before);
  });

  it("Clear Viewed Images, Cancel Run, Continue Run and Open Thread Outputs act on the shown thread", async () => {
    const api = await deerflow();
    assert.ok(api.session.shownThreadId, "a thread is shown");
    assert.equal(await execute("deerflow.clearViewedImages"), true);
    assert.equal(await execute("deerflow.cancelRun"), false, "no run is active");
    assert.equal(await execute("deerflow.continueRun"), undefined, "its last run did not stop at its turn budget: nothing to continue, no run started");
    const outputs = await execute<string | undefined>("deerflow.openThreadOutputs");
    if (outputs !== undefined) {
      assert.ok(outputs.startsWith(join(folderPath(), ".deerflow", "threads")), outputs);
      assert.ok(existsSync(outputs));
    }
  });

  it("Open Sandbox Terminal and Rebuild Sandbox Container on a local sandbox: a host terminal only with host commands allowed; no rebuild", async () => {
    // The test folder has no devcontainer.json: its sandbox is the host.
    const cfg = vscode.workspace.getConfiguration("deerflow");
    if (!vscode.workspace.isTrusted) {
      assert.equal(await execute("deerflow.openSandboxTerminal"), undefined);
      assert.equal(await execute("deerflow.rebuildSandbox"), false);
      return;
    }
    assert.equal(await execute("deerflow.openSandboxTerminal"), undefined, "host commands are off: no terminal");
    await cfg.update("allowHostCommands", true, vscode.ConfigurationTarget.Global);
    try {
      const options = await execute<vscode.TerminalOptions | undefined>("deerflow.openSandboxTerminal");
      assert.equal(options?.name, "DeerFlow Sandbox");
      assert.equal((options?.cwd as vscode.Uri | undefined)?.fsPath, folderPath());
      const opened = vscode.window.terminals.filter((t) => t.name === "DeerFlow Sandbox");
      assert.ok(opened.length > 0, "the terminal is open");
      for (const t of opened) t.dispose();
    } finally {
      await cfg.update("allowHostCommands", undefined, vscode.ConfigurationTarget.Global);
    }
    // Refused by the harness: shown and reported, not thrown.
    const api = await deerflow();
    const refusal = next(api.onCommandError, (e) => e.command === "deerflow.rebuildSandbox", "the rebuild's refusal");
    assert.equal(await vscode.commands.executeCommand("deerflow.rebuildSandbox"), undefined);
    assert.match((await refusal).message, /dev container/i);
  });

  it("Show Logs, Select Workspace Folder and Restart Harness run", async () => {
    const api = await deerflow();
    await execute("deerflow.showLogs");
    assert.equal(await execute("deerflow.selectWorkspaceFolder"), folderPath());
    const before = api.harness.process!.pid;
    const pid = await execute<number>("deerflow.restartHarness");
    assert.ok(typeof pid === "number" && pid !== before, `a new harness process (${before} → ${pid})`);
  });
});
