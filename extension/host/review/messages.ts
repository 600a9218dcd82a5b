/**
 * Schemas of the panel's review messages (ReviewToHost), spliced into the panel's message schema
 * (panel/messages.ts): a webview is untrusted input, so a decision, a diff or a revert is acted
 * on only once its message parses. Ids are checked against the shown thread afterwards
 * (ReviewController); here only their shape.
 */
import { z } from "zod";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";

const id = z.string().min(1).max(200);
/** A decision's limits are runs/decide's (protocol/approvalLimits.ts): what passes here is never refused there. */
const toolCallId = z.string().min(1).max(DECISION_LIMITS.maxIdChars);
const virtualPath = z.string().startsWith("/mnt/user-data/").max(4096);

const decision = z.strictObject({
  tool_call_id: toolCallId,
  decision: z.enum(["approve", "reject"]),
  reason: z.string().max(DECISION_LIMITS.maxReasonChars).optional(),
  always_allow: z.boolean().optional(),
});

export const REVIEW_MESSAGE_SCHEMAS = [
  z.object({ type: z.literal("decide"), threadId: id, decisions: z.array(decision).min(1).max(DECISION_LIMITS.maxPending) }),
  z.object({ type: z.literal("openProposedDiff"), threadId: id, toolCallId }),
  z.object({ type: z.literal("openChangeDiff"), runId: id, path: virtualPath }),
  z.object({ type: z.literal("revertChanges"), runId: id, paths: z.array(virtualPath).min(1).max(10_000).optional() }),
] as const;
