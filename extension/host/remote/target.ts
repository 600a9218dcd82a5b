/**
 * Which harness this window talks to: the local process (no `deerflow.harness.url`, exactly as
 * before) or a remote `deerflow serve` (issue 26 item 4), and that server's token.
 *
 * `deerflow.harness.url` is read from user or remote-machine settings only (trustedSetting.ts,
 * and `machine` scope in package.json): a workspace's .vscode/settings.json, which the agent can
 * write, must not send this window's threads, prompts and files to another server.
 *
 * The token lives in SecretStorage, one per server (keyed by the URL as displayUrl shows it), so
 * a token set for one server is never sent to another the setting is later pointed at. It leaves
 * this module only into the upgrade request's Authorization header (connect.ts): never in
 * settings, logs, the webview or a command line.
 */
import { createHash } from "node:crypto";
import * as vscode from "vscode";
import { trustedSettingValue } from "../trustedSetting.js";
import { displayUrl, harnessUrlProblem } from "./connect.js";

export const URL_SETTING = "harness.url";
const TOKEN_PREFIX = "deerflow.remoteToken.";

export type HarnessTarget = { kind: "local" } | { kind: "remote"; url: string; shown: string };

/** The target the settings name now; `problem` when the URL is set but unusable (then local is not silently used). */
export function readTarget(): { target: HarnessTarget; problem?: string } {
  const cfg = vscode.workspace.getConfiguration("deerflow");
  const raw = trustedSettingValue<unknown>(cfg.inspect<unknown>(URL_SETTING), "");
  const url = typeof raw === "string" ? raw.trim() : "";
  if (url === "") return { target: { kind: "local" } };
  const problem = harnessUrlProblem(url);
  if (problem) return { target: { kind: "remote", url, shown: url.replace(/\/\/[^@/]*@/, "//") }, problem };
  return { target: { kind: "remote", url, shown: displayUrl(url) } };
}

export function sameTarget(a: HarnessTarget, b: HarnessTarget): boolean {
  return a.kind === b.kind && (a.kind === "local" || (b.kind === "remote" && a.url === b.url));
}

/** A short, stable name for a server: its token's key and its download cache folder. */
export function serverKey(url: string): string {
  return createHash("sha256").update(displayUrl(url)).digest("hex").slice(0, 16);
}

export class RemoteTokens {
  constructor(private readonly storage: vscode.SecretStorage) {}

  get(url: string): Thenable<string | undefined> {
    return this.storage.get(TOKEN_PREFIX + serverKey(url));
  }

  async set(url: string, token: string): Promise<void> {
    if (token === "") await this.storage.delete(TOKEN_PREFIX + serverKey(url));
    else await this.storage.store(TOKEN_PREFIX + serverKey(url), token);
  }

  /** Fires when any server's token is set or cleared, from any window (never with the value). */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.storage.onDidChange((e) => {
      if (e.key.startsWith(TOKEN_PREFIX)) listener();
    });
  }
}
