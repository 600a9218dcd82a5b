/**
 * Tool-call approvals (issue 13), shared by the harness, the CLI, the host and the panel.
 * Type-only (the numbers all three must agree on are in ./approvalLimits.ts).
 */

export type ToolClass = "read" | "write" | "protected" | "shell" | "mcp" | "web" | "other";
export type ApprovalMode = "auto" | "ask" | "deny";
/** Where a call runs: on this machine, or in the folder's dev container. */
export type SandboxKind = "local" | "devcontainer";

/**
 * What one "Always allow" covers in a thread (issue 21): a tool, the class its calls had and the
 * sandbox kind they ran in; for bash also the command prefix the card showed. Never a protected
 * write. The harness builds it from the paused call; a client only says yes to it.
 */
export interface AlwaysAllowRule {
  tool: string;
  class: ToolClass;
  sandbox: SandboxKind;
  /** bash only: every sub-command must start with these words (`npm test`). */
  prefix?: string;
  /** web_fetch only (issue 35): the URL's host name, exactly (`docs.python.org`). */
  host?: string;
}

/** One tool call a paused run waits on: `end.data.pending_approvals`, the `approval_requested` event. */
export interface PendingApproval {
  tool_call_id: string;
  name: string;
  args: Record<string, unknown>;
  class: ToolClass;
  /** Why it asks, as a person reads it ("runs a command on this machine: npm test"). */
  reason: string;
  /** An MCP tool (issue 23): its server, its own name, and the server's hints (shown, never trusted). */
  mcp?: { server: string; tool: string; source: "user" | "workspace"; annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean; idempotentHint?: boolean } };
  /**
   * The paused call itself (issue 21): the AI message that made it, its index there and a hash of
   * its name and arguments. A yes is granted to this, never to the id, and holds once. Absent on
   * cards from before issue 21: such a yes is asked again.
   */
  message_id?: string;
  index?: number;
  fingerprint?: string;
  /** The sandbox kind the card was shown for: a yes never carries to another. */
  sandbox?: SandboxKind;
  /** What "Always allow" would cover, and the button's words; absent when it is not offered (protected writes). */
  always_allow?: { rule: AlwaysAllowRule; label: string };
}

/** The user's decision on one pending call. */
export interface ApprovalDecision {
  tool_call_id: string;
  decision: "approve" | "reject";
  /** With "reject": shown to the model as "Rejected by the user: <reason>". */
  reason?: string;
  /** With "approve": the card's `always_allow` rule holds in this thread from now on. */
  always_allow?: boolean;
}
