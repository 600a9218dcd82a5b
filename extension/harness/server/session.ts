/**
 * What the host told this harness process: where its data lives, the user's settings, and the API
 * keys. Keys live only here, in memory: never written to disk, never logged, never sent back;
 * each model a run uses (lead, title, summary, a subagent type's) gets the key held for its own
 * `api_key_env` name (startRun's heldKey → RunContext.keyFor), so the host can hold keys for several
 * providers and none reaches another provider's endpoint.
 *
 * The configuration is the data directory's DeerFlow configuration file, when there is one
 * (config/configFile.ts: DEERFLOW_CONFIG, else `<dataDir>/config.yaml` or `config.json`), with the
 * `deerflow.*` settings over it: the settings the host sends win, key by key; the file's models
 * are used while the settings configure none. What the file has that the port does not implement
 * is listed once in Show Logs. A file that cannot be used is reported there too, and the settings
 * alone apply: the editor keeps working while the user fixes the file.
 */
import { isAbsolute } from "node:path";
import type { HarnessSettings } from "../../protocol/rpc.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { applyLlmCallConfig, loadConfigFile, parseHarnessConfig } from "../config/harnessConfig.js";
import { isObj, type Obj } from "../config/deerflowKeys.js";
import { diagnostics } from "../diagnostics.js";
import { HarnessError, errorMessage } from "../errors.js";

export class Session {
  private dataDirValue: string | undefined;
  private settingsValue: HarnessSettings | undefined;
  private configValue: HarnessConfig | undefined;
  /** The configuration file's data (DeerFlow's keys, `$VAR`s resolved), read once at initialize. */
  private fileData: Obj | undefined;
  private readonly keys = new Map<string, string>();

  get initialized(): boolean {
    return this.dataDirValue !== undefined;
  }

  /** Throws not_initialized before `harness/initialize`. */
  get dataDir(): string {
    if (this.dataDirValue === undefined) throw notInitialized();
    return this.dataDirValue;
  }

  get settings(): HarnessSettings {
    if (this.settingsValue === undefined) throw notInitialized();
    return this.settingsValue;
  }

  get config(): HarnessConfig {
    if (this.configValue === undefined) throw notInitialized();
    return this.configValue;
  }

  /** The data directory is fixed for the life of the process: open stores point into it. */
  initialize(dataDir: string, settings: HarnessSettings): void {
    if (!isAbsolute(dataDir)) throw new HarnessError("invalid_params", `dataDir must be an absolute path, got ${JSON.stringify(dataDir)}.`);
    if (this.dataDirValue !== undefined && this.dataDirValue !== dataDir) {
      throw new HarnessError("usage", `This harness already uses the data directory ${this.dataDirValue}; restart it to use another.`);
    }
    this.fileData = this.dataDirValue === undefined ? readFileData(dataDir) : this.fileData;
    this.configure(settings);
    this.dataDirValue = dataDir;
    applyLlmCallConfig(this.config, dataDir);
  }

  /** Validated before anything changes: a bad setting leaves the previous ones in force. */
  configure(settings: HarnessSettings, apiKeys?: Record<string, string>): void {
    const fromSettings: Obj = {
      ...(settings.models.length > 0 ? { models: settings.models } : {}),
      ...(settings.default_model ? { default_model: settings.default_model } : {}),
      ...(settings.title_model ? { title: { model_name: settings.title_model } } : {}),
      sandbox: settings.sandbox,
      ...(settings.subagents ? { subagents: { enabled: settings.subagents.enabled } } : {}),
      ...(settings.memory ? { memory: { enabled: settings.memory.enabled } } : {}),
      // The setting is the user's cap: it wins over the file's `token_budget.enabled`.
      ...(settings.token_budget ? { token_budget: { enabled: settings.token_budget.max_tokens_per_run > 0, max_tokens: settings.token_budget.max_tokens_per_run } } : {}),
      ...(settings.max_turns ? { max_turns: settings.max_turns } : {}),
      ...(settings.summarization
        ? {
            summarization: {
              enabled: settings.summarization.enabled,
              // 0: no token trigger (only a manual compaction summarizes).
              trigger: settings.summarization.trigger_tokens > 0 ? [{ type: "tokens", value: settings.summarization.trigger_tokens }] : [],
              keep: { type: "messages", value: settings.summarization.keep_messages },
            },
          }
        : {}),
    };
    const config = parseHarnessConfig(overlay(this.fileData ?? {}, fromSettings), this.fileData ? "the configuration file and the deerflow.* settings" : "the deerflow.* settings");
    this.settingsValue = settings;
    this.configValue = config;
    // The harness's settings carry no llm_call/circuit_breaker section yet: DeerFlow's defaults apply.
    if (this.dataDirValue !== undefined) applyLlmCallConfig(config, this.dataDirValue);
    // Merged: the host may send only the key that changed. An empty string forgets a key.
    for (const [name, key] of Object.entries(apiKeys ?? {})) {
      if (key === "") this.keys.delete(name);
      else this.keys.set(name, key);
    }
  }

  /** The key held for an `api_key_env` name; undefined → the model client falls back to the environment. */
  apiKey(envName: string): string | undefined {
    return this.keys.get(envName);
  }
}

/**
 * The data directory's configuration file, checked and announced (Show Logs) once; undefined when
 * there is none or it cannot be used (said in Show Logs: the settings alone apply then).
 */
function readFileData(dataDir: string): Obj | undefined {
  try {
    const loaded = loadConfigFile(dataDir);
    if (!loaded) return undefined;
    diagnostics.info(`configuration: ${loaded.file}, with the deerflow.* settings over it`);
    return isObj(loaded.data) ? loaded.data : {};
  } catch (err) {
    diagnostics.warn(`configuration file not used: ${errorMessage(err)}`);
    return undefined;
  }
}

/** `over` on `base`, object by object; any other value (a list, a string) of `over` replaces. */
function overlay(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(out[k]) ? overlay(out[k], v) : v;
  return out;
}

function notInitialized(): HarnessError {
  return new HarnessError("not_initialized", "The harness is not initialized yet: send harness/initialize first.");
}
