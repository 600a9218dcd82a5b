/**
 * Schemas of the panel's review messages (ReviewToHost), spliced into the panel's message schema
 * (panel/messages.ts): a webview is untrusted input, so a decision, a diff or a revert is acted
 * on only once its message parses. Ids are checked against the shown thread afterwards
 * (ReviewController); here only their shape.
 */
import { z } from "zod";

const id = z.string().min(1).max(200);
const virtualPath = z.string().startsWith("/mnt/user-data/").max(4096);

const decision = z.strictObject({
  tool_call_id: id,
  decision: z.enum(["approve", "reject"]),
  reason: z.string().max(10_000).optional(),
  always_allow: z.boolean().optional(),
});

export const REVIEW_MESSAGE_SCHEMAS = [
  z.object({ type: z.literal("decide"), threadId: id, decisions: z.array(decision).min(1).max(500) }),
  z.object({ type: z.literal("openProposedDiff"), threadId: id, toolCallId: id }),
  z.object({ type: z.literal("openChangeDiff"), runId: id, path: virtualPath }),
  z.object({ type: z.literal("revertChanges"), runId: id, paths: z.array(virtualPath).min(1).max(10_000).optional() }),
] as const;
