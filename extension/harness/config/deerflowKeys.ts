/**
 * DeerFlow's configuration keys onto the port's. A DeerFlow `config.yaml` works as it is: each key
 * the port implements means what it means in DeerFlow, and the project's own keys of the
 * earlier `config.json` stay as aliases (README "Configuration"). This module only renames and
 * reshapes; the schema (./harnessConfig.ts) checks the values, and whatever key is left that the
 * port does not read is listed as "not supported here" by it, never fatal.
 *
 * What is mapped here (the rest of DeerFlow's keys need no mapping: same name, same meaning):
 * - top-level sections that are `null` are absent (DeerFlow's `_drop_null_config_sections`: a
 *   `models:` with only commented examples under it);
 * - `models[]`: `api_base` → `base_url` (DeerFlow's alias for OpenAI-compatible clients);
 *   `api_key: $NAME` → `api_key_env: NAME` (read when a request is made, see ./configFile.ts);
 *   a literal `api_key` is kept out of the configuration: it goes to the caller's `keys` map
 *   under a source name (models/factory.ts FILE_KEY_PREFIX); `use` is dropped: every model is
 *   called through the OpenAI-compatible client, and a `use` that is not an OpenAI-compatible
 *   class is listed as not supported (the model is still called as OpenAI-compatible);
 * - `sandbox`: `use: …LocalSandboxProvider` → `provider: local`, `allow_host_bash` →
 *   `allow_host_commands`, `bash_command_timeout` → `bash_timeout_seconds`;
 * - `title_model` (the project's) → `title.model_name` (DeerFlow's);
 * - `memory`: DeerFlow's `backend_config.*` (and the legacy top-level DeerMem keys it migrates)
 *   onto memory/config.ts's flat keys; `backend_config.model.model` → `model_name`; the host
 *   fields `manager_class: deermem` and `mode: middleware` are what the port is;
 * - `subagents.*.token_budget` as DeerFlow's object (`{enabled, max_tokens}`) or the project's
 *   number; the object's thresholds are listed as not supported (the subagent budget is a hard
 *   stop only, subagents/budget.ts);
 * - `subagents.max_concurrent_subagents` / `max_total_subagents` (DeerFlow's run-context names)
 *   → `max_concurrent` / `max_total_per_run`;
 * - `uploads`: DeerFlow's legacy `max_file_count` / `max_single_file_size`;
 * - `tools:`: its `name: web_fetch` entry → `web_fetch` (./webTools.ts).
 */
import { isBuiltinSubagent } from "../subagents/config.js";
import { mapToolsSection } from "./webTools.js";

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Source-name prefix of a key written literally in the file (models/factory.ts reads it). */
export const FILE_KEY_PREFIX = "config-file:";

export interface Mapped {
  /** The configuration in the port's shape, for the schema. */
  config: Obj;
  /** Keys (dotted paths) and values DeerFlow has that the port does not implement. */
  unsupported: string[];
  /** Literal `models[].api_key` values by source name: never part of `config`. */
  keys: Map<string, string>;
}

/** The `use` classes that speak the OpenAI-compatible chat completions API (DeerFlow's `models/`). */
const OPENAI_COMPATIBLE_USE = new Set([
  "langchain_openai:ChatOpenAI",
  "langchain_deepseek:ChatDeepSeek",
  "deerflow.models.patched_openai:PatchedChatOpenAI",
  "deerflow.models.patched_deepseek:PatchedChatDeepSeek",
  "deerflow.models.patched_mimo:PatchedChatMiMo",
  "deerflow.models.patched_minimax:PatchedChatMiniMax",
  "deerflow.models.patched_stepfun:PatchedChatStepFun",
  "deerflow.models.vllm_provider:VllmChatModel",
  "deerflow.models.mindie_provider:MindIEChatModel",
]);

const ENV_NAME = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

/** DeerMem's keys the port implements (memory/config.ts); every other DeerMem key is listed. */
const MEMORY_KEYS = ["debounce_seconds", "max_facts", "fact_confidence_threshold", "max_injection_tokens"] as const;
/** DeerFlow's host-shared memory fields (memory_config.py `_SHARED_FIELDS`). */
const MEMORY_SHARED = new Set(["enabled", "mode", "injection_enabled", "shutdown_flush_timeout_seconds", "manager_class", "backend_config"]);
/** DeerFlow's legacy top-level DeerMem fields (memory_config.py `_LEGACY_DEERMEM_FIELDS`), migrated into backend_config. */
const MEMORY_LEGACY = new Set([
  "storage_path", "storage_class", "debounce_seconds", "max_facts", "fact_confidence_threshold", "max_injection_tokens", "token_counting",
  "guaranteed_categories", "guaranteed_token_budget", "staleness_review_enabled", "staleness_age_days", "staleness_min_candidates",
  "staleness_max_removals_per_cycle", "staleness_protected_categories", "staleness_max_lifetime_multiplier", "staleness_max_extension_days",
  "consolidation_enabled", "consolidation_min_facts", "consolidation_max_groups_per_cycle", "consolidation_max_sources", "model_name",
]);

export function fromDeerFlow(raw: unknown): Mapped {
  const unsupported: string[] = [];
  const keys = new Map<string, string>();
  const config: Obj = {};
  for (const [k, v] of Object.entries(isObj(raw) ? raw : {})) if (v !== null) config[k] = v;
  if (Array.isArray(config.models)) config.models = config.models.map((m, i) => model(m, i, unsupported, keys));
  if (isObj(config.sandbox)) config.sandbox = sandbox(config.sandbox, unsupported);
  if (config.title_model !== undefined) {
    const title = isObj(config.title) ? { ...config.title } : {};
    if (title.model_name === undefined || title.model_name === null) title.model_name = config.title_model;
    config.title = title;
    delete config.title_model;
  }
  if (isObj(config.memory)) config.memory = memory(config.memory, unsupported);
  if (isObj(config.subagents)) config.subagents = subagents(config.subagents, unsupported);
  if (isObj(config.uploads)) config.uploads = uploads(config.uploads, unsupported);
  if ("tools" in config) mapToolsSection(config, unsupported);
  dropUnported(config, "summarization", "keep", (v) => isObj(v) && v.type === "fraction", unsupported, "(keep is messages or tokens here; the default, 10 messages, applies)", true);
  dropUnported(config, "tool_output", "storage_subdir", (v) => v !== ".tool-results", unsupported, "(tool results are saved under outputs/.tool-results)");
  dropUnported(config, "safety_finish_reason", "detectors", (v) => v !== null, unsupported, "(the built-in detectors are used)");
  dropUnported(config, "token_usage", "enabled", (v) => v === false, unsupported, "(usage is always recorded)");
  return { config, unsupported, keys };
}

/**
 * `section.key` when `unported(value)`: listed as not supported and dropped, so the port's default
 * applies. A value the port does support is dropped too (`keepSupported` false) where the port's
 * behaviour IS that value (a default it cannot change), or kept for the schema.
 */
function dropUnported(config: Obj, section: string, key: string, unported: (v: unknown) => boolean, unsupported: string[], why: string, keepSupported = false): void {
  const s = config[section];
  if (!isObj(s) || !(key in s)) return;
  const copy = { ...s };
  const drop = unported(copy[key]);
  if (drop) unsupported.push(`${section}.${key}: ${JSON.stringify(copy[key])} ${why}`);
  if (drop || !keepSupported) delete copy[key];
  config[section] = copy;
}

function uploads(u: Obj, unsupported: string[]): Obj {
  const out = renamed(u, { max_file_count: "max_files", max_single_file_size: "max_file_size" });
  // No document conversion here: an upload reaches the model as the file it is.
  if (out.auto_convert_documents !== undefined && out.auto_convert_documents !== false) unsupported.push("uploads.auto_convert_documents (no document conversion here)");
  if (out.auto_convert_documents !== false) delete out.auto_convert_documents;
  if ("pdf_converter" in out) {
    unsupported.push("uploads.pdf_converter");
    delete out.pdf_converter;
  }
  return out;
}

/** `from` keys renamed to `to` unless `to` is already set (DeerFlow's own key wins over its alias). */
function renamed(o: Obj, names: Record<string, string>): Obj {
  const out = { ...o };
  for (const [from, to] of Object.entries(names)) {
    if (!(from in out)) continue;
    if (out[to] === undefined || out[to] === null) out[to] = out[from];
    delete out[from];
  }
  return out;
}

function model(m: unknown, i: number, unsupported: string[], keys: Map<string, string>): unknown {
  if (!isObj(m)) return m;
  const out = renamed(m, { api_base: "base_url" });
  const label = typeof out.name === "string" && out.name ? out.name : String(i);
  if (out.base_url === null) delete out.base_url;
  if ("api_key" in out) {
    const key = out.api_key;
    delete out.api_key;
    const named = typeof key === "string" ? ENV_NAME.exec(key)?.[1] : undefined;
    if (named) {
      out.api_key_env ??= named;
    } else if (typeof key === "string" && key.trim() !== "") {
      const source = `${FILE_KEY_PREFIX}${label}`;
      keys.set(source, key);
      out.api_key_env ??= source;
    }
  }
  if ("use" in out) {
    if (typeof out.use === "string" && !OPENAI_COMPATIBLE_USE.has(out.use)) unsupported.push(`models[${label}].use: ${out.use} (called as an OpenAI-compatible endpoint)`);
    delete out.use;
  }
  return out;
}

function sandbox(s: Obj, unsupported: string[]): Obj {
  const out = renamed(s, { allow_host_bash: "allow_host_commands", bash_command_timeout: "bash_timeout_seconds" });
  if ("use" in out) {
    if (typeof out.use === "string" && /(^|[.:])LocalSandboxProvider$/.test(out.use)) out.provider ??= "local";
    else unsupported.push(`sandbox.use: ${JSON.stringify(out.use)} (the sandbox here is sandbox.provider: auto, local or devcontainer)`);
    delete out.use;
  }
  return out;
}

function memory(m: Obj, unsupported: string[]): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === "backend_config" || k === "manager_class" || k === "mode" || v === null) continue;
    if (MEMORY_SHARED.has(k) || (MEMORY_KEYS as readonly string[]).includes(k) || k === "model_name") out[k] = v;
    else if (MEMORY_LEGACY.has(k)) {
      if (v !== null && v !== "") unsupported.push(`memory.${k}`);
    } else out[k] = v; // the schema lists it (a key neither DeerFlow nor the port has)
  }
  if (m.manager_class !== undefined && m.manager_class !== "deermem") unsupported.push(`memory.manager_class: ${JSON.stringify(m.manager_class)} (the memory here is DeerMem's file store)`);
  if (m.mode !== undefined && m.mode !== "middleware") unsupported.push(`memory.mode: ${JSON.stringify(m.mode)} (memory here is extracted after each turn, mode middleware)`);
  if (out.shutdown_flush_timeout_seconds !== undefined) {
    unsupported.push("memory.shutdown_flush_timeout_seconds");
    delete out.shutdown_flush_timeout_seconds;
  }
  const backend = isObj(m.backend_config) ? m.backend_config : {};
  for (const [k, v] of Object.entries(backend)) {
    if ((MEMORY_KEYS as readonly string[]).includes(k)) {
      if (v === null) continue;
      // An explicit backend_config value wins over a legacy top-level one (DeerFlow's migration).
      out[k] = v;
    } else if (k === "model") {
      const name = isObj(v) ? v.model : undefined;
      if (typeof name === "string" && name) out.model_name = name;
      const extra = isObj(v) ? Object.keys(v).filter((x) => x !== "model" && v[x] !== null && v[x] !== undefined) : [];
      if (extra.length > 0) unsupported.push(`memory.backend_config.model.{${extra.join(", ")}} (the extraction model is one of models:, by its name)`);
    } else if (v !== null && v !== "") {
      unsupported.push(`memory.backend_config.${k}`);
    }
  }
  return out;
}

/** DeerFlow's TokenBudgetConfig for a subagent, or the project's number: only `enabled` and `max_tokens` are the port's. */
function subagentBudget(b: unknown, at: string, unsupported: string[]): unknown {
  if (!isObj(b)) return b;
  const out: Obj = {};
  for (const [k, v] of Object.entries(b)) {
    if (k === "enabled" || k === "max_tokens") out[k] = v;
    else if (v !== null) unsupported.push(`${at}.token_budget.${k}`);
  }
  return out;
}

function subagents(s: Obj, unsupported: string[]): Obj {
  // DeerFlow's per-run context names for the two limits (`max_concurrent_subagents`, `max_total_subagents`).
  const out: Obj = renamed(s, { max_concurrent_subagents: "max_concurrent", max_total_subagents: "max_total_per_run" });
  if ("token_budget" in out) out.token_budget = subagentBudget(out.token_budget, "subagents", unsupported);
  const perAgent = (group: "agents" | "custom_agents") => {
    const entries = out[group];
    if (entries === null) delete out[group];
    if (!isObj(entries)) return;
    out[group] = Object.fromEntries(
      Object.entries(entries).flatMap(([name, a]) => {
        // DeerFlow accepts a custom type named like a built-in, and the built-in wins: said, then dropped.
        if (group === "custom_agents" && isBuiltinSubagent(name)) {
          unsupported.push(`subagents.custom_agents.${name}: the built-in subagent type of that name is used; rename the custom one to use it`);
          return [];
        }
        if (!isObj(a)) return [[name, a]];
        const next: Obj = { ...a };
        if ("token_budget" in next) next.token_budget = subagentBudget(next.token_budget, `subagents.${group}.${name}`, unsupported);
        for (const k of Object.keys(next)) if (next[k] === null) delete next[k];
        return [[name, next]];
      }),
    );
  };
  perAgent("agents");
  perAgent("custom_agents");
  return out;
}
