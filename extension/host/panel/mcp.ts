/**
 * The panel's MCP Servers section on the host side (issue 23): the harness's `mcp/list` as the
 * webview may see it, the Allow of a workspace server and its log. The webview gets names,
 * sources, states and tool names only; the config file and the log stay here, by server name (a
 * name the last list did not give is refused). Allow approves exactly the entry the user was
 * shown: the fingerprint of the list the modal described, which the harness refuses
 * (`mcp_config_changed`) when the file changed since.
 */
import * as vscode from "vscode";
import type { McpServerView } from "../../protocol/mcp.js";
import type { PanelMcpServer } from "../../protocol/webview.js";
import type { HarnessClient } from "../harnessClient.js";

export class PanelMcp {
  /** Server name → what the last list said of it. */
  private servers = new Map<string, McpServerView>();

  constructor(
    private readonly harness: HarnessClient,
    private readonly folder: () => Promise<vscode.WorkspaceFolder>,
  ) {}

  /** `start`: start the servers that may (the user's own, approved ones), each bounded by its session_init_timeout. */
  async list(start: boolean): Promise<PanelMcpServer[]> {
    const workspaceFolder = (await this.folder()).uri.fsPath;
    const { servers } = await this.harness.request("mcp/list", { workspaceFolder, ...(start ? { start: true } : {}) });
    this.servers = new Map(servers.map((s) => [s.name, s]));
    return servers.map(shown);
  }

  /**
   * Add MCP Server… (issue 30 item 5): opens the workspace's .vscode/mcp.json (VS Code's own MCP
   * file, which DeerFlow reads too), created with an empty `servers` object when missing. A
   * workspace server starts only once allowed in the section; the watcher (provider.ts) lists it.
   */
  async addServer(): Promise<void> {
    const folder = await this.folder();
    const file = vscode.Uri.joinPath(folder.uri, ".vscode", "mcp.json");
    const exists = await vscode.workspace.fs.stat(file).then(() => true, () => false);
    if (!exists) await vscode.workspace.fs.writeFile(file, new TextEncoder().encode('{\n  "servers": {\n  }\n}\n'));
    await vscode.window.showTextDocument(file, { preview: false });
    void vscode.window.showInformationMessage(
      'DeerFlow: add a server under "servers", e.g. "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}"] } (a server starts in a folder of its own, not in the workspace). A workspace server runs only after you allow it in the MCP Servers section.',
    );
  }

  /** The last list's view of `name` (for the Show MCP Logs pick). */
  get known(): readonly McpServerView[] {
    return [...this.servers.values()];
  }

  /**
   * Shows what approving `name` lets run (Show Config opens its file), and on Allow approves that
   * fingerprint, then starts the servers. Returns the new list, or undefined when not allowed.
   */
  async approve(name: string): Promise<PanelMcpServer[] | undefined> {
    const seen = this.view(name);
    if (seen.source.scope !== "workspace") throw new Error(`MCP server "${name}" is from your own configuration; it needs no approval.`);
    for (;;) {
      const answer = await vscode.window.showWarningMessage(
        `Allow the MCP server "${name}" from ${seen.source.label}? It is configured by this workspace, not by you.`,
        { modal: true, detail: [...seen.approval_text, "A change to this entry, or to a workspace file it lists, asks again."].join("\n") },
        "Allow",
        "Show Config",
      );
      if (answer === "Show Config") {
        await vscode.window.showTextDocument(vscode.Uri.file(seen.source.file), { preview: true });
        continue;
      }
      if (answer !== "Allow") return undefined;
      break;
    }
    const workspaceFolder = (await this.folder()).uri.fsPath;
    await this.harness.request("mcp/approve", { workspaceFolder, server: name, fingerprint: seen.fingerprint });
    return this.list(true);
  }

  async showLog(name: string): Promise<void> {
    const file = this.view(name).log_file;
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    } catch {
      void vscode.window.showInformationMessage(`DeerFlow: MCP server "${name}" has written no log yet (${file}).`);
    }
  }

  private view(name: string): McpServerView {
    const v = this.servers.get(name);
    if (!v) throw new Error(`No MCP server named "${name}" is listed for this workspace; refresh the MCP Servers section.`);
    return v;
  }
}

function shown(s: McpServerView): PanelMcpServer {
  return {
    name: s.name,
    source: s.source.label,
    scope: s.source.scope,
    state: s.state,
    ...(panelReason(s) ? { reason: panelReason(s) } : {}),
    tools: s.tools.map((t) => ({ name: t.name, tool: t.tool, description: t.description })),
  };
}

/**
 * The reason as the panel says it: the harness's names the CLI command that approves (`deerflow
 * mcp approve --workspace …`), which the panel replaces with its own button (issue 30: no CLI
 * flags or host paths in the panel).
 */
function panelReason(s: McpServerView): string | undefined {
  if (s.state === "needs_approval" && s.source.scope === "workspace") {
    return `This workspace's ${s.source.label} names it, so it runs only once you allow it: Allow… shows what it runs. An edit to its entry asks again.`;
  }
  return s.reason;
}
