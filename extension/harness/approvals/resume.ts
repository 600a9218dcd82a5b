/**
 * The run that carries the user's decision on a paused turn (issue 13): checks the decisions
 * against what the thread actually waits on (the checkpoint's `pending_approvals`), and builds the
 * run's input: a "Rejected by the user: …" result per rejected call (so the history the provider
 * sees never has an unanswered call), the approved ids, and the thread's "Always allow" list.
 */
import { ToolMessage } from "@langchain/core/messages";
import type { ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import { HarnessError } from "../errors.js";

export const REJECTED_PREFIX = "Rejected by the user";

/** "Rejected by the user: <reason>" (DeerFlow's guardrail denial names who said no). */
export function rejectionText(reason: string | undefined): string {
  const why = reason?.trim();
  return `${REJECTED_PREFIX}: ${why ? why : "no reason given"}`;
}

export function rejectionMessage(p: Pick<PendingApproval, "tool_call_id" | "name">, reason: string | undefined): ToolMessage {
  return new ToolMessage({
    content: rejectionText(reason),
    tool_call_id: p.tool_call_id,
    name: p.name,
    status: "error",
    additional_kwargs: { deerflow_tool_meta: { status: "error", error_type: "rejected_by_user", recoverable_by_model: true, source: "user" } },
  });
}

/**
 * Every pending call decided exactly once, and nothing else: otherwise a usage error naming the
 * undecided (or unknown) calls. Nothing runs on a partial decision.
 */
export function checkDecisions(pending: readonly PendingApproval[], decisions: readonly ApprovalDecision[]): void {
  if (pending.length === 0) throw new HarnessError("usage", "This thread has no tool calls waiting for approval.");
  const ids = new Set(pending.map((p) => p.tool_call_id));
  const seen = new Set<string>();
  for (const d of decisions) {
    if (!ids.has(d.tool_call_id)) {
      throw new HarnessError("usage", `No pending tool call ${d.tool_call_id} on this thread (pending: ${describePending(pending)}).`);
    }
    if (seen.has(d.tool_call_id)) throw new HarnessError("usage", `Tool call ${d.tool_call_id} is decided twice.`);
    seen.add(d.tool_call_id);
  }
  const undecided = pending.filter((p) => !seen.has(p.tool_call_id));
  if (undecided.length > 0) {
    throw new HarnessError("usage", `Every pending tool call must be decided; undecided: ${describePending(undecided)}.`);
  }
}

export function describePending(pending: readonly PendingApproval[]): string {
  return pending.map((p) => `${p.tool_call_id} (${p.name})`).join(", ");
}

/** All pending calls decided the same way (`--all`, or a new run with `--multitask interrupt`). */
export function decideAll(pending: readonly PendingApproval[], decision: "approve" | "reject", reason?: string): ApprovalDecision[] {
  return pending.map((p) => ({ tool_call_id: p.tool_call_id, decision, ...(reason ? { reason } : {}) }));
}

export interface ResumeInput {
  /** The graph input: a result per rejected call, and the pause cleared. */
  input: { messages: ToolMessage[]; pending_approvals: null; approval_always_allow: string[] };
  /** For the approval middleware (private channels are not graph input): see RESUME_CONFIG_KEY. */
  resume: ApprovalResume;
}

export interface ApprovalResume {
  /** The approved call ids: they may run in this run (and only in it). */
  granted: string[];
}

/** The `configurable` key a decision run hands the approval middleware its decision under. */
export const RESUME_CONFIG_KEY = "deerflow_approval";

/** The state update a decision run starts with. */
export function resumeInput(pending: readonly PendingApproval[], decisions: readonly ApprovalDecision[], alwaysBefore: readonly string[]): ResumeInput {
  checkDecisions(pending, decisions);
  const byId = new Map(pending.map((p) => [p.tool_call_id, p]));
  const always = new Set(alwaysBefore);
  const granted: string[] = [];
  const messages: ToolMessage[] = [];
  for (const d of decisions) {
    const p = byId.get(d.tool_call_id)!;
    if (d.decision === "approve") {
      granted.push(d.tool_call_id);
      if (d.always_allow) always.add(p.name);
    } else {
      messages.push(rejectionMessage(p, d.reason));
    }
  }
  return { input: { messages, pending_approvals: null, approval_always_allow: [...always].sort() }, resume: { granted } };
}
