/**
 * "Open Diff" on an approval card (issue 13): a pending write_file / str_replace as VS Code's
 * diff editor, current ↔ proposed, both read-only in-memory documents (the proposal is never
 * written to disk).
 */
import { posix } from "node:path";
import * as vscode from "vscode";
import type { PendingApproval } from "../../protocol/approvals.js";
import type { HarnessClient } from "../harnessClient.js";
import type { ReviewDocuments } from "./reviewDocuments.js";

export const DIFFABLE_TOOLS = new Set(["write_file", "str_replace"]);

/** Opens VS Code's diff editor between the file now and as the pending call would leave it. */
export async function openProposedDiff(
  harness: HarnessClient,
  docs: ReviewDocuments,
  workspaceFolder: string,
  threadId: string,
  call: PendingApproval,
): Promise<void> {
  if (!DIFFABLE_TOOLS.has(call.name)) throw new Error(`${call.name} does not edit a file: there is no diff to show.`);
  const p = await harness.request("approvals/proposed", { workspaceFolder, threadId, toolCallId: call.tool_call_id });
  const left = docs.put(p.path, "current", p.current ?? "");
  const right = docs.put(p.path, "proposed", p.proposed);
  const name = posix.basename(p.path);
  const title = `${name} (${p.exists ? "current" : "new file"} ↔ proposed by DeerFlow)`;
  await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
}
