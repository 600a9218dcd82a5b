/**
 * What the host told this harness process: where its data lives, the user's settings, and the API
 * keys. Keys live only here, in memory: never written to disk, never logged, never sent back;
 * each model a run uses (lead, title, summary, a subagent type's) gets the key held for its own
 * `api_key_env` name (startRun's heldKey → RunContext.keyFor), so the host can hold keys for several
 * providers and none reaches another provider's endpoint.
 */
import { isAbsolute } from "node:path";
import type { HarnessSettings } from "../../protocol/rpc.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { applyLlmCallConfig, parseHarnessConfig } from "../config/harnessConfig.js";
import { HarnessError } from "../errors.js";

export class Session {
  private dataDirValue: string | undefined;
  private settingsValue: HarnessSettings | undefined;
  private configValue: HarnessConfig | undefined;
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
    this.configure(settings);
    this.dataDirValue = dataDir;
    applyLlmCallConfig(this.config, dataDir);
  }

  /** Validated before anything changes: a bad setting leaves the previous ones in force. */
  configure(settings: HarnessSettings, apiKeys?: Record<string, string>): void {
    const config = parseHarnessConfig(
      {
        models: settings.models,
        ...(settings.default_model ? { default_model: settings.default_model } : {}),
        ...(settings.title_model ? { title_model: settings.title_model } : {}),
        sandbox: settings.sandbox,
        ...(settings.subagents ? { subagents: { enabled: settings.subagents.enabled } } : {}),
        ...(settings.memory ? { memory: { enabled: settings.memory.enabled } } : {}),
        ...(settings.token_budget ? { token_budget: { max_tokens_per_run: settings.token_budget.max_tokens_per_run } } : {}),
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
      },
      "the deerflow.* settings",
    );
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

function notInitialized(): HarnessError {
  return new HarnessError("not_initialized", "The harness is not initialized yet: send harness/initialize first.");
}
