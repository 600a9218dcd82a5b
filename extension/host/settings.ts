/**
 * `deerflow.*` settings → the harness's `HarnessSettings`. Settings are untrusted input (a user
 * can type anything into settings.json), so they are parsed with a schema; a broken model entry
 * is dropped with a log line rather than failing every run.
 *
 * `models`, `sandboxProvider` and `allowHostCommands` are machine-scoped in package.json and
 * read here from user or remote settings only (trustedSetting.ts): a workspace's
 * .vscode/settings.json (which the agent's tools or the sandbox could write) must not point a
 * model and its key at another endpoint, pick the sandbox, nor switch host commands on.
 * `approval.*` (what runs without asking) likewise comes from user or remote settings only, and
 * so do `defaultModel`, `titleModel` and `summarization.*`: which of the user's models (and so
 * which endpoint and key) reads every conversation and every title request, and when and how
 * much of a thread is summarized, are the user's choices, not a cloned repository's.
 */
import * as vscode from "vscode";
import { z } from "zod";
import type { HarnessSettings, ModelSetting } from "../protocol/rpc.js";
import type { ModelChoice } from "../protocol/webview.js";
import { trustedSettingValue } from "./trustedSetting.js";
import { isLoopbackUrl } from "./modelEntry.js";

const SECTION = "deerflow";

const ModelSettingZ = z.object({
  name: z.string().min(1),
  model: z.string().min(1),
  base_url: z.string().url().optional(),
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  display_name: z.string().optional(),
  supports_vision: z.boolean().optional(),
  supports_thinking: z.boolean().optional(),
  // Passed through to the harness, which validates them again (config/harnessConfig.ts).
  supports_reasoning_effort: z.boolean().optional(),
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  when_thinking_enabled: z.record(z.string(), z.unknown()).optional(),
  when_thinking_disabled: z.record(z.string(), z.unknown()).optional(),
  thinking: z.record(z.string(), z.unknown()).optional(),
  pricing_provider: z.string().optional(),
});

const DEFAULT_KEY_ENV = "OPENAI_API_KEY";

/**
 * `deerflow.summarization.*` (issue 15) from user or remote settings only (issue 21), each falling
 * back to its contributed default when not a valid value.
 */
export function summarizationSettings(cfg: Pick<vscode.WorkspaceConfiguration, "inspect">): NonNullable<HarnessSettings["summarization"]> {
  const trusted = (key: string): unknown => trustedSettingValue<unknown>(cfg.inspect<unknown>(key), undefined);
  const int = (key: string, min: number, fallback: number): number => {
    const v = trusted(key);
    return typeof v === "number" && Number.isSafeInteger(v) && v >= min ? v : fallback;
  };
  return {
    enabled: trusted("summarization.enabled") !== false,
    trigger_tokens: int("summarization.triggerTokens", 0, 32000),
    keep_messages: int("summarization.keepMessages", 1, 10),
  };
}

/**
 * What a run may spend: `deerflow.subagents.enabled` (up to 6 subagents a run, each with its own
 * token budget), `deerflow.maxTokensPerRun` (the cap) and `deerflow.maxTurnsPerRun` (model turns). Machine scope, read from user/machine
 * values only (trustedSetting.ts): a cloned repository's .vscode/settings.json must not switch
 * subagents on nor lift the user's cap.
 */
export function runLimitSettings(cfg: Pick<vscode.WorkspaceConfiguration, "inspect">): Pick<HarnessSettings, "subagents" | "token_budget" | "max_turns"> {
  const out: Pick<HarnessSettings, "subagents" | "token_budget" | "max_turns"> = {};
  if (trustedSettingValue<unknown>(cfg.inspect<unknown>("subagents.enabled"), false) === true) out.subagents = { enabled: true };
  // A cap only (issue 15): 0 or anything that is not a whole number of tokens means no budget.
  const maxTokens = trustedSettingValue<unknown>(cfg.inspect<unknown>("maxTokensPerRun"), 0);
  if (typeof maxTokens === "number" && Number.isSafeInteger(maxTokens) && maxTokens > 0) out.token_budget = { max_tokens_per_run: maxTokens };
  // The turn budget (issue 20): a whole number of model turns, at least 1; anything else keeps the harness default.
  const maxTurns = trustedSettingValue<unknown>(cfg.inspect<unknown>("maxTurnsPerRun"), undefined);
  if (typeof maxTurns === "number" && Number.isSafeInteger(maxTurns) && maxTurns >= 1) out.max_turns = maxTurns;
  return out;
}

/** Reads the settings; `problems` names the entries that were ignored and why. */
export function readSettings(workspaceTrusted: boolean): { settings: HarnessSettings; problems: string[] } {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const problems: string[] = [];
  const models: ModelSetting[] = [];
  const raw = trustedSettingValue<unknown>(cfg.inspect<unknown>("models"), []);
  for (const [i, entry] of (Array.isArray(raw) ? raw : []).entries()) {
    const parsed = ModelSettingZ.safeParse(entry);
    if (!parsed.success) {
      problems.push(`deerflow.models[${i}] ignored: ${parsed.error.issues.map((x) => `${x.path.join(".") || "entry"} ${x.message}`).join("; ")}`);
    } else if (models.some((m) => m.name === parsed.data.name)) {
      problems.push(`deerflow.models[${i}] ignored: the name "${parsed.data.name}" is configured twice`);
    } else {
      models.push(parsed.data);
    }
  }
  const provider = trustedSettingValue<unknown>(cfg.inspect<unknown>("sandboxProvider"), "auto");
  const settings: HarnessSettings = {
    models,
    sandbox: {
      provider: provider === "local" || provider === "devcontainer" ? provider : "auto",
      allow_host_commands: trustedSettingValue<unknown>(cfg.inspect<unknown>("allowHostCommands"), false) === true,
    },
    workspace_trusted: workspaceTrusted,
  };
  Object.assign(settings, runLimitSettings(cfg));
  // Machine scope, read from user/machine values only (trustedSetting.ts): a workspace must not
  // switch on sending its conversations to extraction, nor turn the user's memory off for itself.
  settings.memory = { enabled: trustedSettingValue<unknown>(cfg.inspect<unknown>("memory.enabled"), true) !== false };
  settings.summarization = summarizationSettings(cfg);
  const approval = approvalSettings(cfg);
  if (Object.keys(approval).length > 0) settings.approval = approval;
  Object.assign(settings, modelChoiceSettings(cfg));
  return { settings, problems };
}

/** `deerflow.defaultModel` and `deerflow.titleModel`, from user or remote settings only (see the header). */
export function modelChoiceSettings(cfg: Pick<vscode.WorkspaceConfiguration, "inspect">): Pick<HarnessSettings, "default_model" | "title_model"> {
  const named = (key: string): string | undefined => {
    const v = trustedSettingValue<unknown>(cfg.inspect<unknown>(key), undefined);
    return typeof v === "string" && v.trim() ? v.trim() : undefined;
  };
  const out: Pick<HarnessSettings, "default_model" | "title_model"> = {};
  const defaultModel = named("defaultModel");
  const titleModel = named("titleModel");
  if (defaultModel) out.default_model = defaultModel;
  if (titleModel) out.title_model = titleModel;
  return out;
}

const TOOL_CLASSES = ["read", "write", "protected", "shell", "mcp", "web", "other"] as const;
type ToolClass = (typeof TOOL_CLASSES)[number];
type ApprovalMode = "auto" | "ask" | "deny";

/**
 * `deerflow.approval.<class>` from user or machine settings only (trustedSetting.ts): the policy
 * says what the agent may do without asking, so a workspace must not loosen it. Only values that
 * differ from "use the default" are sent; the harness fills in the defaults for the sandbox.
 */
export function approvalSettings(cfg: Pick<vscode.WorkspaceConfiguration, "inspect">): Partial<Record<ToolClass, ApprovalMode>> {
  const out: Partial<Record<ToolClass, ApprovalMode>> = {};
  for (const cls of TOOL_CLASSES) {
    const inspected = cfg.inspect<unknown>(`approval.${cls}`);
    // Only the user's own value counts: a declared default stays the harness's default (shell's differs by sandbox).
    const value = trustedSettingValue<unknown>(inspected ? { ...inspected, defaultValue: undefined } : undefined, undefined);
    if (value === "auto" || value === "ask" || value === "deny") out[cls] = value;
  }
  return out;
}

export function affectsSettings(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(SECTION);
}

/**
 * What the model picker offers. With no configured models the harness falls back to the
 * environment (OPENAI_BASE_URL + OPENAI_MODEL/DEERFLOW_MODEL, see models/factory.ts); the picker
 * mirrors that single choice so the panel is never empty when the environment has a model.
 */
export function modelChoices(settings: HarnessSettings, env: NodeJS.ProcessEnv = process.env, hasStoredKey?: (name: string) => boolean): ModelChoice[] {
  if (settings.models.length > 0) {
    return settings.models.map((m) => {
      const keyName = m.api_key_env ?? DEFAULT_KEY_ENV;
      const missing = hasStoredKey !== undefined && keyMissing(m, keyName, env, hasStoredKey);
      return { name: m.name, label: m.display_name ?? m.name, supports_vision: m.supports_vision ?? false, key_name: keyName, ...(missing ? { key_missing: true } : {}) };
    });
  }
  const id = env["DEERFLOW_MODEL"] || env["OPENAI_MODEL"];
  if (!env["OPENAI_BASE_URL"] && !id) return [];
  return [{ name: id || "default", label: id || "default", supports_vision: true }];
}

/**
 * A model's key is missing (issue 30 item 2: flagged under the picker before a request is sent):
 * neither SecretStorage nor the environment has a value for its key name. A model on a loopback
 * endpoint is not flagged: local servers (Ollama, LM Studio, a scripted model) usually take no key.
 */
function keyMissing(m: ModelSetting, keyName: string, env: NodeJS.ProcessEnv, hasStoredKey: (name: string) => boolean): boolean {
  if (hasStoredKey(keyName) || env[keyName]) return false;
  return !isLoopbackUrl(m.base_url ?? env["OPENAI_BASE_URL"]);
}

/** The names the API keys go by: each model's `api_key_env`, or OPENAI_API_KEY. */
export function apiKeyNames(settings: HarnessSettings): string[] {
  const names = new Set<string>(settings.models.map((m) => m.api_key_env ?? DEFAULT_KEY_ENV));
  names.add(DEFAULT_KEY_ENV);
  return [...names].sort();
}
