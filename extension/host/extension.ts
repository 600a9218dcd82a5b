/**
 * Activation, kept thin: build the one context, wire events, start the harness in the
 * background (with progress), surface a failure once. The extension host never opens SQLite
 * or runs an agent: that is the harness process's job (harnessClient.ts).
 */
import * as vscode from "vscode";
import { registerCommands } from "./commands.js";
import { createCtx, type CommandError, type Ctx } from "./context.js";
import { errorText, type HarnessClient } from "./harnessClient.js";
import { registerRunNotifications, registerSandboxProgress } from "./notifications.js";
import type { PanelProvider } from "./panel/provider.js";
import type { ThreadSession } from "./panel/threadSession.js";
import { affectsSettings, readSettings } from "./settings.js";
import { createRunStatusItem } from "./statusBar.js";
import { registerChatParticipant } from "./chat/participant.js";
import { createRemoteStatusItem } from "./remote/statusItem.js";
import { URL_SETTING } from "./remote/target.js";

/** Returned from activate() in test mode only: what the extension-host tests look at. */
export interface DeerFlowTestApi {
  harness: HarnessClient;
  session: ThreadSession;
  hasApiKey(name: string): Promise<boolean>;
  /** globalState and workspaceState as JSON, to check no key ever lands there. */
  storedState(): string;
  logUri: vscode.Uri;
  log: vscode.LogOutputChannel;
  /** The panel: whether it is on screen and loaded, and its actions' failures. */
  panel: Pick<PanelProvider, "visible" | "ready" | "onDidBecomeReady" | "onDidFail">;
  /** A command failed (it was shown and logged, and returned undefined to its caller). */
  onCommandError: vscode.Event<CommandError>;
}

let current: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<DeerFlowTestApi | undefined> {
  const log = vscode.window.createOutputChannel("DeerFlow", { log: true });
  context.subscriptions.push(log);
  try {
    await vscode.workspace.fs.createDirectory(context.globalStorageUri);
    const ctx = createCtx(context, log);
    current = ctx;
    registerCommands(ctx);
    wire(ctx);
    void startHarness(ctx);
    return context.extensionMode === vscode.ExtensionMode.Test ? testApi(ctx) : undefined;
  } catch (err) {
    // Surfaced once, here; VS Code would add its own generic toast if we rethrew.
    log.error(`Activation failed: ${errorText(err)}`);
    void showWithLogs(`DeerFlow could not start: ${errorText(err)}`, log);
    return undefined;
  }
}

/** Called before context.subscriptions are disposed. */
export async function deactivate(): Promise<void> {
  const ctx = current;
  current = undefined;
  if (!ctx) return;
  // A run in flight must survive a window reload ("reload mid-run, the run keeps streaming");
  // a remote harness runs it whether or not this window is connected.
  if (ctx.runs.count > 0) ctx.harness.leaveRunning();
  else await ctx.harness.stop();
}

function wire(ctx: Ctx): void {
  const { extension, harness, log, session } = ctx;
  const reconfigure = (why: string): void => {
    void harness.configure().then(
      () => session.refresh(),
      (err: unknown) => log.warn(`Configuring the harness after ${why}: ${errorText(err)}`),
    );
  };
  extension.subscriptions.push(
    harness.onNotification("log/message", (m) => log[m.level](m.message)),
    harness.onDidFail((message) => {
      const refused = harness.connectionStatus.kind === "remote" && harness.connectionStatus.state === "unauthorized";
      void showWithLogs(message, log, refused ? SET_TOKEN : "Restart Harness");
    }),
    ...wireRemote(ctx),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!affectsSettings(e)) return;
      for (const problem of readSettings(vscode.workspace.isTrusted).problems) log.warn(problem);
      reconfigure("a settings change");
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => reconfigure("workspace trust")),
    ctx.keys.onDidChange(() => reconfigure("an API key change")),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      harness.remapFolders();
      void session.refresh();
    }),
    createRunStatusItem(ctx.runs, ctx.waits),
    ...registerChatParticipant(ctx),
    registerSandboxProgress(harness),
    registerRunNotifications({
      harness,
      approvals: ctx.approvals,
      log,
      showing: (threadId) => ctx.panel.visible && session.shownThreadId === threadId,
      openPanel: () => ctx.panel.reveal(),
      openThread: (threadId) => openThread(ctx, threadId),
    }),
  );
}

const SET_TOKEN = "Set Remote Harness Token";

/**
 * A remote harness (issue 26 item 4): the URL setting or the token moves the client onto another
 * target; the panel then shows that harness's threads and models. An unreachable server is said
 * once per outage (the status bar and the log follow each retry).
 */
function wireRemote(ctx: Ctx): vscode.Disposable[] {
  const { harness, log, session } = ctx;
  const retarget = (): void => void harness.retarget().catch((err: unknown) => log.warn(`Switching harness: ${errorText(err)}`));
  return [
    createRemoteStatusItem(harness),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`deerflow.${URL_SETTING}`)) retarget();
    }),
    ctx.tokens.onDidChange(retarget),
    harness.onDidRetarget(() => session.reload()),
    harness.onDidStart(() => {
      // The picker lists the remote harness's models, known once it answered harness/initialize.
      if (harness.remote) void session.refresh();
    }),
    harness.onDidChangeConnection((c) => {
      if (c.kind === "remote" && c.state === "unreachable" && c.attempt === 1) {
        void vscode.window.showWarningMessage(`DeerFlow: ${c.message} Retrying with backoff until it answers (see the status bar).`);
      }
      if (c.kind === "remote" && c.state === "connected") log.info(`Connected to the remote harness at ${c.shown}.`);
    }),
  ];
}

/** Shows the panel (waiting for its document to load) on `threadId`. */
async function openThread(ctx: Ctx, threadId: string): Promise<void> {
  const loaded = ctx.panel.ready
    ? Promise.resolve()
    : new Promise<void>((resolve) => {
        const sub = ctx.panel.onDidBecomeReady(() => {
          sub.dispose();
          resolve();
        });
      });
  await ctx.panel.reveal();
  await loaded;
  if (ctx.session.shownThreadId !== threadId) await ctx.session.selectThread(threadId);
}

async function startHarness(ctx: Ctx): Promise<void> {
  for (const problem of readSettings(vscode.workspace.isTrusted).problems) ctx.log.warn(problem);
  try {
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "DeerFlow: starting the harness" }, () => ctx.harness.start());
  } catch {
    // onDidFail has shown it.
  }
}

async function showWithLogs(message: string, log: vscode.LogOutputChannel, ...extra: string[]): Promise<void> {
  const logs = "Show Logs";
  const choice = await vscode.window.showErrorMessage(message, logs, ...extra);
  if (choice === logs) log.show(true);
  else if (choice === "Restart Harness") await vscode.commands.executeCommand("deerflow.restartHarness");
  else if (choice === SET_TOKEN) await vscode.commands.executeCommand("deerflow.setRemoteToken");
}

function testApi(ctx: Ctx): DeerFlowTestApi {
  const dump = (m: vscode.Memento): Record<string, unknown> => Object.fromEntries(m.keys().map((k) => [k, m.get(k)]));
  return {
    harness: ctx.harness,
    session: ctx.session,
    hasApiKey: (name) => ctx.keys.has(name),
    storedState: () => JSON.stringify({ global: dump(ctx.extension.globalState), workspace: dump(ctx.extension.workspaceState) }),
    logUri: ctx.extension.logUri,
    log: ctx.log,
    panel: ctx.panel,
    onCommandError: ctx.commandErrors.event,
  };
}
