/**
 * Which harness this window is on, when it is a remote one (the local harness shows nothing, as
 * before): connected, connecting, unreachable (retrying), or refused the token (click: set it).
 * The URL is shown without credentials; the token never is.
 */
import * as vscode from "vscode";
import type { HarnessClient, HarnessConnection } from "../harnessClient.js";

export function createRemoteStatusItem(harness: HarnessClient): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("deerflow.remote", vscode.StatusBarAlignment.Left, 49);
  item.name = "DeerFlow Remote Harness";
  const render = (c: HarnessConnection): void => {
    if (c.kind === "local") {
      item.hide();
      return;
    }
    const host = hostOf(c.shown);
    item.command = "deerflow.showLogs";
    if (c.state === "connected") {
      item.text = `$(remote) DeerFlow: ${host}`;
      item.tooltip = `DeerFlow runs on the remote harness at ${c.shown}.`;
    } else if (c.state === "connecting") {
      item.text = `$(sync~spin) DeerFlow: ${host}`;
      item.tooltip = `Connecting to the remote harness at ${c.shown}…`;
    } else if (c.state === "unreachable") {
      item.text = `$(warning) DeerFlow: ${host} unreachable`;
      item.tooltip = `${c.message} Retrying in ${Math.round(c.retryMs / 1000)} s. Click for the log.`;
    } else if (c.state === "unauthorized") {
      item.text = `$(error) DeerFlow: ${host} refused the token`;
      item.tooltip = c.message;
      item.command = "deerflow.setRemoteToken";
    } else {
      item.text = `$(error) DeerFlow: ${host}`;
      item.tooltip = c.message;
    }
    item.accessibilityInformation = { label: item.text.replace(/^\$\([^)]*\) /, ""), role: "button" };
    item.show();
  };
  render(harness.connectionStatus);
  return vscode.Disposable.from(harness.onDidChangeConnection(render), item);
}

function hostOf(shown: string): string {
  try {
    return new URL(shown).host;
  } catch {
    return shown;
  }
}
