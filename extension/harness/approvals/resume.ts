/**
 * The run that carries the user's decision on a paused turn (issue 13): checks the decisions
 * against what the thread actually waits on (the checkpoint's `pending_approvals`), and builds the
 * run's input: a "Rejected by the user: …" result per rejected call (so the history the provider
 * sees never has an unanswered call), the grants for the approved calls, and the thread's
 * "Always allow" rules.
 *
 * A yes is granted to the paused call the card showed (approvals/fingerprint.ts), taken from the
 * checkpoint, never from the client: its AI message, index, name-and-arguments hash and sandbox
 * kind. A card from before issue 21 has no fingerprint, and a batch whose calls share an id
 * cannot say which call a decision meant: such a yes grants nothing and such a no answers
 * nothing; the approval middleware renames the ids and asks again (never stuck, never guessed).
 */
import { ToolMessage } from "@langchain/core/messages";
import type { AlwaysAllowRule, ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";
import { HarnessError } from "../errors.js";
import { grantKey } from "./fingerprint.js";
import { REJECTED_PREFIX } from "../../protocol/toolOutcome.js";
import { readRules, withRule } from "./alwaysAllow.js";


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
 * Every pending call decided exactly once, and nothing else, within DECISION_LIMITS: otherwise a
 * usage error naming the undecided (or unknown) calls. Nothing runs on a partial decision. Calls
 * of a legacy batch that share an id take one decision for that id.
 */
export function checkDecisions(pending: readonly PendingApproval[], decisions: readonly ApprovalDecision[]): void {
  if (pending.length === 0) throw new HarnessError("usage", "This thread has no tool calls waiting for approval.");
  const ids = new Set(pending.map((p) => p.tool_call_id));
  const seen = new Set<string>();
  for (const d of decisions) {
    if (!ids.has(d.tool_call_id)) {
      throw new HarnessError("usage", `No pending tool call ${shown(d.tool_call_id)} on this thread (pending: ${describePending(pending)}).`);
    }
    if (seen.has(d.tool_call_id)) throw new HarnessError("usage", `Tool call ${d.tool_call_id} is decided twice.`);
    if (d.reason !== undefined && d.reason.length > DECISION_LIMITS.maxReasonChars) {
      throw new HarnessError("usage", `The reason for rejecting ${d.tool_call_id} has ${d.reason.length} characters; at most ${DECISION_LIMITS.maxReasonChars} are kept.`);
    }
    seen.add(d.tool_call_id);
  }
  const undecided = pending.filter((p) => !seen.has(p.tool_call_id));
  if (undecided.length > 0) {
    throw new HarnessError("usage", `Every pending tool call must be decided; undecided: ${describePending(undecided)}.`);
  }
}

function shown(id: string): string {
  return id.length > DECISION_LIMITS.maxIdChars ? `${id.slice(0, DECISION_LIMITS.maxIdChars)}…` : id;
}

export function describePending(pending: readonly PendingApproval[]): string {
  return pending.map((p) => `${p.tool_call_id} (${p.name})`).join(", ");
}

/** All pending calls decided the same way (`--all`, or a new run with `--multitask interrupt`), one decision per id. */
export function decideAll(pending: readonly PendingApproval[], decision: "approve" | "reject", reason?: string): ApprovalDecision[] {
  const ids = [...new Set(pending.map((p) => p.tool_call_id))];
  return ids.map((tool_call_id) => ({ tool_call_id, decision, ...(reason ? { reason } : {}) }));
}

export interface ResumeInput {
  /** The graph input: a result per rejected call, the pause cleared, the thread's rules. */
  input: { messages: ToolMessage[]; pending_approvals: null; approval_always_allow: AlwaysAllowRule[] };
  /** For the approval middleware (private channels are not graph input): see RESUME_CONFIG_KEY. */
  resume: ApprovalResume;
}

export interface ApprovalResume {
  /** grantKey()s of the approved calls: each may run once, in this run only. */
  granted: string[];
}

/** The `configurable` key a decision run hands the approval middleware its decision under. */
export const RESUME_CONFIG_KEY = "deerflow_approval";

/** The grant for an approved call, when its card named the call unambiguously. */
function grantOf(p: PendingApproval, shared: boolean): string | undefined {
  if (shared || p.message_id === undefined || p.index === undefined || p.fingerprint === undefined || p.sandbox === undefined) return undefined;
  return grantKey({ messageId: p.message_id, index: p.index }, p.fingerprint, p.sandbox);
}

/** The state update a decision run starts with. `rulesBefore` is the raw channel (legacy names are dropped). */
export function resumeInput(pending: readonly PendingApproval[], decisions: readonly ApprovalDecision[], rulesBefore: unknown): ResumeInput {
  checkDecisions(pending, decisions);
  const byId = new Map(decisions.map((d) => [d.tool_call_id, d]));
  const count = new Map<string, number>();
  for (const p of pending) count.set(p.tool_call_id, (count.get(p.tool_call_id) ?? 0) + 1);
  let rules = readRules(rulesBefore);
  const granted: string[] = [];
  const messages: ToolMessage[] = [];
  for (const p of pending) {
    const d = byId.get(p.tool_call_id)!;
    const shared = count.get(p.tool_call_id)! > 1;
    if (d.decision === "approve") {
      const grant = grantOf(p, shared);
      if (grant) granted.push(grant);
      if (d.always_allow && p.always_allow && !shared) rules = withRule(rules, p.always_allow.rule);
    } else if (!shared) {
      messages.push(rejectionMessage(p, d.reason));
    }
  }
  return { input: { messages, pending_approvals: null, approval_always_allow: rules }, resume: { granted } };
}
