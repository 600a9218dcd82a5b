/**
 * "DeerFlow: Compact Thread": summarize the panel's current thread now (`threads/compact`,
 * runs/compaction.ts). Every message stays in the thread and in the panel; the model's next
 * requests carry the summary and the recent messages instead of the older ones. The result is
 * shown as a notification; a failure (the summary model failed, a run is active) is thrown, and
 * registerCommands shows it as an error message.
 */
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import type { CompactResultView } from "../protocol/rpc.js";

export function compactThreadCommand(ctx: Ctx): () => Promise<CompactResultView | undefined> {
  return async () => {
    const threadId = ctx.session.shownThreadId;
    if (!threadId) {
      void vscode.window.showInformationMessage("DeerFlow: open a thread first.");
      return undefined;
    }
    const folder = await ctx.session.requireFolder();
    const model = ctx.session.model();
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "DeerFlow: compacting the thread…" },
      () => ctx.harness.request("threads/compact", { workspaceFolder: folder.uri.fsPath, threadId, ...(model ? { model } : {}) }),
    );
    void vscode.window.showInformationMessage(
      result.compacted
        ? `DeerFlow: thread compacted. ${result.summarized} older messages are summarized for the model; the last ${result.preserved} stay in full. Every message is still in the thread.`
        : `DeerFlow: ${result.reason ?? "nothing to compact."}`,
    );
    return result;
  };
}
