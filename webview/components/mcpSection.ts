/**
 * The MCP Servers section (issue 23): each server of the folder with where it is configured, its
 * state (ready with its tool count, an error with the reason, waiting for approval) and its tools'
 * names, collapsed. A workspace server that waits for approval gets Allow (the host shows what it
 * runs, with Show Config, before anything is approved); each server's log is a click away.
 * Hidden when no server is configured; redrawn only when the list changed identity.
 */
import type { PanelMcpServer, WebviewToHost } from "../../extension/protocol/webview.js";
import type { PanelState } from "../store.js";
import { h, iconButton, setText } from "./dom.js";

function stateText(s: PanelMcpServer): string {
  switch (s.state) {
    case "ready":
      return `ready · ${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`;
    case "needs_approval":
      return "needs your approval";
    case "needs_secret":
      return "needs a secret";
    default:
      return s.state.replace("_", " ");
  }
}

export class McpSection {
  private readonly count = h("span", { class: "section-count" });
  private readonly list = h("ul", { id: "mcp-servers", testid: "mcp-servers", class: "mcp-list", attrs: { "aria-label": "MCP servers" } });
  private readonly empty = h("p", { class: "section-empty muted", testid: "mcp-empty", text: "No MCP servers. Servers in .vscode/mcp.json or DeerFlow's extensions_config.json give the agent their tools." });
  readonly root: HTMLDetailsElement;
  private last: readonly PanelMcpServer[] | undefined;

  constructor(private readonly post: (m: WebviewToHost) => void) {
    this.root = h("details", { id: "mcp-section", testid: "mcp-section", class: "thread-section" },
      h("summary", {}, h("span", { class: "section-label", text: "MCP Servers" }), this.count),
      h("div", { class: "section-body" }, this.list, this.empty,
        h("div", { class: "section-actions" },
          iconButton("add", "Add MCP Server…", () => this.post({ type: "addMcpServer" }), "add-mcp"),
          iconButton("refresh", "Refresh MCP servers", () => this.post({ type: "refreshMcp" }), "refresh-mcp"))));
  }

  update(s: PanelState): void {
    if (s.mcpServers === this.last) return;
    this.last = s.mcpServers;
    this.empty.hidden = s.mcpServers.length > 0;
    this.list.hidden = s.mcpServers.length === 0;
    setText(this.count, s.mcpServers.length === 0 ? "none" : `${s.mcpServers.filter((x) => x.state === "ready").length}/${s.mcpServers.length}`);
    this.list.replaceChildren(...s.mcpServers.map((server) => this.row(server)));
  }

  private row(s: PanelMcpServer): HTMLElement {
    const problem = s.state === "error" || s.state === "refused" || s.state === "needs_approval" || s.state === "needs_secret";
    const tools = s.tools.length === 0
      ? null
      : h("details", { class: "mcp-tools", testid: "mcp-tools" },
          h("summary", { text: `Tools (${s.tools.length})` }),
          h("ul", { class: "mcp-tool-list" }, ...s.tools.map((t) => h("li", { class: "mcp-tool", testid: "mcp-tool", attrs: { "data-name": t.name, title: t.description } }, h("code", { text: t.tool })))));
    return h("li", { class: `mcp-server mcp-${s.state}`, testid: "mcp-server", attrs: { "data-name": s.name, "data-state": s.state } },
      h("div", { class: "mcp-server-head" },
        h("span", { class: "mcp-server-name", text: s.name }),
        h("span", { class: "mcp-source muted", testid: "mcp-source", text: s.source, attrs: { title: s.source } }),
        h("span", { class: "spacer" }),
        s.state === "needs_approval" && s.scope === "workspace"
          ? h("vscode-button", { testid: "mcp-allow", attrs: { "aria-label": `Allow ${s.name}`, title: "Review what it runs, then allow it" }, on: { click: () => this.post({ type: "approveMcp", server: s.name }) } }, h("span", { text: "Allow…" }))
          : null,
        iconButton("output", `Show the log of ${s.name}`, () => this.post({ type: "showMcpLog", server: s.name }), "mcp-log")),
      h("div", { class: `mcp-state${problem ? " mcp-problem" : ""}`, testid: "mcp-state", text: s.reason && problem ? `${stateText(s)}: ${s.reason}` : stateText(s) }),
      tools);
  }
}
