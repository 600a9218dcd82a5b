/**
 * What a thread waits on (issue 13), read from its journal as the panel receives it, and how a
 * notification names it. Pure (no vscode): unit-tested on its own.
 */
import type { PendingApproval } from "../../protocol/approvals.js";
import type { JournalEvent } from "../../protocol/rpc.js";

const CLASSES = new Set(["read", "write", "protected", "shell", "mcp", "web", "other"]);

function isPending(v: unknown): v is PendingApproval {
  if (typeof v !== "object" || v === null) return false;
  const p = v as Record<string, unknown>;
  return typeof p["tool_call_id"] === "string" && typeof p["name"] === "string" && typeof p["reason"] === "string" &&
    typeof p["args"] === "object" && p["args"] !== null && CLASSES.has(p["class"] as string);
}

function pendingList(v: unknown): PendingApproval[] {
  return Array.isArray(v) ? v.filter(isPending) : [];
}

/**
 * What `e` says the thread now waits on: a list (empty = nothing) when it says anything, else
 * undefined. A run's start or a decision clears the cards; the pause's request or its end sets them.
 */
export function pendingAfter(e: JournalEvent): PendingApproval[] | undefined {
  if (e.event === "metadata") return [];
  if (e.event === "custom") {
    if (e.data.type === "approval_requested") return pendingList(e.data["approvals"]);
    if (e.data.type === "approval_decided") return [];
    return undefined;
  }
  if (e.event === "end") {
    const data = e.data as { stop_reason?: unknown; pending_approvals?: unknown };
    return data.stop_reason === "approval" ? pendingList(data.pending_approvals) : [];
  }
  return undefined;
}

/** "bash: npm test", for a notification line. */
export function describeCalls(pending: readonly PendingApproval[]): string {
  const first = pending[0];
  if (!first) return "";
  const arg = first.args["command"] ?? first.args["path"] ?? first.args["description"];
  const detail = typeof arg === "string" ? `: ${arg.length > 60 ? `${arg.slice(0, 59)}…` : arg}` : "";
  return `${first.name}${detail}${pending.length > 1 ? ` (+${pending.length - 1} more)` : ""}`;
}
