/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { deerflow, EXTENSION_ID, folderPath, harnessReady } from "./helpers.js";

interface Contributed {
  command: string;
  title: string;
  category?: string;
}

describe("commands", () => {
  before(async () => {
    await harnessReady(await deerflow());
  });

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

  it("Open Panel shows the DeerFlow view", async () => {
    await vscode.commands.executeCommand("deerflow.openPanel");
  });

  it("New Thread creates a thread in the workspace folder and shows it", async () => {
    const api = await deerflow();
    const id = await vscode.commands.executeCommand<string>("deerflow.newThread");
    assert.equal(typeof id, "string");
    assert.equal(api.session.shownThreadId, id);
    const threads = await api.harness.request("threads/list", { workspaceFolder: folderPath() });
    assert.ok(threads.some((t) => t.thread_id === id));
  });

  it("Attach Files… takes files for the next run; only names reach the panel", async () => {
    const api = await deerflow();
    const file = vscode.Uri.file(join(folderPath(), "README.md"));
    const count = await vscode.commands.executeCommand<number>("deerflow.attachFiles", [file]);
    assert.equal(count, 1);
    assert.deepEqual(api.session.pendingAttachments, [file.fsPath]);
    api.session.removeAttachment(0);
    assert.equal(api.session.pendingAttachments.length, 0);
  });

  it("Select Model picks a configured model (the environment's when none are configured)", async () => {
    const api = await deerflow();
    const name = process.env["OPENAI_MODEL"] ?? "default";
    assert.equal(await vscode.commands.executeCommand("deerflow.selectModel", name), name);
    assert.equal(api.session.model(), name);
  });

  it("Toggle Plan Mode flips plan mode and back", async () => {
    const api = await deerflow();
    const before = api.session.planMode;
    assert.equal(await vscode.commands.executeCommand("deerflow.togglePlanMode"), !before);
    assert.equal(api.session.planMode, !before);
    assert.equal(await vscode.commands.executeCommand("deerflow.togglePlanMode"), before);
  });

  it("Clear Viewed Images, Cancel Run and Open Thread Outputs act on the shown thread", async () => {
    const api = await deerflow();
    assert.ok(api.session.shownThreadId, "a thread is shown");
    assert.equal(await vscode.commands.executeCommand("deerflow.clearViewedImages"), true);
    assert.equal(await vscode.commands.executeCommand("deerflow.cancelRun"), false, "no run is active");
    const outputs = await vscode.commands.executeCommand<string | undefined>("deerflow.openThreadOutputs");
    if (outputs !== undefined) {
      assert.ok(outputs.startsWith(join(folderPath(), ".deerflow", "threads")), outputs);
      assert.ok(existsSync(outputs));
    }
  });

  it("Open Sandbox Terminal and Rebuild Sandbox Container on a local sandbox: a host terminal only with host commands allowed; no rebuild", async () => {
    // The test folder has no devcontainer.json: its sandbox is the host.
    const cfg = vscode.workspace.getConfiguration("deerflow");
    if (!vscode.workspace.isTrusted) {
      assert.equal(await vscode.commands.executeCommand("deerflow.openSandboxTerminal"), undefined);
      assert.equal(await vscode.commands.executeCommand("deerflow.rebuildSandbox"), false);
      return;
    }
    assert.equal(await vscode.commands.executeCommand("deerflow.openSandboxTerminal"), undefined, "host commands are off: no terminal");
    await cfg.update("allowHostCommands", true, vscode.ConfigurationTarget.Global);
    try {
      const options = await vscode.commands.executeCommand<vscode.TerminalOptions | undefined>("deerflow.openSandboxTerminal");
      assert.equal(options?.name, "DeerFlow Sandbox");
      assert.equal((options?.cwd as vscode.Uri | undefined)?.fsPath, folderPath());
      const opened = vscode.window.terminals.filter((t) => t.name === "DeerFlow Sandbox");
      assert.ok(opened.length > 0, "the terminal is open");
      for (const t of opened) t.dispose();
    } finally {
      await cfg.update("allowHostCommands", undefined, vscode.ConfigurationTarget.Global);
    }
    // Refused by the harness ("This folder has no dev container sandbox"): shown, not thrown.
    assert.equal(await vscode.commands.executeCommand("deerflow.rebuildSandbox"), undefined);
  });

  it("Show Logs, Select Workspace Folder and Restart Harness run", async () => {
    const api = await deerflow();
    await vscode.commands.executeCommand("deerflow.showLogs");
    assert.equal(await vscode.commands.executeCommand("deerflow.selectWorkspaceFolder"), folderPath());
    const before = api.harness.process!.pid;
    const pid = await vscode.commands.executeCommand<number>("deerflow.restartHarness");
    assert.ok(typeof pid === "number" && pid !== before, `a new harness process (${before} → ${pid})`);
  });
});
