/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import * as vscode from "vscode";
import { deerflow, EXTENSION_ID, harnessReady } from "./helpers.js";

describe("activation", () => {
  it("activates in the workspace extension host and starts the harness as a separate Node process", async () => {
    const api = await deerflow();
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.equal(ext.isActive, true);
    assert.equal(ext.extensionKind, vscode.ExtensionKind.Workspace);
    const pid = await harnessReady(api);
    assert.ok(pid > 0 && pid !== process.pid, `the harness runs in its own process (pid ${pid})`);
    const start = api.harness.process!;
    assert.match(start.version, /^\d+\.\d+\.\d+/);
  });

  it("runs the harness on the extension host's own Node (Node 24 in current VS Code)", async () => {
    const pid = await harnessReady(await deerflow());
    // The extension spawns the harness with process.execPath: whatever Node this VS Code runs its
    // extensions on (20 in code-server 4.100.3, 24 in 4.139.1), the harness and its SQLite run there.
    assert.equal(realpathSync(`/proc/${pid}/exe`), realpathSync(process.execPath), `the harness (pid ${pid}) runs ${process.execPath}, ${process.version}`);
  });

  it("keeps the harness database out of the workspace and SQLite out of the extension host", async () => {
    await deerflow();
    const loaded = Object.keys(require.cache);
    assert.ok(!loaded.some((p) => p.includes("better-sqlite3")), "the extension host never loads better-sqlite3");
  });

  it("declares limited support for untrusted workspaces", () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { capabilities: { untrustedWorkspaces: { supported: unknown } } };
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
  });
});
