/** What the suites share: the activated extension's test API, and event waits with a deadline. */
import * as vscode from "vscode";
import type { DeerFlowTestApi } from "../../../extension/host/extension.js";

export const EXTENSION_ID = "deerflow-vscode.deerflow-vscode";

export async function deerflow(): Promise<DeerFlowTestApi> {
  const ext = vscode.extensions.getExtension<DeerFlowTestApi | undefined>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not loaded in this extension host`);
  const api = await ext.activate();
  if (!api) throw new Error("activate() returned no test API: is the extension host in test mode?");
  return api;
}

export function folderPath(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error("the test workbench has no workspace folder");
  return folder.uri.fsPath;
}

/** The next `event` value that satisfies `pred`; rejects after `ms` with `what` in the message. */
export function next<T>(event: vscode.Event<T>, pred: (v: T) => boolean, what: string, ms = 20_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    const sub = event((v) => {
      if (!pred(v)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(v);
    });
  });
}

/** The harness is up (the first start may still be in progress when a suite begins). */
export async function harnessReady(api: DeerFlowTestApi): Promise<number> {
  if (api.harness.process) return api.harness.process.pid;
  return (await next(api.harness.onDidStart, () => true, "the harness to start", 60_000)).pid;
}
