/**
 * DeerFlowSummarizationMiddleware (DeerFlow `summarization_middleware.py`, chain slot [18]): when
 * the history the model would be sent crosses a configured trigger, older messages are summarized
 * by a model, and the model sees the summary (rendered by DurableContext, slot [17]) plus the
 * preserved tail instead of them.
 *
 * Where we differ from DeerFlow, on purpose: DeerFlow REMOVES the summarized messages from state
 * (`RemoveMessage(REMOVE_ALL_MESSAGES)` + the tail). We never remove a message: the thread keeps
 * its whole conversation (the panel and `deerflow state` show it), `beforeModel` only writes
 * `summary_text` and `summary_upto` (what the summary covers, summarizationPlan.ts), and
 * `wrapModelCall` leaves the covered messages out of each MODEL REQUEST (request-only, like
 * DanglingToolCall). Everything else is DeerFlow's:
 * - triggers `tokens | messages | fraction`, any one crossed is enough (OR); counted over what the
 *   model would be sent: the unsummarized messages plus the existing summary. `fraction` needs the
 *   model's context window; unknown → that trigger is ignored, and that is logged once.
 * - `keep` (messages or tokens), the provider-safe cutoff, the latest real user message preserved,
 *   `trim_tokens_to_summarize`, the escaped `<existing_summary>`/`<new_messages>` prompt.
 * - the failure policy: the configured summary model, then the run's model, then no compaction.
 *   The automatic path never fails a run: the failure is logged and journaled as a `custom`
 *   `summarization_failed` event. Manual compaction (runs/compact.ts) raises instead.
 * - `beforeSummarize` (DeerFlow's `before_summarization` hooks, e.g. the memory flush) runs only
 *   once a summary exists, with the messages about to be summarized; its errors are logged.
 * The summary call is tagged `nostream`: its tokens never reach the run's `messages` stream.
 * Subagents do not get this middleware (their chains stay as they are).
 *
 * Graph overhead: none of its own: its `beforeModel` hook runs in the before_model step with the
 * chain's others (agent/graph/build.ts), and the request shaping is a wrapper.
 */
import { countTokensApproximately, createMiddleware } from "langchain";
import { HumanMessage, ToolMessage, AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { threadStateFields } from "../state/threadState.js";
import { tokenCounterFor } from "../models/tokenCount.js";
import { diagnostics } from "../diagnostics.js";
import { messageUsage, SUMMARIZATION_USAGE_EVENT, type TokenCounts } from "../runs/usage.js";
import { errorMessage, HarnessError } from "../errors.js";
import { contentText } from "./shared/messages.js";
import {
  buildSummaryPrompt,
  planCompaction,
  summarizedIds,
  unsummarized,
  DEFAULT_SUMMARY_PROMPT,
  type KeepSize,
  type SummaryUpto,
  type TriggerSize,
} from "./summarizationPlan.js";

/** DeerFlow's `summarization` configuration, resolved (config/harnessConfig.ts parses it). */
export interface SummarizationSettings {
  /** Automatic summarization; a manual compaction works either way. */
  enabled: boolean;
  /** The configured summary model's name; absent → the run's own model. */
  modelName?: string;
  trigger: TriggerSize[];
  keep: KeepSize;
  trimTokensToSummarize: number | null;
  summaryPrompt: string;
}

export const SUMMARIZATION_DEFAULTS: SummarizationSettings = {
  enabled: true,
  trigger: [{ type: "tokens", value: 32000 }],
  keep: { type: "messages", value: 10 },
  trimTokensToSummarize: 15564,
  summaryPrompt: DEFAULT_SUMMARY_PROMPT,
};

const ContextSizeZ = z.discriminatedUnion("type", [
  z.object({ type: z.literal("tokens"), value: z.number().int().positive() }).strict(),
  z.object({ type: z.literal("messages"), value: z.number().int().positive() }).strict(),
  z.object({ type: z.literal("fraction"), value: z.number().gt(0).max(1) }).strict(),
]);
const KeepZ = z.discriminatedUnion("type", [
  z.object({ type: z.literal("messages"), value: z.number().int().min(0) }).strict(),
  z.object({ type: z.literal("tokens"), value: z.number().int().min(0) }).strict(),
]);

/** The config file's `summarization` section, DeerFlow's keys (`trigger` may be one size or a list). */
export const SummarizationConfigZ = z
  .object({
    enabled: z.boolean().default(SUMMARIZATION_DEFAULTS.enabled),
    model_name: z.string().min(1).nullable().optional(),
    trigger: z.union([ContextSizeZ, z.array(ContextSizeZ)]).nullable().optional(),
    keep: KeepZ.optional(),
    trim_tokens_to_summarize: z.number().int().positive().nullable().optional(),
    summary_prompt: z
      .string()
      .refine((p) => p.includes("{messages}"), "must contain {messages}, where the conversation goes")
      .nullable()
      .optional(),
  })
  .strict();
export type SummarizationConfig = z.infer<typeof SummarizationConfigZ>;

export function summarizationSettings(c: SummarizationConfig | undefined): SummarizationSettings {
  if (!c) return SUMMARIZATION_DEFAULTS;
  const trigger = c.trigger === undefined ? SUMMARIZATION_DEFAULTS.trigger : c.trigger === null ? [] : Array.isArray(c.trigger) ? c.trigger : [c.trigger];
  return {
    enabled: c.enabled,
    ...(c.model_name ? { modelName: c.model_name } : {}),
    trigger,
    keep: c.keep ?? SUMMARIZATION_DEFAULTS.keep,
    trimTokensToSummarize: c.trim_tokens_to_summarize === undefined ? SUMMARIZATION_DEFAULTS.trimTokensToSummarize : c.trim_tokens_to_summarize,
    summaryPrompt: c.summary_prompt ?? DEFAULT_SUMMARY_PROMPT,
  };
}

/** A model that may write the summary, in DeerFlow's order of trying. */
export interface SummaryCandidate {
  name: string;
  model: BaseChatModel;
}

export interface SummarizationOptions {
  settings: SummarizationSettings;
  /** The configured summary model (if any), then the run's model; deduplicated by the caller. */
  candidates: SummaryCandidate[];
  /** The run model's provider id: which tokenizer counts (models/tokenCount.ts). */
  tokenModel: string;
  /** The run model's context window in tokens, when known (needed by `fraction`). */
  contextWindow?: number;
  /** Called with the messages about to be summarized, once their summary exists (memory flush). */
  beforeSummarize?: (messages: BaseMessage[]) => Promise<void>;
  /** Each automatic summary call's usage, as it is spent (the run's token budget counts it). */
  onUsage?: (usage: TokenCounts) => void;
}

/** The manual path's failure: every candidate failed (DeerFlow `SummaryGenerationError`). */
export class SummaryGenerationError extends HarnessError {
  constructor(readonly attempts: string[]) {
    super("summary_failed", `Summary generation failed: ${attempts.join("; ")}`);
    this.name = "SummaryGenerationError";
  }
}

export interface SummaryState {
  messages: BaseMessage[];
  summary_text?: string | null;
  summary_upto?: SummaryUpto | null;
}

export interface Compaction {
  summary_text: string;
  summary_upto: SummaryUpto;
  /** The model that wrote it (absent for a canned summary). */
  model?: string;
  summarized: number;
  preserved: number;
}

/** TAG_NOSTREAM, as TitleMiddleware: the `messages` stream mode skips the summary call. */
const SUMMARY_TAGS = ["middleware:summarize", "nostream"];

/** The messages a trigger is measured on: what the model would be sent, the summary included. */
function triggerMessages(state: SummaryState): BaseMessage[] {
  const visible = unsummarized(state.messages, state.summary_upto);
  return state.summary_text ? [...visible, new HumanMessage({ content: state.summary_text, name: "summary" })] : visible;
}

const fractionWarned = new Set<string>();

/**
 * Below this share of the lowest token threshold, the chars/4 estimate decides alone. A real
 * tokenizer costs (o200k_base: ~1.5 s to load, ~70 MB of heap), and most turns are far from any
 * threshold; chars/4 undercounts at worst about 4× (CJK text is ~1 token a character), so 1/5
 * leaves margin.
 */
const PRECISE_FROM = 0.2;

/** The tokens the model would be sent: estimated while far below every token trigger, counted with the model's tokenizer near one. */
async function measuredTokens(messages: BaseMessage[], o: SummarizationOptions): Promise<number> {
  const thresholds = o.settings.trigger.flatMap((t) =>
    t.type === "tokens" ? [t.value] : t.type === "fraction" && o.contextWindow !== undefined ? [t.value * o.contextWindow] : [],
  );
  if (thresholds.length === 0) return 0;
  const estimate = countTokensApproximately(messages);
  if (estimate < Math.min(...thresholds) * PRECISE_FROM) return estimate;
  return (await tokenCounterFor(o.tokenModel))(messages);
}

/** Any trigger crossed (DeerFlow's OR semantics). */
export function shouldSummarize(messages: BaseMessage[], tokens: number, triggers: TriggerSize[], contextWindow: number | undefined, modelId: string): boolean {
  for (const t of triggers) {
    if (t.type === "messages" && messages.length >= t.value) return true;
    if (t.type === "tokens" && tokens >= t.value) return true;
    if (t.type === "fraction") {
      if (contextWindow === undefined) {
        if (!fractionWarned.has(modelId)) {
          fractionWarned.add(modelId);
          diagnostics.warn(`summarization: the "fraction" trigger is ignored for model "${modelId}": its context window is unknown`);
        }
        continue;
      }
      if (tokens >= t.value * contextWindow) return true;
    }
  }
  return false;
}

/**
 * DeerFlow's `compact_state`: plan, summarize with the failure policy, run `beforeSummarize`.
 * Returns null when nothing needs (automatic) or can be (manual) summarized, or when every model
 * failed on the automatic path; `raiseOnFailure` (manual) throws SummaryGenerationError instead.
 */
export async function compactState(
  state: SummaryState,
  o: SummarizationOptions,
  opts: { force: boolean; raiseOnFailure: boolean; signal?: AbortSignal; onFailure?: (attempts: string[]) => void; onUsage?: (usage: TokenCounts, modelName: string) => void },
): Promise<Compaction | null> {
  if (!opts.force) {
    const measured = triggerMessages(state);
    if (!shouldSummarize(measured, await measuredTokens(measured, o), o.settings.trigger, o.contextWindow, o.tokenModel)) return null;
  }
  const countTokens = await tokenCounterFor(o.tokenModel);
  const plan = planCompaction(state.messages, state.summary_upto, o.settings.keep, countTokens);
  if (!plan) return null;
  const built = buildSummaryPrompt(plan.toSummarize, state.summary_text, { summaryPrompt: o.settings.summaryPrompt, trimTokens: o.settings.trimTokensToSummarize, countTokens });
  let text: string | undefined;
  let model: string | undefined;
  if ("canned" in built) {
    text = built.canned;
  } else {
    const attempts: string[] = [];
    for (const [i, c] of o.candidates.entries()) {
      const last = i === o.candidates.length - 1;
      try {
        const response = await c.model.invoke(built.prompt, { tags: SUMMARY_TAGS, metadata: { lc_source: "summarization" }, ...(opts.signal ? { signal: opts.signal } : {}) });
        // Spent even when the answer is empty: the run's usage counts every summary call.
        const spent = messageUsage(response);
        if (spent) opts.onUsage?.(spent, c.name);
        const out = contentText(response.content).trim();
        if (out) {
          text = out;
          model = c.name;
          break;
        }
        attempts.push(`${c.name}: the model returned an empty summary`);
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        attempts.push(`${c.name}: ${errorMessage(err)}`);
      }
      diagnostics.warn(`summarization: ${attempts.at(-1)}; ${last ? "skipping compaction" : "falling back to the run's model"}`);
    }
    if (text === undefined) {
      opts.onFailure?.(attempts);
      if (opts.raiseOnFailure) throw new SummaryGenerationError(attempts.length > 0 ? attempts : ["no summary model"]);
      return null;
    }
  }
  // Only once a summary exists (a flush for a summary that never materializes would repeat on the next attempt).
  if (o.beforeSummarize) {
    try {
      await o.beforeSummarize(plan.toSummarize);
    } catch (err) {
      diagnostics.warn(`summarization: the beforeSummarize hook failed: ${errorMessage(err)}`);
    }
  }
  return { summary_text: text, summary_upto: plan.upto, ...(model ? { model } : {}), summarized: plan.toSummarize.length, preserved: plan.preserved.length };
}

/**
 * The model request without the messages the summary covers. A ToolMessage whose call is no
 * longer in the request (a dangling call's placeholder next to a summarized call) goes too: a
 * result without its call is a provider 400.
 */
export function withoutSummarized(messages: BaseMessage[], state: SummaryState): BaseMessage[] {
  if (!state.summary_text || !state.summary_upto) return messages;
  const covered = summarizedIds(state.messages, state.summary_upto);
  if (covered.size === 0) return messages;
  const kept = messages.filter((m) => !m.id || !covered.has(m.id));
  const calls = new Set<string>();
  for (const m of kept) if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) calls.add(c.id);
  return kept.filter((m) => !ToolMessage.isInstance(m) || calls.has(m.tool_call_id));
}

const summaryState = new StateSchema({
  summary_text: threadStateFields.summary_text,
  summary_upto: threadStateFields.summary_upto,
});

export function summarizationMiddleware(o: SummarizationOptions) {
  return createMiddleware({
    name: "DeerFlowSummarizationMiddleware",
    stateSchema: summaryState,
    ...(o.settings.enabled
      ? {
          beforeModel: async (state: SummaryState, runtime: { writer?: ((chunk: unknown) => void) | undefined; signal?: AbortSignal }) => {
            // The automatic path never fails a run: an error outside the model calls (counting
            // tokens, planning the cut) is a compaction skipped, as a failed summary model is.
            const done = await compactState(state, o, {
              force: false,
              raiseOnFailure: false,
              ...(runtime.signal ? { signal: runtime.signal } : {}),
              // Journaled (a `custom` event) as well as logged: the run goes on without compaction.
              onFailure: (attempts) => runtime.writer?.({ type: "summarization_failed", attempts }),
              // The summary model's tokens belong to the run (runs/usage.ts adds them under `summarization`).
              onUsage: (usage, modelName) => {
                o.onUsage?.(usage);
                // Named, so the run's cost prices it at the summary model's rate (runs/usage.ts by_model).
                runtime.writer?.({ type: SUMMARIZATION_USAGE_EVENT, usage, model_name: modelName });
              },
            }).catch((err: unknown) => {
              if (runtime.signal?.aborted) throw err;
              diagnostics.warn(`summarization: skipped: ${errorMessage(err)}`);
              runtime.writer?.({ type: "summarization_failed", attempts: [errorMessage(err)] });
              return null;
            });
            return done ? { summary_text: done.summary_text, summary_upto: done.summary_upto } : undefined;
          },
        }
      : {}),
    wrapModelCall: (request, handler) => {
      const messages = withoutSummarized(request.messages, request.state);
      return handler(messages === request.messages ? request : { ...request, messages });
    },
  });
}
