/// <reference types="mocha" />
// Issue 13: the approval policy (`deerflow.approval.*`) says what the agent may do without asking,
// so only the user's (or the machine's) settings count. A workspace's .vscode/settings.json —
// a file the agent itself could write — is seen by VS Code but ignored by DeerFlow: neither
// approvalSettings() nor the harness/configure the host sends carries it; a user value does.
import * as assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { approvalSettings } from "../../../extension/host/settings.js";
import { deerflow, folderPath, harnessReady, next } from "./helpers.js";

describe("approval settings: user or machine scope only", () => {
  const cfg = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("deerflow");
  const settingsFile = (): string => join(folderPath(), ".vscode", "settings.json");
  let saved: string | undefined;
  let hadDir = true;

  before(() => {
    hadDir = existsSync(join(folderPath(), ".vscode"));
    saved = existsSync(settingsFile()) ? readFileSync(settingsFile(), "utf8") : undefined;
  });

  after(async () => {
    const changed = next(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration("deerflow.approval"), "the workspace settings restored");
    if (saved === undefined) rmSync(settingsFile(), { force: true });
    else writeFileSync(settingsFile(), saved);
    await changed;
    if (!hadDir) rmSync(join(folderPath(), ".vscode"), { recursive: true, force: true });
    await cfg().update("approval.shell", undefined, vscode.ConfigurationTarget.Global);
  });

  it("a workspace value is ignored: not in approvalSettings(), not sent to the harness", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const changed = next(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration("deerflow.approval.shell"), "VS Code reading .vscode/settings.json");
    const configured = next(api.harness.onDidConfigure, () => true, "harness/configure after the workspace settings changed");
    mkdirSync(join(folderPath(), ".vscode"), { recursive: true });
    writeFileSync(settingsFile(), JSON.stringify({
      "deerflow.approval.read": "auto",
      "deerflow.approval.write": "auto",
      "deerflow.approval.protected": "auto",
      "deerflow.approval.shell": "auto",
      "deerflow.approval.other": "auto",
    }, null, 2));
    await changed;
    // The settings are machine-scoped, so VS Code itself drops the workspace's values; DeerFlow
    // reads inspect() and takes only the user's (next test), whatever the workspace says.
    assert.equal(cfg().get("approval.shell"), "default", "the workspace value does not apply");
    assert.deepEqual(approvalSettings(cfg()), {}, "DeerFlow does not take it");
    const c = await configured;
    assert.equal(c.settings.approval, undefined, "the harness keeps its defaults (shell=ask, protected=ask on the host)");
  });

  it("a user (global) value is honoured, and still wins over the workspace's", async () => {
    const api = await deerflow();
    const configured = next(api.harness.onDidConfigure, (c) => c.settings.approval?.shell !== undefined, "harness/configure with the user's shell policy");
    await cfg().update("approval.shell", "deny", vscode.ConfigurationTarget.Global);
    const c = await configured;
    assert.deepEqual(c.settings.approval, { shell: "deny" });
    assert.deepEqual(approvalSettings(cfg()), { shell: "deny" });
    assert.equal(cfg().get("approval.shell"), "deny");
  });

  it("even a workspace value VS Code did report would be ignored (DeerFlow's own check on inspect())", () => {
    // Were the settings ever declared with a wider scope, inspect() would carry workspace values:
    // approvalSettings() takes globalValue (and remote/machine) only.
    const real = cfg();
    const widened: Pick<vscode.WorkspaceConfiguration, "inspect"> = {
      inspect: <T>(key: string) => {
        const i = real.inspect<T>(key);
        return i && { ...i, workspaceValue: "auto" as T, workspaceFolderValue: "auto" as T };
      },
    };
    assert.deepEqual(approvalSettings(widened), { shell: "deny" }, "the user's deny stands; the workspace's autos are not taken");
  });
});
