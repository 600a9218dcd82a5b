/**
 * Whether a harness may run model requests on this editor's language models (`lm/chat`, the
 * vscode.lm bridge, issue 25; issue 31 item 6). The local harness process is this window's own:
 * always. A remote `deerflow serve` only when the user listed that server in
 * `deerflow.harness.shareEditorModels` (user or remote settings only, like `harness.url`): its
 * operator chooses the prompts, and each answer spends this user's quota (Copilot's). The shipped
 * serve never asks (its `/rpc` sets no model bridge); a modified one could, and is refused.
 *
 * No `vscode` import: the unit tests hold the decision.
 */
import type { HarnessSource } from "../harnessSupport.js";
import { displayUrl } from "../remote/connect.js";

export const SHARE_SETTING = "harness.shareEditorModels";

/** The servers as the setting lists them, by the URL as displayUrl shows it; entries that are not URLs are skipped. */
function sharedServers(setting: unknown): Set<string> {
  const out = new Set<string>();
  for (const entry of Array.isArray(setting) ? (setting as unknown[]) : []) {
    if (typeof entry !== "string" || entry.trim() === "") continue;
    try {
      out.add(displayUrl(entry.trim()));
    } catch {
      // Not a URL: it names no server.
    }
  }
  return out;
}

/** Undefined when `source` may use the editor's models; else why not, and how to allow it. */
export function lmChatRefusal(source: HarnessSource, setting: unknown): string | undefined {
  if (source.kind === "local") return undefined;
  let server: string;
  try {
    server = displayUrl(source.url);
  } catch {
    server = source.shown;
  }
  if (sharedServers(setting).has(server)) return undefined;
  return (
    `The remote harness ${source.shown} asked to use this editor's language models, which spends your quota on prompts the server chooses. ` +
    `It is refused: to allow this server, add "${server}" to the user setting deerflow.${SHARE_SETTING}.`
  );
}
