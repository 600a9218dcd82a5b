/**
 * The panel ↔ host message contract (postMessage). Type-only. The host validates every incoming
 * message with a schema before acting (a webview is untrusted input); the webview renders only
 * what the host sends — never API keys, never host paths outside the workspace.
 */
import type { JournalEvent, ThreadStateView, ThreadSummary } from "./rpc.js";
import type { ReviewToHost, ReviewToWebview } from "./review.js";
import type { McpServerState } from "./mcp.js";

export interface ModelChoice {
  name: string;
  label: string;
  supports_vision: boolean;
  /** The name its API key goes by (`api_key_env`), for an endpoint model configured in this window; never the key. */
  key_name?: string;
  /** No key is stored or in the environment under `key_name`: the panel flags it before a send, with Set API Key. */
  key_missing?: boolean;
}

/**
 * One skill as the panel's Skills section shows it (issue 24): no host path (the host keeps the
 * SKILL.md behind "Open"), no diagnostics text (they may name host paths; `problems` counts them).
 */
export interface PanelSkill {
  name: string;
  scope: string;
  description: string;
  enabled: boolean;
  /** `/name` is offered in the composer's completion. */
  user_invocable: boolean;
  problems: number;
}

/**
 * One MCP server as the panel's MCP Servers section shows it (issue 23): no host paths (its log
 * and config file stay with the host), the state with its reason, and the names of its tools.
 */
export interface PanelMcpServer {
  name: string;
  /** Where it is configured, for a person ("the data directory's extensions_config.json", ".vscode/mcp.json"). */
  source: string;
  scope: "user" | "workspace";
  state: McpServerState;
  reason?: string;
  tools: Array<{ name: string; tool: string; description: string }>;
}

/** Messages from the webview to the host. */
export type WebviewToHost =
  /** The panel (re)loaded; `lastSeq` is what it had already rendered for `threadId` (from its saved state). */
  | { type: "ready"; threadId?: string; lastSeq?: number }
  | { type: "send"; text: string }
  | { type: "cancel" }
  /** Continue after a turn-capped run (issue 20): the next run on the shown thread, prompt "Continue". */
  | { type: "continueRun" }
  | { type: "attachFiles" }
  | { type: "removeAttachment"; index: number }
  | { type: "newThread" }
  | { type: "selectThread"; threadId: string }
  | { type: "renameThread"; threadId: string; title: string }
  | { type: "deleteThread"; threadId: string }
  | { type: "openArtifact"; path: string }
  | { type: "revealArtifact"; path: string }
  | { type: "openImage"; path: string }
  | { type: "clearViewedImages" }
  | { type: "selectModel"; name: string }
  | { type: "setPlanMode"; enabled: boolean }
  | { type: "requestImage"; sha256: string }
  /** "Open Memory" on the panel's memory line. */
  | { type: "openMemory" }
  /** The Skills section (issue 24): enable/disable (DeerFlow's extensions_config.json), open its SKILL.md, read the list again. */
  | { type: "setSkillEnabled"; name: string; enabled: boolean }
  | { type: "openSkill"; name: string }
  | { type: "refreshSkills" }
  /** "Add Skill…" (issue 30 item 5): the host asks a name and writes a SKILL.md to start from, in the workspace's .agents/skills. */
  | { type: "addSkill" }
  /** The MCP Servers section (issue 23): list again (starting those that may), Allow a workspace server (the host shows its config first), its log. */
  | { type: "refreshMcp" }
  /** "Add MCP Server…": the host opens the workspace's .vscode/mcp.json (created with an example entry when missing). */
  | { type: "addMcpServer" }
  | { type: "approveMcp"; server: string }
  | { type: "showMcpLog"; server: string }
  /** The failed-request alert (issue 30 item 2): run the thread's last prompt again; the log; the key of `model` (its api_key_env). */
  | { type: "retry" }
  | { type: "showLogs" }
  | { type: "setApiKey"; model: string }
  /** The start state (issue 30 item 1): Add Model… (the command's input boxes); Use VS Code's models (Select Model, the editor's only). */
  | { type: "addModel" }
  | { type: "useVsCodeModels" }
  /** Approval cards and changed files (review.ts). */
  | ReviewToHost;

export interface PanelStatus {
  /** The active run on the shown thread, if any. */
  run?: { run_id: string; status: "pending" | "running" };
  sandbox?: { kind: "local" | "devcontainer"; state: "idle" | "starting" | "ready" | "stopped" | "error"; detail?: string };
  /** Why sandbox commands are off (untrusted workspace, host commands not allowed). */
  restriction?: string;
  /** The last change long-term memory made for this workspace ("Memory updated: 1 fact learnt …"), until the panel is reloaded. */
  memory?: string;
}

/** Messages from the host to the webview. */
export type HostToWebview =
  | {
      type: "init";
      threads: ThreadSummary[];
      threadId: string | null;
      models: ModelChoice[];
      model: string | null;
      /** The user picked `model` (Select Model, the picker, Add Model); false while it is only the first on the list. */
      modelChosen: boolean;
      planMode: boolean;
    }
  | { type: "threads"; threads: ThreadSummary[]; threadId: string | null }
  /** The shown thread's state (on switch or reload), then live events from `state.last_seq`. */
  | { type: "state"; state: ThreadStateView }
  /** Journal events in seq order, batched. */
  | { type: "events"; threadId: string; events: JournalEvent[] }
  | { type: "status"; status: PanelStatus }
  | { type: "attachments"; files: Array<{ name: string; size: number }> }
  | { type: "model"; model: string; modelChosen: boolean; planMode: boolean }
  | { type: "image"; sha256: string; dataUrl: string | null }
  | { type: "error"; message: string }
  /** The workspace's loaded skills (on `ready`, after a change, on refresh). */
  | { type: "skills"; skills: PanelSkill[] }
  /** The folder's MCP servers (on `ready`, after a start, an approval, a refresh). */
  | { type: "mcpServers"; servers: PanelMcpServer[] }
  | ReviewToWebview;
