/**
 * Summarization on the run side (issue 15): what a run's summarization uses (settings, summary
 * models in DeerFlow's order), and manual compaction, `deerflow compact` / `threads/compact` /
 * "DeerFlow: Compact Thread" (DeerFlow `POST /api/threads/{id}/compact`).
 *
 * Manual compaction forces a summary whatever the trigger, and FAILS VISIBLY when every summary
 * model fails (unlike the automatic path, which never fails a run). It holds the run system's own
 * lock: it is admitted as a run of the thread (strategy "reject": refused with thread_busy while a
 * run is active, and no run starts while it works), so a live run can never write a checkpoint
 * built from a state without the new summary. The run is journaled like any run: a `custom`
 * `context_compacted` event with what the summary covers, then its `end` (`error` with the reason
 * when the summary failed). The summary is written as a new checkpoint (source "update") that
 * changes only `summary_text` and `summary_upto`: no message is removed. Like any run it can be
 * cancelled (deerflow cancel, runs/cancel, from this process or another): the summary call is
 * aborted, nothing is written, and the run ends `interrupted`.
 */
import { randomUUID } from "node:crypto";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BaseMessage } from "@langchain/core/messages";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { createChatModel, resolveModel, runKeys, withKey, type KeyFor } from "../models/factory.js";
import type { ResolvedModel } from "../models/resolvedModel.js";
import {
  compactState,
  summarizationSettings,
  SummaryGenerationError,
  type SummarizationOptions,
  type SummarizationSettings,
  type SummaryCandidate,
} from "../middlewares/summarization.js";
import type { SummaryUpto } from "../middlewares/summarizationPlan.js";
import { diagnostics } from "../diagnostics.js";
import { errorMessage, HarnessError } from "../errors.js";
import { validateThreadId } from "../threads/threadDirs.js";
import type { ThreadStore } from "../store/threads.js";
import type { RunManager } from "./manager.js";
import { endRun } from "./ending.js";
import { RunAbort } from "./runTurn.js";
import { writeChannels } from "../threads/checkpointUpdate.js";
import { addUsage, withCost, type TokenCounts } from "./usage.js";

/** A run's summarization, resolved from the configuration once (startRun, compaction). */
export interface RunSummarization {
  settings: SummarizationSettings;
  /** The configured `model_name`, resolved; absent → the run's model summarizes. */
  summaryModel?: ResolvedModel;
}

export function resolveSummarization(config: HarnessConfig): RunSummarization {
  const settings = summarizationSettings(config.summarization);
  if (!settings.modelName) return { settings };
  try {
    return { settings, summaryModel: resolveModel(config, { name: settings.modelName }) };
  } catch (err) {
    // DeerFlow: a summary model that cannot be built falls through to the run's own model.
    diagnostics.warn(`summarization: model_name "${settings.modelName}" cannot be used (${errorMessage(err)}); the run's model summarizes`);
    return { settings };
  }
}

/**
 * The middleware's options for a run on `runModel`: the configured summary model first, then the
 * run's own model (DeerFlow `_generation_candidate_names`), thinking off as DeerFlow builds them.
 * `keyFor` gives each its own key (the run's RunContext.keyFor); absent → the environment.
 */
export function summarizationOptions(s: RunSummarization, runModel: ResolvedModel, keyFor?: KeyFor): Omit<SummarizationOptions, "beforeSummarize"> {
  const build = (m: ResolvedModel) => createChatModel(m, { thinkingEnabled: false, ...withKey(keyFor, m) });
  const candidates: SummaryCandidate[] = [];
  if (s.summaryModel && s.summaryModel.name !== runModel.name) candidates.push({ name: s.summaryModel.name, model: build(s.summaryModel) });
  const run = build(runModel);
  candidates.push({ name: runModel.name, model: run });
  // DeerFlow's configured `context_window` first; else the model's own profile knows its window for
  // OpenAI ids; an unknown model has none (no `fraction`).
  const contextWindow = runModel.contextWindow ?? (run as { profile?: { maxInputTokens?: number } }).profile?.maxInputTokens;
  return { settings: s.settings, candidates, tokenModel: runModel.model, ...(typeof contextWindow === "number" ? { contextWindow } : {}) };
}

export interface CompactServices {
  workspaceFolder: string;
  threads: ThreadStore;
  manager: RunManager;
  checkpointer: BaseCheckpointSaver;
  config: HarnessConfig;
}

export interface CompactRequest {
  threadId: string;
  /** The run model (the fallback summary model); absent → the default model. */
  model?: string;
  baseURL?: string;
  /** The run model's own key (never given to the configured summary model). */
  apiKey?: string;
  /** The keys held by `api_key_env` name (the harness server's session): a summary model gets its own. */
  heldKey?: (apiKeySource: string) => string | undefined;
  /** Called with the messages about to be summarized once the summary exists (e.g. a memory flush). */
  beforeSummarize?: (messages: BaseMessage[]) => Promise<void>;
  signal?: AbortSignal;
}

export interface CompactResult {
  run_id: string;
  thread_id: string;
  /** False when there was nothing to summarize (the thread is within `keep`). */
  compacted: boolean;
  reason?: string;
  summary_text?: string;
  summary_upto?: SummaryUpto;
  /** Messages the new summary covers, and messages the model still sees in full. */
  summarized?: number;
  preserved?: number;
  model?: string;
}

function latest(threadId: string) {
  return { configurable: { thread_id: threadId, checkpoint_ns: "" } };
}

interface SummaryChannels {
  messages?: BaseMessage[];
  summary_text?: string | null;
  summary_upto?: SummaryUpto | null;
}

/**
 * The model a manual compaction summarizes with (and prices, and counts tokens for): the one the
 * caller named; else the model of the thread's latest run (an earlier compaction's own run aside)
 * while it is still configured — the conversation's model, not whatever the default is now; else
 * the default. One rule for `deerflow compact` and `threads/compact`.
 */
export function compactionModel(config: HarnessConfig, manager: RunManager, threadId: string, req: { model?: string; baseURL?: string }): ResolvedModel {
  let name = req.model;
  if (!name && !req.baseURL) {
    for (const r of manager.runs.listByThread(threadId)) {
      if (r.input.compact === true) continue;
      if (config.models.some((m) => m.name === r.model)) name = r.model;
      break;
    }
  }
  return resolveModel(config, { ...(name ? { name } : {}), ...(req.baseURL ? { baseURL: req.baseURL } : {}) });
}

/**
 * Force a summary of the thread now. Throws HarnessError: thread_not_found, workspace_mismatch,
 * thread_busy (a run is active), unknown_model/no_models, summary_failed (every model failed).
 */
export async function compactThread(s: CompactServices, req: CompactRequest): Promise<CompactResult> {
  validateThreadId(req.threadId);
  const thread = s.threads.get(req.threadId);
  if (!thread) throw new HarnessError("thread_not_found", `No thread ${req.threadId} in this workspace.`);
  if (thread.workspaceFolder !== s.workspaceFolder) throw new HarnessError("workspace_mismatch", `Thread ${req.threadId} belongs to another workspace folder.`);
  const runModel = resolveModel(s.config, { ...(req.model ? { name: req.model } : {}), ...(req.baseURL ? { baseURL: req.baseURL } : {}) });
  const summarization = resolveSummarization(s.config);
  const options: SummarizationOptions = {
    ...summarizationOptions(summarization, runModel, runKeys(runModel, req.apiKey, req.heldKey)),
    ...(req.beforeSummarize ? { beforeSummarize: req.beforeSummarize } : {}),
  };
  const { manager } = s;
  const controller = new AbortController();
  const signal = req.signal ? AbortSignal.any([controller.signal, req.signal]) : controller.signal;
  // The run system's lock: thread_busy while a run is active; no run starts until this one ends.
  const { run } = manager.admit({
    run_id: randomUUID(),
    thread_id: req.threadId,
    multitask_strategy: "reject",
    idempotency_key: null,
    model: runModel.name,
    input: { prompt: "", files: [], plan_mode: false, compact: true },
    context: {},
  });
  const base = { run_id: run.run_id, thread_id: req.threadId };
  // A cancel in this process aborts it at once (the run manager's local runs); one from another
  // process is seen at the next lease renewal, as the worker sees it.
  const unregister = manager.registerLocal(run.run_id, controller);
  if (!manager.runs.start(run.run_id, manager.owner, manager.leaseTtlMs)) {
    unregister();
    endRun(manager, { runId: run.run_id, from: ["pending"], status: "interrupted", error: "Cancelled before it started." });
    throw new HarnessError("thread_busy", "The compaction was cancelled before it started.");
  }
  const stillRunning = () => !signal.aborted && manager.runs.get(run.run_id)?.status === "running";
  // What the summary calls spent is this run's usage (split under `summarization`, as the
  // automatic path reports it), priced by the model that answered.
  let spent: TokenCounts | undefined;
  const usageOf = (answeredBy: string | undefined): Record<string, unknown> | null => {
    if (!spent) return null;
    const priced = answeredBy && summarization.summaryModel?.name === answeredBy ? summarization.summaryModel : runModel;
    return { ...withCost(spent, priced), summarization: spent };
  };
  const stopHeartbeat = manager.startHeartbeat(run.run_id, (why) => controller.abort(new RunAbort("interrupted", why)));
  const cancelled = (): HarnessError => {
    const ended = endRun(manager, { runId: run.run_id, from: ["running"], status: "interrupted", error: "Cancelled.", usage: usageOf(undefined) });
    return new HarnessError("cancelled", `The compaction was cancelled: ${ended?.error ?? "Cancelled."} Nothing was written.`);
  };
  try {
    const tuple = await s.checkpointer.getTuple(latest(req.threadId));
    const values = (tuple?.checkpoint.channel_values ?? {}) as SummaryChannels;
    const done = await compactState(
      { messages: values.messages ?? [], summary_text: values.summary_text ?? null, summary_upto: values.summary_upto ?? null },
      // The memory flush only for a compaction that is still going to be written.
      { ...options, ...(req.beforeSummarize ? { beforeSummarize: (m: BaseMessage[]) => (stillRunning() ? req.beforeSummarize!(m) : Promise.resolve()) } : {}) },
      { force: true, raiseOnFailure: true, onUsage: (u) => (spent = addUsage(spent, u)), signal },
    );
    // Cancelled meanwhile: its summary is not written; the run stays `interrupted`.
    if (!stillRunning()) throw cancelled();
    if (!tuple || !done) {
      const keep = options.settings.keep;
      const reason = `Nothing to compact: the model already sees at most ${keep.value} ${keep.type} of this thread in full (keep).`;
      manager.journal.append({ ...base, event: "custom", data: { type: "context_compacted", compacted: false, reason } });
      endRun(manager, { runId: run.run_id, from: ["running"], status: "success", usage: usageOf(undefined) });
      return { ...base, compacted: false, reason };
    }
    // Only the two summary channels change; no message is removed (threads/checkpointUpdate.ts).
    await writeChannels(s.checkpointer, tuple, { summary_text: done.summary_text, summary_upto: done.summary_upto });
    const result: CompactResult = {
      ...base,
      compacted: true,
      summary_text: done.summary_text,
      summary_upto: done.summary_upto,
      summarized: done.summarized,
      preserved: done.preserved,
      ...(done.model ? { model: done.model } : {}),
    };
    manager.journal.append({
      ...base,
      event: "custom",
      data: { type: "context_compacted", compacted: true, summary_upto: done.summary_upto, summarized: done.summarized, preserved: done.preserved, ...(done.model ? { model: done.model } : {}) },
    });
    endRun(manager, { runId: run.run_id, from: ["running"], status: "success", usage: usageOf(done.model) });
    s.threads.touch(req.threadId);
    return result;
  } catch (err) {
    if (err instanceof HarnessError && err.code === "cancelled") throw err;
    if (!stillRunning()) throw cancelled();
    const message = err instanceof SummaryGenerationError ? err.message : `The compaction failed: ${errorMessage(err)}`;
    endRun(manager, { runId: run.run_id, from: ["running"], status: "error", error: message, usage: usageOf(undefined) });
    if (err instanceof HarnessError) throw err;
    throw new HarnessError("summary_failed", message, { cause: err });
  } finally {
    stopHeartbeat();
    unregister();
  }
}
