/**
 * The palette commands, as a table of factories over the one context (rust-analyzer's style).
 * Each takes optional arguments so it can be driven programmatically (tests, keybindings with
 * args) without its QuickPick or dialog. A failure is shown once and logged, never thrown into
 * the command service.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import { errorText } from "./harnessClient.js";
import { quietSandboxProgress } from "./notifications.js";
import { dockerExecCommand } from "./sandboxTerminal.js";
import { isConfigUnapproved } from "./devcontainerApproval.js";
import { ApiKeys } from "./secrets.js";
import { apiKeyNames } from "./settings.js";
import { clearRemoteTokenCommand, setRemoteTokenCommand } from "./remote/commands.js";
import { openFile } from "./panel/provider.js";
import { compactThreadCommand } from "./compact.js";
import { forgetMemoryCommand, openMemoryCommand } from "./memory.js";
import { addModelCommand } from "./addModel.js";
import { VSCODE_LM_PREFIX } from "../protocol/lm.js";

const TERMINAL_NAME = "DeerFlow Sandbox";
const UNTRUSTED_SANDBOX = "this workspace is not trusted, so it has no sandbox to open or rebuild (its devcontainer.json is not used). Trust the workspace first.";

type Command = (ctx: Ctx) => (...args: unknown[]) => Promise<unknown>;

const commands: Record<string, Command> = {
  "deerflow.openPanel": (ctx) => () => ctx.panel.reveal(),

  "deerflow.compactThread": compactThreadCommand,

  "deerflow.openMemory": openMemoryCommand,

  "deerflow.forgetMemory": forgetMemoryCommand,

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

  // The panel's Continue (issue 20): the next run on a thread whose last run used its turn budget.
  "deerflow.continueRun": (ctx) => async () => {
    const res = await ctx.session.continueRun();
    if (!res.ok) void vscode.window.showInformationMessage(`DeerFlow: ${res.reason}`);
    return res.ok ? res.runId : undefined;
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

  "deerflow.addModel": addModelCommand,

  "deerflow.selectModel": (ctx) => async (name?: unknown) => {
    // The editor's models as they are now (issue 30 item 1): right after the window opens the list
    // read at activation may predate the providers' registration.
    if (!ctx.harness.remote) await ctx.lmModels.refresh();
    // `{ vscodeLm: true }`: the panel's "Use VS Code's models" offers only the editor's own.
    const onlyLm = typeof name === "object" && name !== null && (name as { vscodeLm?: unknown }).vscodeLm === true;
    // Configured models first, then the editor's own (vscode.lm, issue 25).
    const choices = ctx.modelChoices().filter((c) => !onlyLm || c.name.startsWith(VSCODE_LM_PREFIX));
    if (choices.length === 0 && ctx.harness.remote) {
      void vscode.window.showWarningMessage(`DeerFlow: the remote harness at ${ctx.harness.remote.shown} serves no models (its config.yaml or --model names them).`);
      return undefined;
    }
    if (choices.length === 0) {
      const add = "Add Model…";
      const answer = await vscode.window.showInformationMessage(
        onlyLm
          ? "DeerFlow: VS Code offers no language models right now (an extension such as Copilot provides them). Add a model on an OpenAI-compatible endpoint instead?"
          : "DeerFlow has no model yet. Add one on an OpenAI-compatible endpoint (OpenAI, a gateway, a local server); models VS Code offers (Copilot's, for example) are listed here once an extension provides them.",
        add,
      );
      if (answer === add) return vscode.commands.executeCommand<string | undefined>("deerflow.addModel");
      return undefined;
    }
    let picked = typeof name === "string" ? name : undefined;
    if (picked === undefined) {
      const current = ctx.session.model();
      const add = { label: "$(add) Add Model…", description: "an OpenAI-compatible endpoint", name: "" };
      const item = await vscode.window.showQuickPick(
        [...choices.map((c) => ({ label: c.label, description: c.name === current ? "current" : c.name !== c.label ? c.name : undefined, name: c.name })), ...(ctx.harness.remote ? [] : [add])],
        { title: "DeerFlow: Select Model", placeHolder: "The model new runs use" },
      );
      if (item === add) return vscode.commands.executeCommand<string | undefined>("deerflow.addModel");
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

  "deerflow.showMcpLogs": (ctx) => async () => {
    // The list as it is now, without starting anything: a log is wanted most when a server failed.
    await ctx.mcp.list(false);
    const servers = ctx.mcp.known;
    if (servers.length === 0) {
      void vscode.window.showInformationMessage("DeerFlow: no MCP server is configured for this workspace (see the README's MCP servers).");
      return undefined;
    }
    const pick = servers.length === 1
      ? servers[0]
      : (await vscode.window.showQuickPick(servers.map((s) => ({ label: s.name, description: `${s.state} · ${s.source.label}`, server: s })), { title: "DeerFlow: Show MCP Logs", placeHolder: "The MCP server whose log to open" }))?.server;
    if (pick) await ctx.mcp.showLog(pick.name);
    return pick?.name;
  },

  "deerflow.openThreadOutputs": (ctx) => async () => {
    const folder = await ctx.session.requireFolder();
    const threadId = ctx.session.shownThreadId;
    const outputs = threadId ? await ctx.files.outputs(folder.uri.fsPath, threadId) : undefined;
    if (!outputs || !existsSync(outputs.dir) || (ctx.files.downloads(folder.uri.fsPath) && outputs.files.length === 0)) {
      void vscode.window.showInformationMessage("DeerFlow: this thread has no outputs yet.");
      return undefined;
    }
    if (ctx.files.downloads(folder.uri.fsPath)) {
      // Downloaded from a remote harness into the extension's storage, which the Explorer does not show: pick one to open.
      const pick = outputs.files.length === 1
        ? outputs.files[0]
        : (await vscode.window.showQuickPick(outputs.files.map((f) => ({ label: basename(f), description: f.slice(outputs.dir.length + 1), path: f })), { title: "DeerFlow: Open Thread Outputs (downloaded from the remote harness)" }))?.path;
      if (pick) await openFile(vscode.Uri.file(pick), true);
      return outputs.dir;
    }
    await vscode.commands.executeCommand("revealInExplorer", vscode.Uri.file(outputs.dir));
    return outputs.dir;
  },

  "deerflow.setRemoteToken": setRemoteTokenCommand,

  "deerflow.clearRemoteToken": clearRemoteTokenCommand,

  "deerflow.togglePlanMode": (ctx) => () => {
    const enabled = !ctx.session.planMode;
    ctx.session.setPlanMode(enabled);
    vscode.window.setStatusBarMessage(`DeerFlow: plan mode ${enabled ? "on" : "off"}`, 3000);
    return Promise.resolve(enabled);
  },

  "deerflow.selectWorkspaceFolder": (ctx) => async () => (await ctx.session.pickFolder())?.uri.fsPath,

  "deerflow.openSandboxTerminal": (ctx) => async () => {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showInformationMessage(`DeerFlow: ${UNTRUSTED_SANDBOX}`);
      return undefined;
    }
    if (ctx.harness.remote) {
      void vscode.window.showInformationMessage(`DeerFlow: the sandbox runs on the remote harness's machine (${ctx.harness.remote.shown}); open a terminal there.`);
      return undefined;
    }
    const folder = await ctx.session.requireFolder();
    const threadId = ctx.session.shownThreadId;
    // A dev container that is not running is brought up first (its progress comes as sandbox/status).
    const info = await withApproval(ctx, folder.uri.fsPath, () =>
      vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "DeerFlow: preparing the sandbox terminal" }, () =>
        ctx.harness.request("sandbox/info", { workspaceFolder: folder.uri.fsPath, ...(threadId ? { threadId } : {}) }),
      ),
    );
    if (info === undefined) return undefined;
    if (info.kind === "devcontainer") {
      const options: vscode.TerminalOptions = { name: TERMINAL_NAME, ...dockerExecCommand(info) };
      vscode.window.createTerminal(options).show();
      return options;
    }
    // A local sandbox is the host itself: a shell there only when the user allowed host commands.
    if (!ctx.settings().sandbox.allow_host_commands) {
      void vscode.window.showInformationMessage(
        "DeerFlow: this folder's sandbox is the host (no dev container), and host commands are off (setting deerflow.allowHostCommands), so there is no sandbox terminal to open.",
      );
      return undefined;
    }
    const options: vscode.TerminalOptions = { name: TERMINAL_NAME, cwd: folder.uri };
    vscode.window.createTerminal(options).show();
    return options;
  },

  "deerflow.rebuildSandbox": (ctx) => async () => {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showInformationMessage(`DeerFlow: ${UNTRUSTED_SANDBOX}`);
      return false;
    }
    const folder = await ctx.session.requireFolder();
    const rebuilt = await withApproval(ctx, folder.uri.fsPath, () => rebuild(ctx, folder.uri.fsPath));
    if (rebuilt === undefined) return false;
    void vscode.window.showInformationMessage("DeerFlow: the sandbox container was rebuilt.");
    return true;
  },

  "deerflow.restartHarness": (ctx) => async () =>
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "DeerFlow: restarting the harness" }, async () => (await ctx.harness.restart()).pid),
};

/**
 * A request that brings the dev container up, asked again once the user allowed a configuration
 * the harness refused as unapproved; undefined when they did not.
 */
async function withApproval<T>(ctx: Ctx, workspaceFolder: string, request: () => Thenable<T>): Promise<T | undefined> {
  try {
    return await request();
  } catch (err) {
    if (!isConfigUnapproved(err)) throw err;
    if (!(await ctx.approvals.ask(workspaceFolder))) return undefined;
    return await request();
  }
}

async function rebuild(ctx: Ctx, workspaceFolder: string): Promise<null> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "DeerFlow: rebuilding the sandbox container" }, async (progress) => {
    // The bring-up lines of this folder, here rather than in a second notification.
    const lines = ctx.harness.onNotification("sandbox/status", (p) => {
      if (p.workspaceFolder === workspaceFolder && p.status === "starting" && p.detail) progress.report({ message: p.detail });
    });
    const quiet = quietSandboxProgress(workspaceFolder);
    try {
      return await ctx.harness.request("sandbox/rebuild", { workspaceFolder });
    } finally {
      lines.dispose();
      quiet.dispose();
    }
  });
}

export function registerCommands(ctx: Ctx): void {
  for (const [id, factory] of Object.entries(commands)) {
    const run = factory(ctx);
    ctx.extension.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await run(...args);
        } catch (err) {
          ctx.log.error(`${id}: ${errorText(err)}`);
          ctx.commandErrors.fire({ command: id, message: errorText(err) });
          void vscode.window.showErrorMessage(`DeerFlow: ${errorText(err)}`);
          return undefined;
        }
      }),
    );
  }
}

/** For the tests: the ids registered here, to compare with package.json's contributions. */
export const COMMAND_IDS = Object.keys(commands);
