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

/**
 * Runs `fn` and rejects if DeerFlow reported a failure meanwhile: a command's (registerCommands
 * shows and logs it and returns undefined, so a broken command would otherwise pass) or a panel
 * action's (shown in the panel). Settles as soon as either happens.
 */
export async function withoutFailures<T>(fn: () => PromiseLike<T>): Promise<T> {
  const api = await deerflow();
  const failures: string[] = [];
  let fail!: (err: Error) => void;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  const report = (what: string) => {
    failures.push(what);
    fail(new Error(what));
  };
  const subs = [
    api.onCommandError((e) => report(`command ${e.command} failed: ${e.message}`)),
    api.panel.onDidFail((message) => report(`a panel action failed: ${message}`)),
  ];
  try {
    const result = await Promise.race([fn(), failed]);
    // A failure reported in the same turn as the command's (undefined) result may lose the race.
    if (failures.length > 0) throw new Error(failures.join("; "));
    return result;
  } finally {
    for (const s of subs) s.dispose();
  }
}

/** executeCommand that fails the test when the command failed (see withoutFailures). */
export function execute<T = unknown>(command: string, ...args: unknown[]): Promise<T> {
  return withoutFailures(() => vscode.commands.executeCommand<T>(command, ...args));
}
