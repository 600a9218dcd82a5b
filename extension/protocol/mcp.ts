/**
 * MCP servers as the harness reports them (issue 23): `mcp/list`, the `mcp/status` notification,
 * `deerflow mcp list` and the `mcp_status` journal event. Type-only.
 */

/**
 * - disabled: `enabled: false` in its file, or turned off in the panel;
 * - needs_approval: from a workspace file and not approved as it is now (`changed` when an
 *   earlier form was approved);
 * - needs_secret: an `${input:…}` value is not set yet ("DeerFlow: Set MCP Secret");
 * - refused: it may not start here (a workspace server in Restricted Mode);
 * - stopped: allowed, not started yet (servers start with the first run, or `mcp list --start`);
 * - starting, ready (with its tools), error (with the reason).
 */
export type McpServerState = "disabled" | "needs_approval" | "needs_secret" | "refused" | "stopped" | "starting" | "ready" | "error";

export interface McpToolView {
  /** The name the model sees (`<server>_<tool>`). */
  name: string;
  /** The server's own name for it. */
  tool: string;
  description: string;
  /** The server's hints; shown, never trusted to skip an approval. */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean; idempotentHint?: boolean };
}

export interface McpServerView {
  name: string;
  description: string;
  source: { file: string; label: string; scope: "user" | "workspace"; format: "deerflow" | "vscode" };
  state: McpServerState;
  /** The reason for error / refused / needs_approval / needs_secret / disabled, for a person. */
  reason?: string;
  /** needs_approval: an earlier form of this entry was approved, and it changed since. */
  changed?: boolean;
  fingerprint: string;
  transport: "stdio" | "http" | "sse";
  /** stdio: where it runs; http/sse: "remote". */
  where: "host" | "container" | "remote";
  /** What runs or is reached, without secret values: `npx -y pkg`, or the URL. */
  launch: string;
  /** What approving it lets run (trust.ts describeLaunch), one line each. */
  approval_text: string[];
  tools: McpToolView[];
  /** needs_secret: the inputs to set, by key. */
  inputs?: Array<{ key: string; id: string; description?: string; set: boolean }>;
  /** The server's log file (stderr and lifecycle). */
  log_file: string;
}

export interface McpListView {
  servers: McpServerView[];
  /** Bad files and entries: reported, skipped; the rest still load. */
  diagnostics: Array<{ file: string; server?: string; message: string }>;
  /** What this reader could not read (the CLI: VS Code's secret storage, other profiles). */
  notes: string[];
  /** Deferred tools (tool_search) are on for a run with these servers. */
  tool_search: { enabled: boolean; reason: string };
}

/** The `custom` journal event of a server's state during a run. */
export interface McpStatusEventData {
  type: "mcp_status";
  server: string;
  state: McpServerState;
  tools?: number;
  error?: string;
}
