/**
 * The one context object (rust-analyzer's `Ctx`): everything activation builds, in the order it
 * depends on itself, each disposable pushed to `context.subscriptions` the moment it exists.
 * Commands, the panel and the tests all reach the extension through this.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
import * as vscode from "vscode";
import { HarnessClient } from "./harnessClient.js";
import { DevContainerApprovals } from "./devcontainerApproval.js";
import { PanelSkills } from "./panel/skills.js";
import { PanelMcp } from "./panel/mcp.js";
import { PanelProvider, PANEL_VIEW_ID } from "./panel/provider.js";
import { ThreadSession } from "./panel/threadSession.js";
import { ApprovalWaits } from "./review/approvalWaits.js";
import { PanelReview } from "./review/panelReview.js";
import { ReviewDocuments } from "./review/reviewDocuments.js";
import { RunTracker } from "./runTracker.js";
import { ApiKeys } from "./secrets.js";
import { apiKeyNames, modelChoices, readSettings } from "./settings.js";
import type { HarnessSettings } from "../protocol/rpc.js";
import { LmModels } from "./lm/models.js";
import { serveLanguageModels } from "./lm/serve.js";
import type { ModelChoice } from "../protocol/webview.js";
import { ThreadFiles } from "./remote/downloads.js";
import { readTarget, RemoteTokens } from "./remote/target.js";

export interface CommandError {
  command: string;
  message: string;
}

export interface Ctx {
  readonly extension: vscode.ExtensionContext;
  readonly log: vscode.LogOutputChannel;
  readonly harness: HarnessClient;
  readonly keys: ApiKeys;
  readonly runs: RunTracker;
  readonly session: ThreadSession;
  readonly panel: PanelProvider;
  /** Threads waiting on the user's approval of tool calls (the status bar's "needs approval"). */
  readonly waits: ApprovalWaits;
  /** "Show Config" / "Allow" when a dev container configuration is not approved yet. */
  readonly approvals: DevContainerApprovals;
  /**
   * A command failed: registerCommands shows and logs it, and returns undefined to its caller
   * (VS Code would add a second, generic toast if it threw). Tests fail on it.
   */
  readonly commandErrors: vscode.EventEmitter<CommandError>;
  /** Current settings (read afresh; cheap). */
  settings(): HarnessSettings;
  /** The vscode.lm models the picker offers beside the configured ones (issue 25). */
  readonly lmModels: LmModels;
  /** The folder's MCP servers as the panel lists them (issue 23; Show MCP Logs). */
  readonly mcp: PanelMcp;
  /** Why sandbox commands are off for `folder`, if they are. */
  restriction(folder: vscode.WorkspaceFolder | undefined): string | undefined;
  /** What the model picker offers: the configured models and vscode.lm's, or a remote harness's own. */
  modelChoices(): ModelChoice[];
  /** Remote harness tokens (SecretStorage, one per server). */
  readonly tokens: RemoteTokens;
  /** A thread's files to open: the file itself, or a copy downloaded from a remote harness. */
  readonly files: ThreadFiles;
}

export function createCtx(extension: vscode.ExtensionContext, log: vscode.LogOutputChannel): Ctx {
  const own = <T extends vscode.Disposable>(d: T): T => {
    extension.subscriptions.push(d);
    return d;
  };
  const settings = (): HarnessSettings => readSettings(vscode.workspace.isTrusted).settings;
  const keys = new ApiKeys(extension.secrets, extension.globalState);
  const tokens = new RemoteTokens(extension.secrets);
  const harness = own(
    new HarnessClient({
      serverModule: vscode.Uri.joinPath(extension.extensionUri, "dist", "server.js").fsPath,
      dataDir: extension.globalStorageUri.fsPath,
      log,
      configuration: async () => {
        const current = settings();
        return { settings: current, apiKeys: await keys.collect(apiKeyNames(current)) };
      },
      target: async () => {
        const { target, problem } = readTarget();
        if (problem) throw new Error(problem);
        return target.kind === "remote" ? { url: target.url, shown: target.shown, token: await tokens.get(target.url) } : undefined;
      },
      localFolders: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    }),
  );
  const runs = own(new RunTracker());
  // vscode.lm models: listed for the picker, and served to the harness over its connection.
  const lmModels = own(new LmModels(log));
  own(serveLanguageModels(harness, log));
  // A remote harness has its own sandbox and settings: this window's would only mislead.
  const restriction = (folder: vscode.WorkspaceFolder | undefined): string | undefined => (harness.remote ? undefined : sandboxRestriction(settings(), folder));
  const choices = (): ModelChoice[] => {
    const remote = harness.remote;
    if (remote) return remote.info.models.map((m) => ({ name: m.name, label: m.display_name ?? m.name, supports_vision: m.supports_vision }));
    const stored = new Set(keys.storedNames());
    return [...modelChoices(settings(), process.env, (name) => stored.has(name)), ...lmModels.choices()];
  };
  const session = own(
    new ThreadSession({
      harness,
      log,
      memento: extension.workspaceState,
      runs,
      models: choices,
      defaultModel: () => (harness.remote ? harness.remote.info.default_model : settings().default_model),
      restriction: (folder) => Promise.resolve(restriction(folder)),
    }),
  );
  const waits = own(new ApprovalWaits(harness));
  const docs = own(new ReviewDocuments());
  const review = new PanelReview({ harness, session, runs, waits, docs, log });
  const mcp = new PanelMcp(harness, () => session.requireFolder());
  const files = new ThreadFiles(harness, extension.globalStorageUri.fsPath);
  const panel = own(new PanelProvider(extension.extensionUri, session, log, review, new PanelSkills(harness, () => session.requireFolder()), mcp, files));
  own(vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, panel));
  own(panel.watchSources(extension.globalStorageUri.fsPath, homedir()));
  const approvals = new DevContainerApprovals(harness, log);
  const commandErrors = own(new vscode.EventEmitter<CommandError>());
  own(lmModels.onDidChange(() => void session.refresh()));
  return { extension, log, harness, keys, runs, session, panel, waits, approvals, commandErrors, settings, restriction, lmModels, mcp, modelChoices: choices, tokens, files };
}

/**
 * The panel's restriction line. The harness enforces these; this only explains them. Local
 * sandbox = `local`, or `auto` without a dev container configuration (or already inside one).
 */
function sandboxRestriction(settings: HarnessSettings, folder: vscode.WorkspaceFolder | undefined): string | undefined {
  if (!settings.workspace_trusted) {
    return "This workspace is not trusted, so the agent runs no commands and uses no long-term memory (file tools still work). Trust the workspace to allow them.";
  }
  if (settings.sandbox.allow_host_commands || !folder) return undefined;
  const hasDevContainer =
    existsSync(join(folder.uri.fsPath, ".devcontainer", "devcontainer.json")) || existsSync(join(folder.uri.fsPath, ".devcontainer.json"));
  const insideContainer = Boolean(process.env["REMOTE_CONTAINERS"]) || existsSync("/.dockerenv");
  const local = settings.sandbox.provider === "local" || (settings.sandbox.provider === "auto" && (!hasDevContainer || insideContainer));
  return local ? "Shell commands on the host are off (setting deerflow.allowHostCommands); file tools still work." : undefined;
}
