/// <reference types="mocha" />
// Issue 21 item 7: which of the user's models reads a thread (`deerflow.defaultModel`), which one
// writes its titles (`deerflow.titleModel`), and when and how much of it is summarized
// (`deerflow.summarization.*`) are the user's choices. A workspace's .vscode/settings.json — a file
// the agent itself could write — is seen by VS Code but ignored by DeerFlow: neither the settings
// readers nor the harness/configure the host sends carry it; a user value does.
import * as assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { modelChoiceSettings, summarizationSettings } from "../../../extension/host/settings.js";
import { deerflow, folderPath, harnessReady, next } from "./helpers.js";

const KEYS = ["defaultModel", "titleModel", "summarization.enabled", "summarization.triggerTokens", "summarization.keepMessages"];
const DEFAULT_SUMMARIZATION = { enabled: true, trigger_tokens: 32000, keep_messages: 10 };

describe("model choice and summarization settings: user or machine scope only", () => {
  const cfg = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("deerflow");
  const settingsFile = (): string => join(folderPath(), ".vscode", "settings.json");
  let saved: string | undefined;
  let hadDir = true;

  before(() => {
    hadDir = existsSync(join(folderPath(), ".vscode"));
    saved = existsSync(settingsFile()) ? readFileSync(settingsFile(), "utf8") : undefined;
  });

  after(async () => {
    const changed = next(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration("deerflow.defaultModel"), "the workspace settings restored");
    if (saved === undefined) rmSync(settingsFile(), { force: true });
    else writeFileSync(settingsFile(), saved);
    await changed;
    if (!hadDir) rmSync(join(folderPath(), ".vscode"), { recursive: true, force: true });
    for (const key of KEYS) await cfg().update(key, undefined, vscode.ConfigurationTarget.Global);
  });

  it("a workspace's values are ignored: not read, not sent to the harness", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const changed = next(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration("deerflow.defaultModel"), "VS Code reading .vscode/settings.json");
    const configured = next(api.harness.onDidConfigure, () => true, "harness/configure after the workspace settings changed");
    mkdirSync(join(folderPath(), ".vscode"), { recursive: true });
    writeFileSync(settingsFile(), JSON.stringify({
      "deerflow.defaultModel": "workspace-model",
      "deerflow.titleModel": "workspace-title-model",
      "deerflow.summarization.enabled": false,
      "deerflow.summarization.triggerTokens": 1,
      "deerflow.summarization.keepMessages": 1,
    }, null, 2));
    await changed;
    // Machine-scoped: VS Code itself does not apply the workspace's values; DeerFlow reads inspect()
    // and takes only the user's (next tests), whatever the workspace says.
    assert.equal(cfg().get("defaultModel"), "", "the workspace value does not apply");
    assert.deepEqual(modelChoiceSettings(cfg()), {});
    assert.deepEqual(summarizationSettings(cfg()), DEFAULT_SUMMARIZATION);
    const c = await configured;
    assert.equal(c.settings.default_model, undefined);
    assert.equal(c.settings.title_model, undefined);
    assert.deepEqual(c.settings.summarization, DEFAULT_SUMMARIZATION);
  });

  it("user (global) values are honoured, and still win over the workspace's", async () => {
    const api = await deerflow();
    const configured = next(
      api.harness.onDidConfigure,
      (c) => c.settings.default_model === "user-model" && c.settings.title_model === "user-title-model" && c.settings.summarization?.trigger_tokens === 5000,
      "harness/configure with the user's model choices and summarization",
    );
    await cfg().update("defaultModel", "user-model", vscode.ConfigurationTarget.Global);
    await cfg().update("titleModel", "user-title-model", vscode.ConfigurationTarget.Global);
    await cfg().update("summarization.triggerTokens", 5000, vscode.ConfigurationTarget.Global);
    const c = await configured;
    assert.deepEqual(c.settings.summarization, { ...DEFAULT_SUMMARIZATION, trigger_tokens: 5000 });
    assert.deepEqual(modelChoiceSettings(cfg()), { default_model: "user-model", title_model: "user-title-model" });
  });

  it("even a workspace value VS Code did report would be ignored (DeerFlow's own check on inspect())", () => {
    // Were the settings ever declared with a wider scope, inspect() would carry workspace values.
    const real = cfg();
    const fromWorkspace: Record<string, unknown> = {
      defaultModel: "workspace-model",
      titleModel: "workspace-title-model",
      "summarization.enabled": false,
      "summarization.triggerTokens": 1,
      "summarization.keepMessages": 1,
    };
    const widened: Pick<vscode.WorkspaceConfiguration, "inspect"> = {
      inspect: <T>(key: string) => {
        const i = real.inspect<T>(key);
        return i && { ...i, workspaceValue: fromWorkspace[key] as T, workspaceFolderValue: fromWorkspace[key] as T };
      },
    };
    assert.deepEqual(modelChoiceSettings(widened), { default_model: "user-model", title_model: "user-title-model" });
    assert.deepEqual(summarizationSettings(widened), { ...DEFAULT_SUMMARIZATION, trigger_tokens: 5000 });
  });
});
