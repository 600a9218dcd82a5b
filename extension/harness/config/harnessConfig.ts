/**
 * Harness configuration: DeerFlow's `config.yaml` sections the port implements, with DeerFlow's
 * keys (./deerflowKeys.ts maps them and the project's aliases; ./sections.ts holds the middleware
 * sections), plus the port's own (`sandbox.provider`, `approval`, `default_model`, `max_turns`).
 *
 * The extension passes its `deerflow.*` settings; the CLI reads the configuration file
 * (./configFile.ts: DEERFLOW_CONFIG, else `<data-dir>/config.yaml`, else `config.json`). The file
 * lives outside the workspace on purpose: the sandbox can write the workspace, and a config there
 * could point a model (and its API key) at any endpoint. API keys are never part of this config:
 * they are named (`api_key_env`, `api_key: $NAME`) and read from the environment (or SecretStorage
 * through the host) when a request is made; a key written literally in the file is held apart
 * (models/factory.ts setFileKeys).
 *
 * Keys DeerFlow has and the port does not implement are never fatal: they are dropped and listed
 * once ("not supported here: …", on stderr for the CLI, in Show Logs for the extension). A value
 * of a key the port does implement is checked, and a wrong one is a usage error naming the file
 * and the line.
 */
import { z } from "zod";
import { HarnessError } from "../errors.js";
import { diagnostics } from "../diagnostics.js";
import { setFileKeys } from "../models/fileKeys.js";
import { configureLlmRetry } from "../middlewares/llmErrorHandling.js";
import { configureLlmCircuit, llmCircuitStateFile } from "../middlewares/llmCircuitBreaker.js";
import { SubagentsConfigZ, SUBAGENTS_DEFAULTS } from "../subagents/config.js";
import { MemoryConfigZ, MEMORY_DEFAULTS } from "../memory/config.js";
import { SummarizationConfigZ } from "../middlewares/summarization.js";
import { DatabaseConfigZ } from "../store/postgres/config.js";
import { configFilePath, dotted, readConfigFile, shadowedConfigFiles } from "./configFile.js";
import { fromDeerFlow, isObj, type Obj } from "./deerflowKeys.js";
import { sectionFields } from "./sections.js";
import { SkillsConfigZ } from "../skills/config.js";

/** DeerFlow's per-model prices (per million tokens, one currency for every model). */
export const PricingConfigZ = z.strictObject({
  currency: z.string().trim().regex(/^[A-Za-z]{3}$/, "an ISO currency code such as USD or CNY").default("USD"),
  input_per_million: z.number().min(0).default(0),
  output_per_million: z.number().min(0).default(0),
  /** Cache-hit input; absent: hits are billed at the input price (DeerFlow's conservative default). */
  input_cache_hit_per_million: z.number().min(0).nullable().optional(),
});

export const ModelConfigZ = z.strictObject({
  /** The name users pick (`--model NAME`, the model picker). */
  name: z.string().min(1),
  /** The provider's model id sent in requests. */
  model: z.string().min(1),
  /** OpenAI-compatible base URL; defaults to OPENAI_BASE_URL, then the OpenAI API. */
  base_url: z.string().url().optional(),
  /**
   * Name of the environment variable holding this model's key (DeerFlow: `api_key: $NAME`);
   * defaults to OPENAI_API_KEY. `config-file:<model>` names a key written in the file itself.
   */
  api_key_env: z.string().regex(/^(?:[A-Za-z_][A-Za-z0-9_]*|config-file:.+)$/).optional(),
  display_name: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
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
  /** DeerFlow: the per-call OUTPUT cap sent to the provider. */
  max_tokens: z.number().int().positive().optional(),
  /** DeerFlow: the model's total context (prompt + completion); summarization's `fraction` trigger reads it. */
  context_window: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** DeerFlow's `pricing` block: this model's own prices (models/pricing.ts), before any price list. */
  pricing: PricingConfigZ.optional(),
  /** Whose prices estimate this model's cost when its base URL does not say (a genai-prices provider id, e.g. "openai"; models/pricing.ts). */
  pricing_provider: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).optional(),
});
export type ModelConfig = z.infer<typeof ModelConfigZ>;

/** The lead agent's turn budget when nothing sets one (issue 20): model requests per run. */
export const DEFAULT_MAX_TURNS = 200;

export const HarnessConfigZ = z.strictObject({
  /** DeerFlow's version stamp of the file: accepted; the port has no config-upgrade step. */
  config_version: z.unknown().optional(),
  models: z.array(ModelConfigZ).default([]),
  /** The port's: the model a run uses when none is named (DeerFlow uses the first of `models`, as the port does without it). */
  default_model: z.string().optional(),
  sandbox: z
    .strictObject({
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
      web: z.enum(["auto", "ask", "deny"]),
      other: z.enum(["auto", "ask", "deny"]),
    })
    .partial()
    .strict()
    .default({}),
  /**
   * DeerFlow `tool_search.*` (issue 23): MCP tools deferred behind `tool_search`. `enabled` unset:
   * on when a run has more than `auto_threshold` MCP tools (mcp/deferred.ts).
   */
  tool_search: z
    .strictObject({
      enabled: z.boolean().optional(),
      auto_threshold: z.number().int().min(0).default(40),
      auto_promote_top_k: z.number().int().default(3),
    })
    .default({ auto_threshold: 40, auto_promote_top_k: 3 }),
  /** DeerFlow `llm_call.*`: retries of a failed model call, and a cap on simultaneous calls per endpoint (0 = none). */
  llm_call: z
    .strictObject({
      retry_max_attempts: z.number().int().min(1).default(3),
      retry_base_delay_ms: z.number().int().min(0).default(1000),
      retry_cap_delay_ms: z.number().int().min(0).default(8000),
      burst_retry_base_delay_ms: z.number().int().min(0).default(5000),
      max_concurrent_calls: z.number().int().min(0).default(0),
    })
    .default({ retry_max_attempts: 3, retry_base_delay_ms: 1000, retry_cap_delay_ms: 8000, burst_retry_base_delay_ms: 5000, max_concurrent_calls: 0 }),
  /** DeerFlow `circuit_breaker.*`: this many exhausted provider failures in a row open it for the cool-down. */
  circuit_breaker: z
    .strictObject({
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
  /**
   * DeerFlow `run_ownership.*`: a running run's lease (renewed by its worker's heartbeat) and the
   * grace past its expiry before another worker settles it `interrupted` (serve's sweep,
   * runs/sweep.ts). `heartbeat_enabled` is accepted for DeerFlow's files: the heartbeat is always on.
   */
  run_ownership: z
    .strictObject({
      lease_seconds: z.number().int().min(5).default(30),
      grace_seconds: z.number().int().min(0).default(10),
      heartbeat_enabled: z.boolean().optional(),
    })
    .default({ lease_seconds: 30, grace_seconds: 10 }),
  /** DeerFlow `database.*` (issue 26): sqlite (default, the data dir) or postgres at postgres_url (store/postgres/config.ts). */
  database: DatabaseConfigZ.optional(),
  /** DeerFlow's token_budget, title, loop_detection, tool_output, read_before_write, safety_finish_reason, uploads, token_usage (./sections.ts). */
  ...sectionFields,
  /** DeerFlow `skills.*` (issue 24): `path` (a DeerFlow skills root), `deferred_discovery` (skills/config.ts). */
  skills: SkillsConfigZ.optional(),
});
export type HarnessConfig = z.infer<typeof HarnessConfigZ>;

/** A parsed configuration, and what of it the port does not implement. */
export interface ParsedConfig {
  config: HarnessConfig;
  /** DeerFlow keys (dotted paths, some with their value and why) that were dropped. */
  unsupported: string[];
  /** Keys written literally in the file (`models[].api_key`), by source name: never in `config`. */
  keys: Map<string, string>;
}

/** The path as a person reads it: a model by its name (`models[gpt-4].timeout`). */
function displayPath(data: Obj, path: ReadonlyArray<PropertyKey>): string {
  const parts = path.map((p) => (typeof p === "symbol" ? String(p) : p));
  if (parts[0] === "models" && typeof parts[1] === "number") {
    const m = (data.models as unknown[] | undefined)?.[parts[1]];
    const name = isObj(m) && typeof m.name === "string" ? m.name : String(parts[1]);
    return `models[${name}]${parts.length > 2 ? `.${dotted(parts.slice(2))}` : ""}`;
  }
  return dotted(parts);
}

/**
 * DeerFlow's (or the project's) configuration, checked. `lineOf` says where a path is written
 * (a file's; absent for settings), so an error names the line.
 */
export function readHarnessConfig(raw: unknown, source: string, lineOf?: (path: ReadonlyArray<string | number>) => number | undefined): ParsedConfig {
  const mapped = fromDeerFlow(raw);
  const data = structuredClone(mapped.config);
  const unsupported = [...mapped.unsupported];
  // Keys the schema does not know are DeerFlow's (or typos): listed and dropped, then parsed again.
  for (;;) {
    const parsed = HarnessConfigZ.safeParse(data);
    if (parsed.success) {
      const names = new Set<string>();
      for (const m of parsed.data.models) {
        if (names.has(m.name)) throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: model name "${m.name}" is configured twice`);
        names.add(m.name);
      }
      return { config: parsed.data, unsupported, keys: mapped.keys };
    }
    const unknown = parsed.error.issues.filter((i) => i.code === "unrecognized_keys");
    if (unknown.length === 0) {
      const first = parsed.error.issues[0]!;
      const path = first.path.filter((p): p is string | number => typeof p !== "symbol");
      const line = lineOf?.(path);
      const issues = parsed.error.issues.map((i) => `${displayPath(data, i.path)}: ${i.message}`).join("; ");
      throw new HarnessError("usage", `Invalid DeerFlow configuration ${line ? `${source}:${line}` : `in ${source}`}: ${issues}`);
    }
    for (const issue of unknown) {
      let at: unknown = data;
      for (const p of issue.path) at = isObj(at) || Array.isArray(at) ? (at as Record<PropertyKey, unknown>)[p] : undefined;
      if (!isObj(at)) throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: ${displayPath(data, issue.path)}: ${issue.message}`);
      for (const k of (issue as { keys: string[] }).keys) {
        unsupported.push(displayPath(data, [...issue.path, k]));
        delete at[k];
      }
    }
  }
}

export function parseHarnessConfig(raw: unknown, source: string): HarnessConfig {
  return readHarnessConfig(raw, source).config;
}

/**
 * "tool_search, models[gpt].{timeout, max_retries}, …": paths under one parent are grouped, so the
 * list of a whole DeerFlow config.example.yaml stays one readable line.
 */
export function formatUnsupported(paths: readonly string[]): string {
  // In first-seen order: a path with a parent joins its siblings; a top-level key or an entry
  // that carries its value and reason (`memory.mode: tool (…)`) stands alone.
  const entries: Array<{ parent?: string; names: string[] }> = [];
  const byParent = new Map<string, { parent?: string; names: string[] }>();
  for (const p of paths) {
    const cut = p.includes(":") ? -1 : p.lastIndexOf(".");
    if (cut <= 0) {
      entries.push({ names: [p] });
      continue;
    }
    const parent = p.slice(0, cut);
    let entry = byParent.get(parent);
    if (!entry) {
      entry = { parent, names: [] };
      byParent.set(parent, entry);
      entries.push(entry);
    }
    entry.names.push(p.slice(cut + 1));
  }
  return entries
    .map((e) => (e.parent === undefined ? e.names[0]! : e.names.length === 1 ? `${e.parent}.${e.names[0]}` : `${e.parent}.{${e.names.join(", ")}}`))
    .join(", ");
}

/** Process-wide: each configuration file's list is said once, however often it is read. */
const announced = new Set<string>();

/** Say once what a file has that the port does not implement (stderr for the CLI, Show Logs for the extension). */
export function announceUnsupported(file: string, unsupported: readonly string[]): void {
  if (unsupported.length === 0) return;
  // Whole sections first (tool_search, scheduler, …), then keys inside the sections the port has.
  const key = (p: string) => p.split(":")[0]!;
  const isSection = (p: string) => !/[.[]/.test(key(p));
  const ordered = [...unsupported.filter(isSection), ...unsupported.filter((p) => !isSection(p))];
  const line = `${file}: not supported here: ${formatUnsupported(ordered)}`;
  if (announced.has(line)) return;
  announced.add(line);
  diagnostics.warn(line);
}

/**
 * The configuration file of a data directory, parsed (./configFile.ts says which file); undefined
 * when there is none. Its literal keys are handed to the model factory; its unsupported keys and a
 * config.json it shadows are announced once.
 */
export function loadConfigFile(dataDir: string, env: NodeJS.ProcessEnv = process.env): (ParsedConfig & { file: string; data: unknown }) | undefined {
  const file = configFilePath(dataDir, env);
  if (!file) return undefined;
  const read = readConfigFile(file, env);
  const parsed = readHarnessConfig(read.data, file, (path) => read.lineOf(path));
  setFileKeys(parsed.keys);
  for (const other of shadowedConfigFiles(dataDir, file, env)) diagnostics.warn(`${other} is ignored: ${file} is the configuration used`);
  announceUnsupported(file, parsed.unsupported);
  return { ...parsed, file, data: read.data };
}

/** Load the CLI's configuration: the data directory's configuration file, else defaults. */
export function loadHarnessConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): HarnessConfig {
  const config = loadConfigFile(dataDir, env)?.config ?? parseHarnessConfig({}, "defaults");
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
