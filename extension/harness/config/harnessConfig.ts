/**
 * Harness configuration: the models the user configured, and sandbox policy.
 *
 * The extension passes its `deerflow.*` settings; the CLI reads `<data-dir>/config.json` (or the
 * file named by DEERFLOW_CONFIG). The file lives outside the workspace on purpose: the sandbox can
 * write the workspace, and a config there could point a model (and its API key) at any endpoint.
 * API keys are never part of this config: they come from the environment (or SecretStorage
 * through the host) by name.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { HarnessError } from "../errors.js";
import { configureLlmRetry } from "../middlewares/llmErrorHandling.js";
import { configureLlmCircuit, llmCircuitStateFile } from "../middlewares/llmCircuitBreaker.js";
import { SubagentsConfigZ, SUBAGENTS_DEFAULTS } from "../subagents/config.js";
import { MemoryConfigZ, MEMORY_DEFAULTS } from "../memory/config.js";
import { SummarizationConfigZ } from "../middlewares/summarization.js";

export const ModelConfigZ = z.object({
  /** The name users pick (`--model NAME`, the model picker). */
  name: z.string().min(1),
  /** The provider's model id sent in requests. */
  model: z.string().min(1),
  /** OpenAI-compatible base URL; defaults to OPENAI_BASE_URL, then the OpenAI API. */
  base_url: z.string().url().optional(),
  /** Name of the environment variable holding this model's key; defaults to OPENAI_API_KEY. */
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  display_name: z.string().optional(),
  supports_vision: z.boolean().default(false),
  supports_thinking: z.boolean().default(false),
  /** DeerFlow: `reasoning_effort` is sent only to models that declare it (models/thinking.ts). */
  supports_reasoning_effort: z.boolean().default(false),
  /** Sent as `reasoning_effort`; a run's context `reasoning_effort` overrides it. */
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  /** DeerFlow's kwargs while thinking is on/off (`extra_body` merged into the request body). */
  when_thinking_enabled: z.record(z.string(), z.unknown()).optional(),
  when_thinking_disabled: z.record(z.string(), z.unknown()).optional(),
  /** DeerFlow's shortcut for `when_thinking_enabled.thinking`. */
  thinking: z.record(z.string(), z.unknown()).optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Whose prices estimate this model's cost when its base URL does not say (a genai-prices provider id, e.g. "openai"; models/pricing.ts). */
  pricing_provider: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).optional(),
});
export type ModelConfig = z.infer<typeof ModelConfigZ>;

/** The lead agent's turn budget when nothing sets one (issue 20): model requests per run. */
export const DEFAULT_MAX_TURNS = 200;

export const HarnessConfigZ = z.object({
  models: z.array(ModelConfigZ).default([]),
  default_model: z.string().optional(),
  title_model: z.string().optional(),
  sandbox: z
    .object({
      provider: z.enum(["auto", "local", "devcontainer"]).default("auto"),
      allow_host_commands: z.boolean().default(false),
      bash_timeout_seconds: z.number().positive().default(600),
    })
    .default({ provider: "auto", allow_host_commands: false, bash_timeout_seconds: 600 }),
  /** The approval policy per tool class (issue 13); unnamed classes keep their defaults. */
  approval: z
    .object({
      read: z.enum(["auto", "ask", "deny"]),
      write: z.enum(["auto", "ask", "deny"]),
      protected: z.enum(["auto", "ask", "deny"]),
      shell: z.enum(["auto", "ask", "deny"]),
      mcp: z.enum(["auto", "ask", "deny"]),
      other: z.enum(["auto", "ask", "deny"]),
    })
    .partial()
    .strict()
    .default({}),
  /** DeerFlow `llm_call.*`: retries of a failed model call, and a cap on simultaneous calls per endpoint (0 = none). */
  llm_call: z
    .object({
      retry_max_attempts: z.number().int().min(1).default(3),
      retry_base_delay_ms: z.number().int().min(0).default(1000),
      retry_cap_delay_ms: z.number().int().min(0).default(8000),
      burst_retry_base_delay_ms: z.number().int().min(0).default(5000),
      max_concurrent_calls: z.number().int().min(0).default(0),
    })
    .default({ retry_max_attempts: 3, retry_base_delay_ms: 1000, retry_cap_delay_ms: 8000, burst_retry_base_delay_ms: 5000, max_concurrent_calls: 0 }),
  /** DeerFlow `circuit_breaker.*`: this many exhausted provider failures in a row open it for the cool-down. */
  circuit_breaker: z
    .object({
      failure_threshold: z.number().int().min(1).default(5),
      recovery_timeout_sec: z.number().min(0).default(60),
    })
    .default({ failure_threshold: 5, recovery_timeout_sec: 60 }),
  /** DeerFlow `subagents.*` (issue 14): the `task` tool, its limits and budgets (subagents/config.ts). */
  subagents: SubagentsConfigZ.default(SUBAGENTS_DEFAULTS),
  /** DeerFlow `memory.*` (issue 15): long-term memory, on by default (memory/config.ts). */
  memory: MemoryConfigZ.default(MEMORY_DEFAULTS),
  /**
   * DeerFlow `summarization.*` (issue 15): enabled, model_name, trigger, keep,
   * trim_tokens_to_summarize, summary_prompt (middlewares/summarization.ts). On by default here, as
   * the `deerflow.summarization.enabled` setting, with DeerFlow's example values (32000 tokens, keep 10).
   */
  summarization: SummarizationConfigZ.default({ enabled: true }),
  /**
   * Model turns (model requests) one lead run may make (issue 20); at the budget the run ends
   * `success` / `turn_capped` and the user can continue. CLI `--max-turns`, `deerflow.maxTurnsPerRun`.
   */
  max_turns: z.number().int().min(1).default(DEFAULT_MAX_TURNS),
  /**
   * DeerFlow's `max_recursion_limit`: a hard ceiling on LangGraph steps per run. The recursion limit
   * is derived from the turn budget (agent/graph); this only lowers it, and the turn budget is
   * lowered with it so the turn cap still ends the run first.
   */
  max_recursion_limit: z.number().int().min(1).optional(),
  /** DeerFlow `token_budget.*` (issue 15): tokens (input + output) one run may use; 0 = no budget (middlewares/tokenBudget.ts). */
  token_budget: z
    .object({ max_tokens_per_run: z.number().int().min(0).default(0) })
    .strict()
    .default({ max_tokens_per_run: 0 }),
});
export type HarnessConfig = z.infer<typeof HarnessConfigZ>;

export function parseHarnessConfig(raw: unknown, source: string): HarnessConfig {
  const parsed = HarnessConfigZ.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: ${issues}`);
  }
  const names = new Set<string>();
  for (const m of parsed.data.models) {
    if (names.has(m.name)) throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: model name "${m.name}" is configured twice`);
    names.add(m.name);
  }
  return parsed.data;
}

/** Load the CLI's configuration: DEERFLOW_CONFIG, else `<dataDir>/config.json`, else defaults. */
export function loadHarnessConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): HarnessConfig {
  const file = env.DEERFLOW_CONFIG || join(dataDir, "config.json");
  if (!existsSync(file)) {
    if (env.DEERFLOW_CONFIG) throw new HarnessError("usage", `DEERFLOW_CONFIG names a file that does not exist: ${file}`);
    const defaults = parseHarnessConfig({}, "defaults");
    applyLlmCallConfig(defaults, dataDir);
    return defaults;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new HarnessError("usage", `Cannot read DeerFlow configuration ${file}: ${(err as Error).message}`);
  }
  const config = parseHarnessConfig(raw, file);
  applyLlmCallConfig(config, dataDir);
  return config;
}

/**
 * Apply the process-wide LLM settings (retries, circuit breaker, concurrency cap) of a loaded
 * configuration. The breaker's state is kept in the data directory, so consecutive CLI runs (one
 * process each) and the harness of the same data directory share it (see llmCircuitBreaker.ts).
 */
export function applyLlmCallConfig(config: HarnessConfig, dataDir: string): void {
  const c = config.llm_call;
  configureLlmRetry({ maxAttempts: c.retry_max_attempts, baseDelayMs: c.retry_base_delay_ms, capDelayMs: c.retry_cap_delay_ms, burstBaseDelayMs: c.burst_retry_base_delay_ms });
  configureLlmCircuit({
    failureThreshold: config.circuit_breaker.failure_threshold,
    recoveryTimeoutMs: config.circuit_breaker.recovery_timeout_sec * 1000,
    maxConcurrentCalls: c.max_concurrent_calls,
    stateFile: llmCircuitStateFile(dataDir),
  });
}
