// DeerFlow's configuration file (issue 22): config.yaml as DeerFlow writes it, config.json, $VAR
// values, DeerFlow's keys onto the port's, the project's aliases, and what is not supported.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatUnsupported, loadConfigFile, parseHarnessConfig, readHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { chainSettings, tokenBudgetSettings } from "../../../extension/harness/config/sections.js";
import { subagentSettings, subagentType, limitsFor, skillsFor } from "../../../extension/harness/subagents/config.js";
import { keyFromSource } from "../../../extension/harness/models/fileKeys.js";
import { resolveModel } from "../../../extension/harness/models/factory.js";
import { setDiagnostics } from "../../../extension/harness/diagnostics.js";

const EXAMPLE = join(import.meta.dirname, "../../fixtures/deerflow/config.example.yaml");

function dataDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-config-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Diagnostics said while `fn` runs. */
function captured<T>(fn: () => T): { value: T; warnings: string[] } {
  const warnings: string[] = [];
  setDiagnostics({ info: () => undefined, warn: (m) => void warnings.push(m) });
  try {
    return { value: fn(), warnings };
  } finally {
    setDiagnostics({ info: (m) => void process.stderr.write(`deerflow: ${m}\n`), warn: (m) => void process.stderr.write(`deerflow: warning: ${m}\n`) });
  }
}

test("DeerFlow's own config.example.yaml loads unchanged: its sections mean what they mean there, the rest is listed once", () => {
  const dir = dataDir();
  copyFileSync(EXAMPLE, join(dir, "config.yaml"));
  const { value: loaded, warnings } = captured(() => loadConfigFile(dir, {})!);
  const c = loaded.config;
  assert.equal(loaded.file, join(dir, "config.yaml"));
  assert.deepEqual(c.models, [], "`models:` with only commented examples is no models");
  assert.deepEqual(c.sandbox, { provider: "local", allow_host_commands: false, bash_timeout_seconds: 600 }, "LocalSandboxProvider, allow_host_bash, bash_command_timeout");
  assert.equal(tokenBudgetSettings(c.token_budget), undefined, "token_budget.enabled: false");
  assert.equal(c.max_recursion_limit, 1000);
  assert.equal(c.memory.enabled, true);
  assert.equal(c.memory.injection_enabled, true);
  assert.equal(c.memory.max_facts, 100);
  assert.equal(c.memory.fact_confidence_threshold, 0.7);
  assert.equal(c.memory.debounce_seconds, 30, "backend_config.debounce_seconds");
  assert.equal(c.memory.max_injection_tokens, 2000);
  assert.deepEqual(c.summarization.trigger, [{ type: "tokens", value: 32000 }]);
  assert.deepEqual(c.title, { enabled: true, max_words: 6, max_chars: 60, model_name: null });
  assert.equal(c.loop_detection.hard_limit, 5);
  assert.equal(c.tool_output.externalize_min_chars, 12000);
  assert.equal(c.uploads.max_files, 10);
  assert.equal(c.uploads.max_total_size, 104857600);
  assert.equal(c.read_before_write.enabled, true);
  assert.deepEqual(c.skills, { container_path: "/mnt/skills" }, "skills: DeerFlow's container_path, the only one supported");

  // DeerFlow's run_ownership (serve's orphan sweep, runs/sweep.ts): its lease and grace, as the example has them.
  assert.deepEqual(c.run_ownership, { lease_seconds: 30, grace_seconds: 10, heartbeat_enabled: false });
  assert.equal(warnings.length, 1, warnings.join("\n"));
  const [line] = warnings;
  assert.match(line!, new RegExp(`^${join(dir, "config.yaml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: not supported here: log_level, logging, tool_groups, suggestions, `));
  for (const section of ["scheduler", "skill_scan", "database", "mcp_tasks", "authorization", "suggestions", "input_polish"]) assert.ok(line!.includes(section), section);
  for (const key of ["memory.backend_config.{storage_class", "uploads.pdf_converter", "sandbox.{bash_output_max_chars", "summarization.skill_file_read_tool_names"]) assert.ok(line!.includes(key), key);
  // Sections the port implements are not in the list.
  for (const implemented of ["run_ownership", "skills", "tool_search", "token_budget", "loop_detection", "read_before_write", "safety_finish_reason", "title", "tool_output", "max_recursion_limit", "config_version"]) {
    assert.ok(!new RegExp(`(^|[ ,])${implemented}([,.]|$)`).test(line!.slice(line!.indexOf("not supported here"))), implemented);
  }
  // Loading the same file again says nothing new (once per process).
  assert.deepEqual(captured(() => loadConfigFile(dir, {})).warnings, []);
});

test("config.yaml wins over a config.json beside it (said once); DEERFLOW_CONFIG and DeerFlow's DEER_FLOW_CONFIG_PATH name any file", () => {
  const dir = dataDir({ "config.yaml": "default_model: from-yaml\n", "config.json": JSON.stringify({ default_model: "from-json" }) });
  const { value, warnings } = captured(() => loadConfigFile(dir, {})!);
  assert.equal(value.config.default_model, "from-yaml");
  assert.deepEqual(warnings, [`${join(dir, "config.json")} is ignored: ${join(dir, "config.yaml")} is the configuration used`]);
  const other = join(dataDir({ "mine.yml": "default_model: named\n" }), "mine.yml");
  assert.equal(loadConfigFile(dir, { DEERFLOW_CONFIG: other })!.config.default_model, "named");
  assert.equal(loadConfigFile(dir, { DEER_FLOW_CONFIG_PATH: other })!.config.default_model, "named");
  assert.throws(() => loadConfigFile(dir, { DEERFLOW_CONFIG: join(dir, "nope.yaml") }), /DEERFLOW_CONFIG names a file that does not exist/);
  assert.equal(loadConfigFile(dataDir(), {}), undefined, "no file: defaults");
  assert.equal(loadConfigFile(dataDir({ "config.json": JSON.stringify({ default_model: "json" }) }), {})!.config.default_model, "json");
});

test("a malformed file is a usage error naming the file and the line; a wrong value names its line too", () => {
  const broken = dataDir({ "config.yaml": "models:\n  - name: a\n    model: [unclosed\n  - name: b\n" });
  assert.throws(
    () => loadConfigFile(broken, {}),
    (err: Error & { code?: string }) => err.code === "usage" && err.message.startsWith(`Invalid DeerFlow configuration ${join(broken, "config.yaml")}:`) && /:\d+: /.test(err.message),
  );
  const wrong = dataDir({ "config.yaml": "title:\n  enabled: true\ntoken_budget:\n  enabled: true\n  max_tokens: lots\n" });
  assert.throws(() => loadConfigFile(wrong, {}), new RegExp(`Invalid DeerFlow configuration ${join(wrong, "config.yaml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:5: token_budget\\.max_tokens: `));
  const json = dataDir({ "config.json": '{\n  "models": [\n    {"name": "a",}\n  ]\n}\n' });
  assert.throws(() => loadConfigFile(json, {}), new RegExp(`config\\.json:3: `));
});

test("$VAR values resolve from the environment as DeerFlow does; a missing one names the key; a model's api_key is named, never resolved into the config", () => {
  const dir = dataDir({
    "config.yaml": [
      "models:",
      "  - name: gpt",
      "    use: langchain_openai:ChatOpenAI",
      "    model: $MODEL_ID",
      "    api_base: $GATEWAY",
      "    api_key: $GATEWAY_KEY",
      "  - name: literal",
      "    model: m",
      "    api_key: sk-written-in-the-file",
      "",
    ].join("\n"),
  });
  const env = { MODEL_ID: "gpt-4o-mini", GATEWAY: "http://127.0.0.1:9/v1", GATEWAY_KEY: "sk-env" };
  const loaded = loadConfigFile(dir, env)!;
  assert.deepEqual(loaded.config.models.map((m) => [m.name, m.model, m.base_url, m.api_key_env]), [
    ["gpt", "gpt-4o-mini", "http://127.0.0.1:9/v1", "GATEWAY_KEY"],
    ["literal", "m", undefined, "config-file:literal"],
  ]);
  assert.ok(!JSON.stringify(loaded.config).includes("sk-"), "no key in the configuration object");
  assert.equal(keyFromSource(resolveModel(loaded.config, { name: "literal" }).apiKeySource, {}), "sk-written-in-the-file");
  assert.equal(keyFromSource(resolveModel(loaded.config, { name: "gpt" }).apiKeySource, env), "sk-env");

  const missing = dataDir({ "config.yaml": "models:\n  - name: a\n    model: x\n    base_url: $NOT_SET_ANYWHERE\n" });
  assert.throws(() => loadConfigFile(missing, {}), /config\.yaml:4: models\[0\]\.base_url: the environment variable NOT_SET_ANYWHERE is not set/);
});

test("DeerFlow's model keys: use, display_name, context_window, max_tokens, temperature, thinking and pricing; unknown provider classes are said", () => {
  const r = readHarnessConfig(
    {
      models: [
        {
          name: "doubao", display_name: "Doubao", use: "deerflow.models.patched_deepseek:PatchedChatDeepSeek", model: "d-1", api_base: "https://ark.example/api/v3",
          timeout: 600, max_retries: 2, context_window: 262144, max_tokens: 4096, temperature: 0.7, supports_thinking: true, supports_vision: true,
          supports_reasoning_effort: true, when_thinking_enabled: { extra_body: { thinking: { type: "enabled" } } },
          pricing: { currency: "CNY", input_per_million: 8, output_per_million: 32, input_cache_hit_per_million: 0.8 },
        },
        { name: "claude", use: "langchain_anthropic:ChatAnthropic", model: "claude-sonnet-4" },
      ],
    },
    "test",
  );
  const m = resolveModel(r.config, { name: "doubao" });
  assert.equal(m.baseURL, "https://ark.example/api/v3");
  assert.equal(m.contextWindow, 262144);
  assert.equal(m.maxTokens, 4096);
  assert.equal(m.temperature, 0.7);
  assert.deepEqual(m.pricing, { currency: "CNY", input_per_million: 8, output_per_million: 32, input_cache_hit_per_million: 0.8 });
  assert.equal(m.thinking?.supportsReasoningEffort, true);
  assert.deepEqual(r.unsupported, ["models[claude].use: langchain_anthropic:ChatAnthropic (called as an OpenAI-compatible endpoint)", "models[doubao].timeout", "models[doubao].max_retries"]);
  assert.equal(formatUnsupported(r.unsupported), "models[claude].use: langchain_anthropic:ChatAnthropic (called as an OpenAI-compatible endpoint), models[doubao].{timeout, max_retries}");
});

test("token_budget: DeerFlow's keys, and the project's max_tokens_per_run as an alias; --max-tokens overrides the total", () => {
  const budget = (tb: unknown, override?: number) => tokenBudgetSettings(parseHarnessConfig({ token_budget: tb }, "t").token_budget, override);
  assert.equal(budget({}), undefined, "off by default, as DeerFlow");
  assert.deepEqual(budget({ enabled: true }), { maxTokens: 200000, warnThreshold: 0.8, hardStopThreshold: 1 });
  assert.deepEqual(budget({ enabled: true, max_tokens: 3000, max_input_tokens: 2000, max_output_tokens: 500, warn_threshold: 0.5, hard_stop_threshold: 0.9 }), {
    maxTokens: 3000, maxInputTokens: 2000, maxOutputTokens: 500, warnThreshold: 0.5, hardStopThreshold: 0.9,
  });
  assert.equal(budget({ enabled: false, max_tokens: 3000 }), undefined);
  assert.deepEqual(budget({ max_tokens_per_run: 500 }), { maxTokens: 500, warnThreshold: 0.8, hardStopThreshold: 1 }, "the alias turns it on");
  assert.equal(budget({ max_tokens_per_run: 0 }), undefined);
  assert.equal(budget({ enabled: false, max_tokens_per_run: 500 }), undefined, "DeerFlow's enabled wins over the alias");
  assert.deepEqual(budget({}, 700), { maxTokens: 700, warnThreshold: 0.8, hardStopThreshold: 1 });
  assert.deepEqual(budget({ enabled: true, max_output_tokens: 50 }, 700), { maxTokens: 700, maxOutputTokens: 50, warnThreshold: 0.8, hardStopThreshold: 1 });
  assert.equal(budget({ enabled: true }, 0), undefined, "--max-tokens 0: no budget");
  assert.throws(() => budget({ warn_threshold: 0.9, hard_stop_threshold: 0.5 }), /hard_stop_threshold must be >= warn_threshold/);
});

test("memory: every key of DeerFlow's memory_config.py is taken: host fields, backend_config, and the legacy top-level ones", () => {
  const m = (memory: unknown) => readHarnessConfig({ memory }, "t");
  const nested = m({
    enabled: true, injection_enabled: false, mode: "middleware", manager_class: "deermem", shutdown_flush_timeout_seconds: 10,
    backend_config: { debounce_seconds: 5, max_facts: 20, fact_confidence_threshold: 0.9, max_injection_tokens: 500, model: { model: "cheap" }, storage_path: "", queue_max_depth: 10 },
  });
  assert.deepEqual(nested.config.memory, { enabled: true, injection_enabled: false, debounce_seconds: 5, max_facts: 20, fact_confidence_threshold: 0.9, max_injection_tokens: 500, model_name: "cheap" });
  assert.deepEqual(nested.unsupported, ["memory.shutdown_flush_timeout_seconds", "memory.backend_config.queue_max_depth"]);
  const legacy = m({ max_facts: 7, fact_confidence_threshold: 0.5, model_name: "cheap", staleness_age_days: 30 });
  assert.equal(legacy.config.memory.max_facts, 7);
  assert.equal(legacy.config.memory.model_name, "cheap");
  assert.deepEqual(legacy.unsupported, ["memory.staleness_age_days"]);
  assert.deepEqual(m({ mode: "tool", manager_class: "mem0" }).unsupported, [
    'memory.manager_class: "mem0" (the memory here is DeerMem\'s file store)',
    'memory.mode: "tool" (memory here is extracted after each turn, mode middleware)',
  ]);
  assert.throws(() => m({ max_facts: "many" }), /memory\.max_facts/);
});

test("subagents: DeerFlow's max_turns, agents.<name>.* (model, token_budget object), custom_agents with model: inherit and DeerFlow's defaults", () => {
  const config = parseHarnessConfig(
    {
      models: [{ name: "lead", model: "l" }, { name: "cheap", model: "c", supports_vision: false }],
      subagents: {
        timeout_seconds: 1200,
        max_turns: 120,
        token_budget: { enabled: true, max_tokens: 1_000_000, warn_threshold: 0.7 },
        agents: { "general-purpose": { max_turns: 250, token_budget: { max_tokens: 3_000_000 }, skills: ["web-search"] }, bash: { model: "cheap", timeout_seconds: 300 } },
        custom_agents: { analysis: { description: "Data analysis", system_prompt: "You analyse.", model: "inherit", disallowed_tools: ["bash"] }, writer: { system_prompt: "You write.", model: "cheap" } },
      },
    },
    "t",
  );
  const s = subagentSettings(config.subagents, (name) => resolveModel(config, { name }));
  const gp = subagentType("general-purpose", s)!;
  assert.deepEqual(limitsFor(gp, s), { maxTurns: 250, timeoutMs: 1_200_000, tokenBudget: 3_000_000 });
  assert.deepEqual(limitsFor(subagentType("bash", s)!, s), { maxTurns: 120, timeoutMs: 300_000, tokenBudget: 1_000_000 }, "the global max_turns applies to built-ins");
  const analysis = subagentType("analysis", s)!;
  assert.deepEqual(limitsFor(analysis, s), { maxTurns: 50, timeoutMs: 900_000, tokenBudget: 1_000_000 }, "DeerFlow's custom defaults, not the built-ins' globals");
  assert.ok(analysis.disallowed.includes("bash") && analysis.disallowed.includes("task"));
  assert.equal(s.models.analysis, undefined, "inherit: the lead's model");
  assert.equal((s.models.writer as { resolved: { name: string } }).resolved.name, "cheap");
  assert.equal((s.models.bash as { resolved: { name: string } }).resolved.name, "cheap", "agents.<name>.model");
  const r = readHarnessConfig({ subagents: { token_budget: { enabled: false, warn_threshold: 0.7 }, agents: { bash: { skills: [] } } } }, "t");
  assert.equal(subagentSettings(r.config.subagents).tokenBudget, 0, "enabled: false: no budget");
  assert.deepEqual(r.unsupported, ["subagents.token_budget.warn_threshold"], "skills is DeerFlow's and supported");
  assert.deepEqual(skillsFor(subagentType("bash", subagentSettings(r.config.subagents))!, subagentSettings(r.config.subagents)), [], "agents.<name>.skills: [] = none");
  const sk = subagentSettings(parseHarnessConfig({ subagents: { agents: { b: { skills: ["y"] } }, custom_agents: { a: { system_prompt: "x", skills: ["z"] }, b: { system_prompt: "x", skills: ["z"] }, c: { system_prompt: "x", skills: null } } } }, "t").subagents);
  assert.deepEqual(skillsFor(subagentType("a", sk)!, sk), ["z"], "a custom type's own");
  assert.deepEqual(skillsFor(subagentType("b", sk)!, sk), ["y"], "the per-agent override wins");
  assert.equal(skillsFor(subagentType("c", sk)!, sk), undefined, "null: every enabled skill");
  assert.equal(skillsFor(subagentType("general-purpose", sk)!, sk), undefined);
  assert.equal(subagentSettings(parseHarnessConfig({ subagents: { token_budget: 500 } }, "t").subagents).tokenBudget, 500, "the project's number");
});

test("the middleware sections resolve to each run's chain; the project's keys stay as aliases", () => {
  const r = readHarnessConfig(
    {
      title_model: "titler",
      sandbox: { allow_host_bash: true, bash_command_timeout: 30 },
      title: { max_words: 4, max_chars: 40 },
      loop_detection: { warn_threshold: 2, hard_limit: 4, tool_freq_overrides: { bash: { warn: 100, hard_limit: 200 } } },
      tool_output: { externalize_min_chars: 5000, storage_subdir: "elsewhere" },
      read_before_write: { enabled: false },
      safety_finish_reason: { enabled: false, detectors: [{ use: "x:Y" }] },
      uploads: { max_file_count: 3, max_single_file_size: 1000 },
    },
    "t",
  );
  const c = r.config;
  assert.equal(c.title.model_name, "titler", "title_model → title.model_name");
  assert.deepEqual(c.sandbox, { provider: "auto", allow_host_commands: true, bash_timeout_seconds: 30 });
  assert.equal(c.uploads.max_files, 3);
  assert.equal(c.uploads.max_file_size, 1000);
  const chain = chainSettings(c);
  assert.deepEqual(chain.title, { maxWords: 4, maxChars: 40 });
  assert.deepEqual(chain.loopDetection && [chain.loopDetection.warnThreshold, chain.loopDetection.hardLimit, chain.loopDetection.toolFreqOverrides], [2, 4, { bash: [100, 200] }]);
  assert.equal(chain.toolOutput && chain.toolOutput.externalizeMinChars, 5000);
  assert.equal(chain.readBeforeWrite, false);
  assert.equal(chain.safetyFinishReason, false);
  assert.deepEqual(r.unsupported, ['tool_output.storage_subdir: "elsewhere" (tool results are saved under outputs/.tool-results)', 'safety_finish_reason.detectors: [{"use":"x:Y"}] (the built-in detectors are used)']);
  assert.equal(chainSettings(parseHarnessConfig({ title: { enabled: false }, loop_detection: { enabled: false }, tool_output: { enabled: false } }, "t")).title, false);
  assert.throws(() => parseHarnessConfig({ loop_detection: { warn_threshold: 6, hard_limit: 5 } }, "t"), /hard_limit must be greater than or equal to warn_threshold/);
});
