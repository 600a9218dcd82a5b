/**
 * The DeerFlow side panel: a webview view in the "DeerFlow" activity-bar container.
 *
 * This file owns the view's lifecycle and the message boundary only: every WebviewToHost message
 * is parsed (messages.ts) before anything acts on it, then dispatched to the ThreadSession.
 * No retainContextWhenHidden: a hidden view is dropped and replays from its last seq on `ready`.
 */
import { join } from "node:path";
import * as vscode from "vscode";
import type { HostToWebview, PanelMcpServer, PanelSkill, WebviewToHost } from "../../protocol/webview.js";
import { localResourceRoots, panelHtml } from "./html.js";
import { parseWebviewMessage } from "./messages.js";
import type { ThreadFiles } from "../remote/downloads.js";
import type { ThreadSession } from "./threadSession.js";
import type { PanelReview } from "../review/panelReview.js";
import type { PanelSkills } from "./skills.js";
import type { PanelMcp } from "./mcp.js";

export const PANEL_VIEW_ID = "deerflow.panel";

/**
 * Images open in VS Code's image preview, everything else in a text editor: vscode.open picks. A
 * copy downloaded from a remote harness is marked read-only for the session (editing it would
 * change nothing on the server).
 */
export async function openFile(uri: vscode.Uri, downloaded: boolean): Promise<void> {
  await vscode.commands.executeCommand("vscode.open", uri);
  if (downloaded) await Promise.resolve(vscode.commands.executeCommand("workbench.action.files.setActiveEditorReadonlyInSession")).catch(() => undefined);
}

export class PanelProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private viewDisposables: vscode.Disposable[] = [];
  /** The current view's document was answered its `ready` and has not been hidden since. */
  private loaded = false;
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  /** The view's document said `ready` and was answered (threads, status, the shown thread). */
  readonly onDidBecomeReady = this.readyEmitter.event;
  private readonly failEmitter = new vscode.EventEmitter<string>();
  /** The current view's poster (skills lists go straight to it). */
  private post: (msg: HostToWebview) => void = () => undefined;
  /** A panel message's action failed (shown in the panel and logged); its message. */
  readonly onDidFail = this.failEmitter.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly session: ThreadSession,
    private readonly log: vscode.LogOutputChannel,
    private readonly review: PanelReview,
    private readonly skills: PanelSkills,
    private readonly mcp: PanelMcp,
    private readonly files: ThreadFiles,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Visible, and its document loaded and was answered (see onDidBecomeReady). */
  get ready(): boolean {
    return this.loaded && this.visible;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.disposeView();
    this.view = view;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: localResourceRoots(this.extensionUri) };
    view.webview.html = panelHtml(view.webview, this.extensionUri);
    // The document takes a while to load; the thread is read meanwhile (ThreadSession.prefetch).
    this.session.prefetch();
    const post = (msg: HostToWebview): void => {
      void view.webview.postMessage(msg).then(undefined, () => undefined);
    };
    this.post = post;
    this.viewDisposables.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        const parsed = parseWebviewMessage(raw);
        if (!parsed.ok) {
          this.log.warn(parsed.error);
          post({ type: "error", message: parsed.error });
          return;
        }
        const msg = parsed.message;
        if (msg.type === "ready") this.session.attach(this.review.tap(this.tapMcpStatus(post)));
        void this.session.guard(async () => {
          try {
            await this.dispatch(msg);
          } catch (err) {
            this.failEmitter.fire(err instanceof Error ? err.message : String(err));
            throw err; // the session's guard logs it and shows it in the panel
          }
          if (msg.type === "ready") {
            this.loaded = true;
            this.readyEmitter.fire();
          }
        });
      }),
      view.onDidChangeVisibility(() => {
        // Hidden: the webview's document is gone; it sends `ready` again when shown.
        if (!view.visible) {
          this.loaded = false;
          this.session.detach();
        } else {
          this.session.prefetch();
        }
      }),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.session.detach();
          this.disposeView();
          this.view = undefined;
        }
      }),
    );
  }

  /** Opens the panel (the view container, then the view). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand("workbench.view.extension.deerflow");
    await vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`);
  }

  private async dispatch(msg: WebviewToHost): Promise<void> {
    switch (msg.type) {
      case "ready":
        await this.session.ready(msg.threadId, msg.lastSeq);
        // MCP beside, not before, the panel's readiness: starting servers may take their session_init_timeout.
        void this.session.guard(() => this.refreshMcp());
        // After the thread: a skills list that cannot be read is a panel error, not a lost thread.
        return this.postSkills(this.skills.list());
      case "refreshMcp":
        return this.refreshMcp();
      case "approveMcp": {
        const servers = await this.mcp.approve(msg.server);
        if (servers) this.postMcp(servers);
        return;
      }
      case "showMcpLog":
        return this.mcp.showLog(msg.server);
      case "refreshSkills":
        return this.postSkills(this.skills.list());
      case "addSkill":
        return this.skills.add();
      case "addMcpServer":
        return this.mcp.addServer();
      case "setSkillEnabled":
        return this.postSkills(this.skills.setEnabled(msg.name, msg.enabled));
      case "openSkill":
        return this.skills.open(msg.name);
      case "send":
        return this.session.send(msg.text);
      case "cancel":
        await this.session.cancel();
        return;
      case "continueRun": {
        const res = await this.session.continueRun();
        // The session's guard shows the reason in the panel (and the bar comes back).
        if (!res.ok) throw new Error(res.reason);
        return;
      }
      case "retry": {
        const res = await this.session.retry();
        if (!res.ok) throw new Error(res.reason);
        return;
      }
      case "showLogs":
        await vscode.commands.executeCommand("deerflow.showLogs");
        return;
      case "setApiKey": {
        // The model's key name (its api_key_env), resolved here: the webview names only the model.
        const keyName = this.session.keyNameOf(msg.model);
        await vscode.commands.executeCommand("deerflow.setApiKey", ...(keyName ? [keyName] : []));
        return;
      }
      case "addModel":
        await vscode.commands.executeCommand("deerflow.addModel");
        return;
      case "useVsCodeModels":
        await vscode.commands.executeCommand("deerflow.selectModel", { vscodeLm: true });
        return;
      case "attachFiles":
        return this.session.attachFiles();
      case "removeAttachment":
        return this.session.removeAttachment(msg.index);
      case "newThread":
        await this.session.newThread();
        return;
      case "selectThread":
        return this.session.selectThread(msg.threadId);
      case "renameThread":
        return this.session.renameThread(msg.threadId, msg.title);
      case "deleteThread":
        return this.deleteThread(msg.threadId);
      case "openArtifact":
      case "openImage":
        // Images open in VS Code's image preview, everything else in a text editor: vscode.open picks.
        return this.withFile(msg.path, (uri, downloaded) => openFile(uri, downloaded));
      case "revealArtifact":
        // A downloaded copy is outside the workspace, so the Explorer cannot show it: it opens instead.
        return this.withFile(msg.path, (uri, downloaded) => (downloaded ? openFile(uri, true) : vscode.commands.executeCommand("revealInExplorer", uri)));
      case "clearViewedImages":
        return this.session.clearViewedImages();
      case "selectModel":
        return this.session.selectModel(msg.name);
      case "setPlanMode":
        return this.session.setPlanMode(msg.enabled);
      case "requestImage":
        return this.session.image(msg.sha256);
      case "openMemory":
        await vscode.commands.executeCommand("deerflow.openMemory");
        return;
      case "decide":
      case "openProposedDiff":
      case "openChangeDiff":
      case "revertChanges":
        return this.review.handle(msg);
    }
  }

  /**
   * A run journals each server's state as it starts them (`custom` `mcp_status`): the section
   * reads the list again (without starting anything), one read at a time, one more if events
   * came in during it.
   */
  private tapMcpStatus(post: (msg: HostToWebview) => void): (msg: HostToWebview) => void {
    return (msg) => {
      post(msg);
      if (msg.type === "events" && msg.events.some((e) => e.event === "custom" && e.data.type === "mcp_status")) this.mcpChanged();
    };
  }

  /**
   * The sections follow their files (issue 30 item 5): a SKILL.md added, changed or removed under
   * the workspace's skill folders or the user's, `.vscode/mcp.json`, the folder's or the data
   * directory's `extensions_config.json` — each reads its list again (servers are not started:
   * a changed workspace server needs its Allow again), a burst of changes once.
   */
  watchSources(dataDir: string, home: string): vscode.Disposable {
    const disposables: vscode.Disposable[] = [];
    const debounce = (fn: () => void): (() => void) => {
      let timer: NodeJS.Timeout | undefined;
      return () => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => {
          timer = undefined;
          fn();
        }, 300);
      };
    };
    const skills = debounce(() => {
      if (this.ready) void this.session.guard(() => this.postSkills(this.skills.list()));
    });
    const mcp = debounce(() => {
      if (this.ready) this.mcpChanged();
    });
    const watch = (pattern: vscode.GlobPattern, onChange: () => void): void => {
      const w = vscode.workspace.createFileSystemWatcher(pattern);
      disposables.push(w, w.onDidCreate(onChange), w.onDidChange(onChange), w.onDidDelete(onChange));
    };
    watch("**/{.deerflow,.agents,.github,.claude}/skills/**", skills);
    // A folder made with its contents at once (mkdir -p, a clone, an unzip) may be reported as the
    // new folder alone, not the files in it: its creation counts too, at every level above a skill.
    watch("**/{.deerflow,.agents,.github,.claude}", skills);
    watch("**/{.deerflow,.agents,.github,.claude}/skills", skills);
    for (const dir of [join(dataDir, "skills"), join(home, ".agents", "skills"), join(home, ".claude", "skills")]) {
      watch(new vscode.RelativePattern(vscode.Uri.file(dir), "**/SKILL.md"), skills);
    }
    watch("**/.vscode/mcp.json", mcp);
    watch("**/.vscode", mcp);
    watch("**/.deerflow/extensions_config.json", () => {
      skills();
      mcp();
    });
    watch(new vscode.RelativePattern(vscode.Uri.file(dataDir), "extensions_config.json"), () => {
      skills();
      mcp();
    });
    return vscode.Disposable.from(...disposables);
  }

  private mcpDirty = false;
  private mcpReading = false;

  private mcpChanged(): void {
    this.mcpDirty = true;
    if (this.mcpReading) return;
    this.mcpReading = true;
    void this.session.guard(async () => {
      try {
        while (this.mcpDirty) {
          this.mcpDirty = false;
          this.postMcp(await this.mcp.list(false));
        }
      } finally {
        this.mcpReading = false;
      }
    });
  }

  /** The list as it is (fast), then again once the servers that may start have (ready with tools, or error). */
  private async refreshMcp(): Promise<void> {
    this.postMcp(await this.mcp.list(false));
    this.postMcp(await this.mcp.list(true));
  }

  private postMcp(servers: PanelMcpServer[]): void {
    this.post({ type: "mcpServers", servers });
  }

  private async postSkills(list: Promise<PanelSkill[]>): Promise<void> {
    this.post({ type: "skills", skills: await list });
  }

  private async deleteThread(threadId: string): Promise<void> {
    // Says exactly what the harness's deleteThread (store/deleteThread.ts) removes.
    const answer = await vscode.window.showWarningMessage(
      "Delete this DeerFlow thread?",
      {
        modal: true,
        detail:
          `Its messages, run history, viewed images (those no other thread uses) and queued memory updates are removed, and so is its folder ` +
          `.deerflow/threads/${threadId} with its uploads and outputs. A run in progress is stopped first. Other files in the workspace, ` +
          "and what long-term memory already learnt from it (DeerFlow: Open Memory), stay.",
      },
      "Delete",
    );
    if (answer === "Delete") await this.session.deleteThread(threadId);
  }

  private async withFile(virtualPath: string, act: (uri: vscode.Uri, downloaded: boolean) => Thenable<unknown>): Promise<void> {
    const folder = await this.session.requireFolder();
    const threadId = this.session.shownThreadId;
    const file = threadId ? await this.files.resolve(folder.uri.fsPath, threadId, virtualPath) : undefined;
    if (!file) throw new Error(`${virtualPath} is not a file in this workspace folder (it may have been moved or deleted).`);
    await act(vscode.Uri.file(file.path), file.downloaded);
  }

  private disposeView(): void {
    this.loaded = false;
    for (const d of this.viewDisposables.splice(0)) d.dispose();
  }

  dispose(): void {
    this.disposeView();
    this.readyEmitter.dispose();
    this.failEmitter.dispose();
  }
}
