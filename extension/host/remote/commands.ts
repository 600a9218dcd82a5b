/**
 * DeerFlow: Set Remote Harness Token / Clear Remote Harness Token. The token is typed into a
 * password input box (or given as the argument, for tests and keybindings) and goes straight to
 * SecretStorage for the server `deerflow.harness.url` names; the client then reconnects with it.
 * It is never echoed, logged or put in settings.
 */
import * as vscode from "vscode";
import type { Ctx } from "../context.js";
import { readTarget } from "./target.js";

function remoteUrl(): { url: string; shown: string } | undefined {
  const { target, problem } = readTarget();
  if (problem) throw new Error(problem);
  return target.kind === "remote" ? target : undefined;
}

/** Said, not awaited: the command's answer (false) does not wait for the user to close the message. */
function noUrl(): Promise<false> {
  const open = "Open Settings";
  void vscode.window.showInformationMessage("DeerFlow: no remote harness is configured. Set deerflow.harness.url (user settings) to a deerflow serve URL first.", open).then((answer) => {
    if (answer === open) void vscode.commands.executeCommand("workbench.action.openSettings", "deerflow.harness.url");
  });
  return Promise.resolve(false);
}

export const setRemoteTokenCommand = (ctx: Ctx) => async (value?: unknown): Promise<boolean> => {
  const target = remoteUrl();
  if (!target) return noUrl();
  const token =
    typeof value === "string"
      ? value
      : await vscode.window.showInputBox({
          title: "DeerFlow: Set Remote Harness Token",
          prompt: `The bearer token of ${target.shown} (deerflow serve --token-file). Stored in the editor's secret storage.`,
          password: true,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() === "" ? "The token is empty (DeerFlow: Clear Remote Harness Token removes it)." : /\s/.test(v.trim()) ? "A token has no spaces." : undefined),
        });
  if (token === undefined || token.trim() === "") return false;
  await ctx.tokens.set(target.url, token.trim());
  ctx.log.info(`Remote harness token for ${target.shown} set; reconnecting.`);
  await ctx.harness.retarget();
  return true;
};

export const clearRemoteTokenCommand = (ctx: Ctx) => async (): Promise<boolean> => {
  const target = remoteUrl();
  if (!target) return noUrl();
  await ctx.tokens.set(target.url, "");
  ctx.log.info(`Remote harness token for ${target.shown} cleared.`);
  await ctx.harness.retarget();
  return true;
};
