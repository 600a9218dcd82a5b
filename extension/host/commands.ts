/**
 * The palette commands, as a table of factories over the one context (rust-analyzer's style).
 * Each takes optional arguments so it can be driven programmatically (tests, keybindings with
 * args) without its QuickPick or dialog. A failure is shown once and logged, never thrown into
 * the command service.
 */
import { existsSync } from "node:fs";
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import { errorText } from "./harnessClient.js";
import { outputsDirOf } from "./panel/paths.js";
import { ApiKeys } from "./secrets.js";
import { apiKeyNames, modelChoices } from "./settings.js";

type Command = (ctx: Ctx) => (...args: unknown[]) => Promise<unknown>;

const commands: Record<string, Command> = {
  "deerflow.openPanel": (ctx) => () => ctx.panel.reveal(),

  "deerflow.newThread": (ctx) => async () => {
    const thread = await ctx.session.newThread();
    await ctx.panel.reveal();
    return thread.thread_id;
  },

  "deerflow.cancelRun": (ctx) => async () => {
    const cancelled = await ctx.session.cancel();
    if (!cancelled) void vscode.window.showInformationMessage("DeerFlow: no run is active on this thread.");
    return cancelled;
  },

  "deerflow.attachFiles": (ctx) => async (uris?: unknown) => {
    const given = Array.isArray(uris) ? uris.filter((u): u is vscode.Uri => u instanceof vscode.Uri) : undefined;
    await ctx.session.attachFiles(given);
    return ctx.session.pendingAttachments.length;
  },

  "deerflow.clearViewedImages": (ctx) => async () => {
    if (!ctx.session.shownThreadId) {
      void vscode.window.showInformationMessage("DeerFlow: open a thread first.");
      return false;
    }
    await ctx.session.clearViewedImages();
    return true;
  },

  "deerflow.selectModel": (ctx) => async (name?: unknown) => {
    const choices = modelChoices(ctx.settings());
    if (choices.length === 0) {
      const open = "Open Settings";
      const answer = await vscode.window.showWarningMessage("DeerFlow: no models are configured (deerflow.models, or OPENAI_BASE_URL and OPENAI_MODEL).", open);
      if (answer === open) await vscode.commands.executeCommand("workbench.action.openSettings", "deerflow.models");
      return undefined;
    }
    let picked = typeof name === "string" ? name : undefined;
    if (picked === undefined) {
      const current = ctx.session.model();
      const item = await vscode.window.showQuickPick(
        choices.map((c) => ({ label: c.label, description: c.name === current ? "current" : c.name !== c.label ? c.name : undefined, name: c.name })),
        { title: "DeerFlow: Select Model", placeHolder: "The model new runs use" },
      );
      picked = item?.name;
    }
    if (picked !== undefined) ctx.session.selectModel(picked);
    return picked;
  },

  "deerflow.setApiKey": (ctx) => async (name?: unknown, value?: unknown) => {
    let keyName = typeof name === "string" ? name : undefined;
    if (keyName === undefined) {
      const other = "$(edit) Another name…";
      const names = [...new Set([...apiKeyNames(ctx.settings()), ...ctx.keys.storedNames()])].sort();
      const pick = await vscode.window.showQuickPick([...names, other], {
        title: "DeerFlow: Set API Key",
        placeHolder: "Which key (a model's api_key_env)",
      });
      keyName = pick === other ? await vscode.window.showInputBox({ prompt: "Key name", validateInput: (v) => (ApiKeys.isValidName(v) ? undefined : "Letters, digits and _") }) : pick;
    }
    if (!keyName) return false;
    const secret =
      typeof value === "string"
        ? value
        : await vscode.window.showInputBox({ title: `DeerFlow: ${keyName}`, prompt: "The API key (stored in the editor's secret storage; empty removes it)", password: true, ignoreFocusOut: true });
    if (secret === undefined) return false;
    await ctx.keys.set(keyName, secret);
    await ctx.harness.configure();
    ctx.log.info(`API key ${keyName} ${secret === "" ? "removed" : "set"}.`);
    return true;
  },

  "deerflow.showLogs": (ctx) => () => {
    ctx.log.show(true);
    return Promise.resolve();
  },

  "deerflow.openThreadOutputs": (ctx) => async () => {
    const folder = await ctx.session.requireFolder();
    const threadId = ctx.session.shownThreadId;
    const dir = threadId ? outputsDirOf(folder.uri.fsPath, threadId) : undefined;
    if (!dir || !existsSync(dir)) {
      void vscode.window.showInformationMessage("DeerFlow: this thread has no outputs yet.");
      return undefined;
    }
    await vscode.commands.executeCommand("revealInExplorer", vscode.Uri.file(dir));
    return dir;
  },

  "deerflow.togglePlanMode": (ctx) => () => {
    const enabled = !ctx.session.planMode;
    ctx.session.setPlanMode(enabled);
    vscode.window.setStatusBarMessage(`DeerFlow: plan mode ${enabled ? "on" : "off"}`, 3000);
    return Promise.resolve(enabled);
  },

  "deerflow.selectWorkspaceFolder": (ctx) => async () => (await ctx.session.pickFolder())?.uri.fsPath,

  "deerflow.restartHarness": (ctx) => async () =>
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "DeerFlow: restarting the harness" }, async () => (await ctx.harness.restart()).pid),
};

export function registerCommands(ctx: Ctx): void {
  for (const [id, factory] of Object.entries(commands)) {
    const run = factory(ctx);
    ctx.extension.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await run(...args);
        } catch (err) {
          ctx.log.error(`${id}: ${errorText(err)}`);
          void vscode.window.showErrorMessage(`DeerFlow: ${errorText(err)}`);
          return undefined;
        }
      }),
    );
  }
}

/** For the tests: the ids registered here, to compare with package.json's contributions. */
export const COMMAND_IDS = Object.keys(commands);
