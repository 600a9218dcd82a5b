/**
 * A status bar item while a run is active, or while a thread waits on the user's approval of tool
 * calls (that wins: it needs the user, a run does not); a click opens the panel. Hidden otherwise.
 */
import * as vscode from "vscode";
import type { ApprovalWaits } from "./review/approvalWaits.js";
import type { RunTracker } from "./runTracker.js";

export function createRunStatusItem(runs: RunTracker, waits: ApprovalWaits): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("deerflow.runs", vscode.StatusBarAlignment.Left, 50);
  item.name = "DeerFlow Runs";
  item.command = "deerflow.openPanel";
  const render = (): void => {
    const count = runs.count;
    if (waits.count > 0) {
      item.text = "$(bell-dot) DeerFlow: needs approval";
      item.tooltip = "A DeerFlow run waits for your approval of its tool calls. Click to open the panel.";
      item.accessibilityInformation = { label: "DeerFlow: needs approval", role: "button" };
      item.show();
      return;
    }
    if (count === 0) {
      item.hide();
      return;
    }
    item.text = count === 1 ? "$(sync~spin) DeerFlow: running" : `$(sync~spin) DeerFlow: ${count} runs`;
    item.tooltip = "A DeerFlow run is active. Click to open the panel.";
    item.accessibilityInformation = { label: item.text.replace("$(sync~spin) ", ""), role: "button" };
    item.show();
  };
  render();
  return vscode.Disposable.from(runs.onDidChange(render), waits.onDidChange(render), item);
}
