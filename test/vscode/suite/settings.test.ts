/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { deerflow, folderPath, harnessReady, next } from "./helpers.js";
import { runLimitSettings } from "../../../extension/host/settings.js";

describe("settings", () => {
  const cfg = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("deerflow");

  after(async () => {
    for (const key of ["models", "defaultModel", "allowHostCommands", "subagents.enabled"]) await cfg().update(key, undefined, vscode.ConfigurationTarget.Global);
  });

  it("reads the defaults", async () => {
    await deerflow();
    assert.deepEqual(cfg().get("models"), []);
    assert.equal(cfg().get("sandboxProvider"), "auto");
    assert.equal(cfg().get("allowHostCommands"), false);
  });

  it("a change reaches the harness through harness/configure, and the harness applies it", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const configured = next(api.harness.onDidConfigure, (c) => c.settings.default_model === "two" && c.settings.models.length === 2, "harness/configure with the new models");
    await cfg().update("models", [
      { name: "one", model: "model-one", base_url: "http://127.0.0.1:9/v1", api_key_env: "ONE_KEY" },
      { name: "two", model: "model-two", supports_vision: true },
    ], vscode.ConfigurationTarget.Global);
    await cfg().update("defaultModel", "two", vscode.ConfigurationTarget.Global);
    const c = await configured;
    assert.deepEqual(c.settings.models.map((m) => m.name), ["one", "two"]);
    assert.equal(c.settings.workspace_trusted, vscode.workspace.isTrusted);
    // The harness holds the new whitelist: a model outside it is refused, naming the configured ones.
    const thread = await api.harness.request("threads/create", { workspaceFolder: folderPath() });
    await assert.rejects(
      api.harness.request("runs/start", { workspaceFolder: folderPath(), threadId: thread.thread_id, prompt: "hi", model: "three" }),
      (err: Error & { code?: string }) => {
        assert.match(err.message, /one/);
        assert.equal(err.code, "unknown_model");
        return true;
      },
    );
    assert.equal(api.session.model(), "two", "the picker follows the default model");
  });

  it("allowHostCommands is passed as the sandbox policy", async () => {
    const api = await deerflow();
    const configured = next(api.harness.onDidConfigure, (c) => c.settings.sandbox.allow_host_commands, "harness/configure with host commands on");
    await cfg().update("allowHostCommands", true, vscode.ConfigurationTarget.Global);
    await configured;
  });

  it("subagents.enabled reaches the harness, and off again", async () => {
    const api = await deerflow();
    await harnessReady(api);
    assert.equal(cfg().get("subagents.enabled"), false);
    const on = next(api.harness.onDidConfigure, (c) => c.settings.subagents?.enabled === true, "harness/configure with subagents on");
    await cfg().update("subagents.enabled", true, vscode.ConfigurationTarget.Global);
    await on;
    const off = next(api.harness.onDidConfigure, (c) => c.settings.subagents === undefined, "harness/configure with subagents off");
    await cfg().update("subagents.enabled", undefined, vscode.ConfigurationTarget.Global);
    await off;
  });

  it("maxTokensPerRun reaches the harness as its token budget; 0 is no budget", async () => {
    const api = await deerflow();
    await harnessReady(api);
    assert.equal(cfg().get("maxTokensPerRun"), 0);
    const on = next(api.harness.onDidConfigure, (c) => c.settings.token_budget?.max_tokens_per_run === 5000, "harness/configure with a 5,000-token budget");
    await cfg().update("maxTokensPerRun", 5000, vscode.ConfigurationTarget.Global);
    await on;
    const off = next(api.harness.onDidConfigure, (c) => c.settings.token_budget === undefined, "harness/configure without a budget");
    await cfg().update("maxTokensPerRun", 0, vscode.ConfigurationTarget.Global);
    await off;
    await cfg().update("maxTokensPerRun", undefined, vscode.ConfigurationTarget.Global);
  });

  it("a workspace cannot switch subagents on nor lift the budgets: only user/machine values count", async () => {
    await cfg().update("maxTokensPerRun", 5000, vscode.ConfigurationTarget.Global);
    // VS Code keeps machine-scoped settings out of workspace files; were one reported anyway,
    // runLimitSettings() takes the user's (and remote/machine) values only.
    const real = cfg();
    const fromWorkspace: Record<string, unknown> = { "subagents.enabled": true, maxTokensPerRun: 0, maxTurnsPerRun: 100_000 };
    const widened: Pick<vscode.WorkspaceConfiguration, "inspect"> = {
      inspect: <T>(key: string) => {
        const i = real.inspect<T>(key);
        return i && { ...i, workspaceValue: fromWorkspace[key] as T, workspaceFolderValue: fromWorkspace[key] as T };
      },
    };
    // The turn budget is package.json's default (200), not the workspace's 100000.
    assert.deepEqual(runLimitSettings(widened), { token_budget: { max_tokens_per_run: 5000 }, max_turns: 200 });
    await cfg().update("maxTokensPerRun", undefined, vscode.ConfigurationTarget.Global);
  });
});
