/**
 * Tool-call approvals (issue 13), shared by the harness, the CLI, the host and the panel.
 * Type-only.
 */

export type ToolClass = "read" | "write" | "protected" | "shell" | "mcp" | "other";
export type ApprovalMode = "auto" | "ask" | "deny";

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
}

/** The user's decision on one pending call. */
export interface ApprovalDecision {
  tool_call_id: string;
  decision: "approve" | "reject";
  /** With "reject": shown to the model as "Rejected by the user: <reason>". */
  reason?: string;
  /** With "approve": calls of this tool no longer ask in this thread ("Always allow <tool>"). */
  always_allow?: boolean;
}
