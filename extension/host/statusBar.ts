/** A status bar item while a run is active; a click opens the panel. Hidden otherwise. */
import * as vscode from "vscode";
import type { RunTracker } from "./runTracker.js";

export function createRunStatusItem(runs: RunTracker): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("deerflow.runs", vscode.StatusBarAlignment.Left, 50);
  item.name = "DeerFlow Runs";
  item.command = "deerflow.openPanel";
  const render = (count: number): void => {
    if (count === 0) {
      item.hide();
      return;
    }
    item.text = count === 1 ? "$(sync~spin) DeerFlow: running" : `$(sync~spin) DeerFlow: ${count} runs`;
    item.tooltip = "A DeerFlow run is active. Click to open the panel.";
    item.accessibilityInformation = { label: item.text.replace("$(sync~spin) ", ""), role: "button" };
    item.show();
  };
  render(runs.count);
  const sub = runs.onDidChange(render);
  return vscode.Disposable.from(sub, item);
}
