/**
 * The review messages' shape check (ReviewToWebview), before the review components see them: a
 * version skew or a bug costs a console warning, not a broken panel. Other messages are left to
 * the store's guard (model/guard.ts).
 */
import type { ReviewToWebview } from "../../extension/protocol/review.js";

const rec = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === "string";

function isPending(v: unknown): boolean {
  return rec(v) && str(v.tool_call_id) && str(v.name) && str(v.class) && str(v.reason) && rec(v.args) &&
    (v.always_allow === undefined || (rec(v.always_allow) && str(v.always_allow.label) && rec(v.always_allow.rule)));
}

function isRun(v: unknown): boolean {
  return rec(v) && str(v.run_id) && str(v.created_at) && Array.isArray(v.files) &&
    v.files.every((f) => rec(f) && str(f.path) && str(f.status) && typeof f.reverted === "boolean");
}

const REVIEW_TYPES = new Set(["approvals", "changes", "reverted"]);

/** The message if it is a well-formed review message; null for any other (or a malformed one). */
export function parseReviewMessage(raw: unknown, warn: (msg: string, detail?: unknown) => void = console.warn): ReviewToWebview | null {
  if (!rec(raw) || !str(raw.type) || !REVIEW_TYPES.has(raw.type)) return null;
  const ok =
    raw.type === "approvals" ? str(raw.threadId) && Array.isArray(raw.pending) && raw.pending.every(isPending)
    : raw.type === "changes" ? str(raw.threadId) && Array.isArray(raw.runs) && raw.runs.every(isRun)
    : str(raw.runId) && Array.isArray(raw.files) && raw.files.every((f) => rec(f) && str(f.path) && str(f.outcome));
  if (!ok) {
    warn(`DeerFlow panel: ignoring a malformed "${raw.type}" message`, raw);
    return null;
  }
  return raw as unknown as ReviewToWebview;
}
