/**
 * DeerFlow: Add Model (issue 30 item 1): the first run's way to a model, in VS Code's own input
 * boxes. It asks for the endpoint's base URL (OpenAI's filled in), the model id and the API key (a
 * password box; kept in SecretStorage under the model's own key name, never in settings), writes
 * the model to `deerflow.models` and selects it.
 *
 * The scope: `deerflow.models` is machine-scoped and read from user or remote settings only
 * (trustedSetting.ts), so the entry goes to ConfigurationTarget.Global, which VS Code writes to
 * the settings this window reads the setting from (the Remote tab's in a remote or code-server
 * window, the User tab's on the desktop): the Settings editor shows it where the user looks.
 */
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import { OPENAI_BASE_URL, baseUrlProblem, isLoopbackUrl, newModelEntry } from "./modelEntry.js";

/** What the command was given (programmatic use: tests, keybindings with args); each is asked for when absent. */
interface AddModelArgs {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

function argsOf(raw: unknown): AddModelArgs {
  if (typeof raw !== "object" || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof r[k] === "string" ? r[k] : undefined);
  return { baseUrl: str("baseUrl"), model: str("model"), apiKey: str("apiKey") };
}

/** The models at the user (or remote) scope: what the new entry is appended to. */
function userModels(): unknown[] {
  const value = vscode.workspace.getConfiguration("deerflow").inspect<unknown>("models")?.globalValue;
  return Array.isArray(value) ? value : [];
}

export const addModelCommand = (ctx: Ctx) => async (raw?: unknown): Promise<string | undefined> => {
  if (ctx.harness.remote) {
    void vscode.window.showWarningMessage(`DeerFlow: this window uses the harness at ${ctx.harness.remote.shown}, whose models its own configuration names. Add models there.`);
    return undefined;
  }
  const given = argsOf(raw);
  const title = "DeerFlow: Add Model";
  const baseUrl = given.baseUrl ?? await vscode.window.showInputBox({
    title: `${title} (1/3)`,
    prompt: "The base URL of an OpenAI-compatible endpoint (OpenAI, a gateway, a local server such as Ollama or LM Studio)",
    value: OPENAI_BASE_URL,
    ignoreFocusOut: true,
    validateInput: baseUrlProblem,
  });
  if (baseUrl === undefined) return undefined;
  const problem = baseUrlProblem(baseUrl);
  if (problem) throw new Error(`${baseUrl} is not a base URL: ${problem}.`);
  const modelId = given.model ?? await vscode.window.showInputBox({
    title: `${title} (2/3)`,
    prompt: "The model id the endpoint serves, e.g. gpt-4.1, qwen2.5-coder:7b",
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : "The model id, as the endpoint names it"),
  });
  if (modelId === undefined || !modelId.trim()) return undefined;
  const entry = newModelEntry(baseUrl, modelId, ctx.settings().models);
  const local = isLoopbackUrl(entry.base_url);
  const apiKey = given.apiKey ?? await vscode.window.showInputBox({
    title: `${title} (3/3)`,
    prompt: local
      ? "The API key, if this local server takes one (empty: none). Kept in VS Code's secret storage, never in settings."
      : "The API key for this endpoint. Kept in VS Code's secret storage, never in settings.",
    password: true,
    ignoreFocusOut: true,
  });
  if (apiKey === undefined) return undefined;
  // The key first: the settings change reconfigures the harness, which then has the key too.
  if (apiKey.trim()) await ctx.keys.set(entry.api_key_env!, apiKey.trim());
  await vscode.workspace.getConfiguration("deerflow").update("models", [...userModels(), entry], vscode.ConfigurationTarget.Global);
  await ctx.harness.configure();
  ctx.session.selectModel(entry.name);
  ctx.log.info(`Model ${entry.name} added (${entry.base_url}, key ${apiKey.trim() ? `stored as ${entry.api_key_env}` : "none"}).`);
  void vscode.window.showInformationMessage(`DeerFlow: model ${entry.name} added and selected. Edit it under Settings › DeerFlow › Models.`);
  return entry.name;
};
