/**
 * What a yes is given to (issue 21): one paused call, named by the AI message that made it, its
 * index in that message and a hash of its name and arguments; never by its tool-call id, which
 * the model chooses and may use again. The sandbox kind the card was shown for is part of the
 * grant, so a yes to "runs in the dev container" never lets the call run on the host.
 */
import { createHash } from "node:crypto";
import type { SandboxKind } from "../../protocol/approvals.js";

/** JSON with object keys sorted at every level: equal arguments hash equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** sha256 of the call's name and arguments. */
export function callHash(name: string, args: unknown): string {
  return createHash("sha256").update(canonical([name, args ?? {}])).digest("hex");
}

/** Where a call sits in the thread: the AI message that made it and its index there. */
export interface CallPosition {
  messageId: string;
  index: number;
}

/** The key a yes is granted under and consumed by. */
export function grantKey(at: CallPosition, hash: string, sandbox: SandboxKind): string {
  return JSON.stringify([at.messageId, at.index, hash, sandbox]);
}
