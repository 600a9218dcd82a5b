/**
 * DeerFlow's configuration sections for the middlewares the port implements, with DeerFlow's keys,
 * defaults and checks (DeerFlow `config/*_config.py`), and what each resolves to for one run
 * (`chainSettings`, carried by RunContext to the lead's and the subagents' chains):
 *
 * - `token_budget` (TokenBudgetConfig): `enabled`, `max_tokens` (input + output), the optional
 *   `max_input_tokens` / `max_output_tokens`, `warn_threshold`, `hard_stop_threshold`
 *   (middlewares/tokenBudget.ts). The project's `max_tokens_per_run` is an alias: > 0 turns the
 *   budget on with that total, 0 leaves it off; DeerFlow's `enabled`/`max_tokens` win when set.
 * - `title` (TitleConfig): `enabled`, `max_words`, `max_chars`, `model_name`, `prompt_template`.
 * - `loop_detection` (LoopDetectionConfig), `tool_output` (ToolOutputConfig): every key.
 * - `read_before_write`, `safety_finish_reason`: `enabled` (a custom detector list is not ported).
 * - `uploads`: `max_files`, `max_file_size`, `max_total_size` per message (runs/launcher.ts).
 * - `token_usage`: `enabled` (usage is always recorded here; `false` is listed as not supported).
 */
import { z } from "zod";
import type { LoopDetectionOptions } from "../middlewares/loopDetection.js";
import type { ToolOutputBudgetOptions } from "../middlewares/toolOutputBudget.js";
import type { TokenBudgetSettings } from "../middlewares/tokenBudget.js";
import type { TitleOptions } from "../middlewares/title.js";
import type { WebFetchSettings } from "../tools/webFetch.js";
import { WebFetchConfigZ, webFetchSettings, type WebFetchConfig } from "./webTools.js";

const int = (min: number) => z.number().int().min(min);

export const TokenBudgetConfigZ = z
  .strictObject({
    enabled: z.boolean().optional(),
    max_tokens: int(1).optional(),
    max_input_tokens: int(1).nullable().optional(),
    max_output_tokens: int(1).nullable().optional(),
    warn_threshold: z.number().min(0).max(1).default(0.8),
    hard_stop_threshold: z.number().min(0).max(1).default(1),
    /** The project's earlier key, kept as an alias (see the header). */
    max_tokens_per_run: int(0).optional(),
  })
  .refine((b) => b.hard_stop_threshold >= b.warn_threshold, { message: "hard_stop_threshold must be >= warn_threshold", path: ["hard_stop_threshold"] });
export type TokenBudgetConfig = z.infer<typeof TokenBudgetConfigZ>;

/** DeerFlow's `token_budget.max_tokens` default. */
export const DEFAULT_TOKEN_BUDGET_MAX = 200_000;

export const TitleConfigZ = z.strictObject({
  enabled: z.boolean().default(true),
  max_words: int(1).max(20).default(6),
  max_chars: int(10).max(200).default(60),
  model_name: z.string().min(1).nullable().optional(),
  prompt_template: z.string().min(1).nullable().optional(),
});

const ToolFreqOverrideZ = z
  .strictObject({ warn: int(1), hard_limit: int(1) })
  .refine((o) => o.hard_limit >= o.warn, { message: "hard_limit must be >= warn", path: ["hard_limit"] });

export const LoopDetectionConfigZ = z
  .strictObject({
    enabled: z.boolean().default(true),
    warn_threshold: int(1).default(3),
    hard_limit: int(1).default(5),
    window_size: int(1).default(20),
    max_tracked_threads: int(1).default(100),
    tool_freq_warn: int(1).default(30),
    tool_freq_hard_limit: int(1).default(50),
    tool_freq_overrides: z.record(z.string(), ToolFreqOverrideZ).default({}),
  })
  .refine((c) => c.hard_limit >= c.warn_threshold, { message: "hard_limit must be greater than or equal to warn_threshold", path: ["hard_limit"] })
  .refine((c) => c.tool_freq_hard_limit >= c.tool_freq_warn, { message: "tool_freq_hard_limit must be greater than or equal to tool_freq_warn", path: ["tool_freq_hard_limit"] });

export const ToolOutputConfigZ = z.strictObject({
  enabled: z.boolean().default(true),
  externalize_min_chars: int(0).default(12_000),
  preview_head_chars: int(0).default(2_000),
  preview_tail_chars: int(0).default(1_000),
  fallback_max_chars: int(0).default(30_000),
  fallback_head_chars: int(0).default(8_000),
  fallback_tail_chars: int(0).default(3_000),
  /** Only DeerFlow's default: the outputs scanner and the delivery check know this folder (see deerflowKeys.ts). */
  storage_subdir: z.literal(".tool-results").optional(),
  exempt_tools: z.array(z.string()).default(["read_file", "read_file_tool"]),
  tool_overrides: z.record(z.string(), int(0)).default({}),
});

export const EnabledZ = z.strictObject({ enabled: z.boolean().default(true) });

export const UploadsConfigZ = z.strictObject({
  max_files: int(1).default(10),
  max_file_size: int(1).default(52_428_800),
  max_total_size: int(1).default(104_857_600),
  /** Only off: no document is converted here (DeerFlow's secure default). */
  auto_convert_documents: z.literal(false).optional(),
});
export type UploadsConfig = z.infer<typeof UploadsConfigZ>;

/** The sections' fields of HarnessConfigZ (./harnessConfig.ts spreads them in). */
export const sectionFields = {
  token_budget: TokenBudgetConfigZ.prefault({}),
  title: TitleConfigZ.prefault({}),
  loop_detection: LoopDetectionConfigZ.prefault({}),
  tool_output: ToolOutputConfigZ.prefault({}),
  read_before_write: EnabledZ.prefault({}),
  safety_finish_reason: EnabledZ.prefault({}),
  uploads: UploadsConfigZ.prefault({}),
  /** DeerFlow's `tools:` entry `name: web_fetch` (./webTools.ts); absent: no web_fetch. */
  web_fetch: WebFetchConfigZ.optional(),
  token_usage: EnabledZ.prefault({}),
};

type Sections = { [K in Exclude<keyof typeof sectionFields, "web_fetch">]: z.infer<(typeof sectionFields)[K]> } & { web_fetch?: WebFetchConfig };

/**
 * A run's token budget: the config's, or `override` (CLI `--max-tokens`, the extension's
 * `deerflow.maxTokensPerRun`) as the total, 0 = none. An override keeps the config's input/output
 * limits and thresholds only when the config's own budget is on.
 */
export function tokenBudgetSettings(c: Sections["token_budget"], override?: number): TokenBudgetSettings | undefined {
  const alias = c.max_tokens_per_run;
  const enabled = c.enabled ?? (alias !== undefined && alias > 0);
  const thresholds = { warnThreshold: c.warn_threshold, hardStopThreshold: c.hard_stop_threshold };
  const limits = {
    ...(c.max_input_tokens ? { maxInputTokens: c.max_input_tokens } : {}),
    ...(c.max_output_tokens ? { maxOutputTokens: c.max_output_tokens } : {}),
  };
  if (override !== undefined) {
    if (override <= 0) return undefined;
    return enabled ? { maxTokens: override, ...limits, ...thresholds } : { maxTokens: override, warnThreshold: 0.8, hardStopThreshold: 1 };
  }
  if (!enabled) return undefined;
  return { maxTokens: c.max_tokens ?? (alias && alias > 0 ? alias : DEFAULT_TOKEN_BUDGET_MAX), ...limits, ...thresholds };
}

/** What one run's middleware chains are configured with (absent/false: that middleware is off). */
export interface ChainSettings {
  title: TitleOptions | false;
  loopDetection: LoopDetectionOptions | false;
  toolOutput: ToolOutputBudgetOptions | false;
  readBeforeWrite: boolean;
  safetyFinishReason: boolean;
  tokenBudget?: TokenBudgetSettings;
  /** The run is offered web_fetch (issue 35), with these limits. */
  webFetch?: WebFetchSettings;
}

export function chainSettings(c: Sections, maxTokensOverride?: number): ChainSettings {
  const t = c.title;
  const l = c.loop_detection;
  const o = c.tool_output;
  const budget = tokenBudgetSettings(c.token_budget, maxTokensOverride);
  const web = webFetchSettings(c.web_fetch);
  return {
    title: t.enabled ? { maxWords: t.max_words, maxChars: t.max_chars, ...(t.prompt_template ? { promptTemplate: t.prompt_template } : {}) } : false,
    loopDetection: l.enabled
      ? {
          warnThreshold: l.warn_threshold,
          hardLimit: l.hard_limit,
          windowSize: l.window_size,
          maxTrackedThreads: l.max_tracked_threads,
          toolFreqWarn: l.tool_freq_warn,
          toolFreqHardLimit: l.tool_freq_hard_limit,
          toolFreqOverrides: Object.fromEntries(Object.entries(l.tool_freq_overrides).map(([k, v]) => [k, [v.warn, v.hard_limit] as const])),
        }
      : false,
    toolOutput: o.enabled
      ? {
          externalizeMinChars: o.externalize_min_chars,
          previewHeadChars: o.preview_head_chars,
          previewTailChars: o.preview_tail_chars,
          fallbackMaxChars: o.fallback_max_chars,
          fallbackHeadChars: o.fallback_head_chars,
          fallbackTailChars: o.fallback_tail_chars,
          exemptTools: o.exempt_tools,
          toolOverrides: o.tool_overrides,
        }
      : false,
    readBeforeWrite: c.read_before_write.enabled,
    safetyFinishReason: c.safety_finish_reason.enabled,
    ...(budget ? { tokenBudget: budget } : {}),
    ...(web ? { webFetch: web } : {}),
  };
}
