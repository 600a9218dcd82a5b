/**
 * `deerflow compact`: summarize a thread's older messages now, whatever the trigger (manual
 * compaction, runs/compaction.ts). No message is removed: `deerflow state` still lists them all;
 * the model's next requests carry the summary and the preserved tail instead.
 *
 * Prints one JSON line: `{run_id, thread_id, compacted, summary_text, summary_upto, summarized,
 * preserved, model}`, or `{..., compacted: false, reason}` when the thread is within `keep`.
 * Exit 0 then; exit 1 with the reason on stderr when the summary model fails (the configured one,
 * then the run's), the thread is busy with a run, or it does not exist; exit 2 on a usage error.
 * The model: `--model`, else the one the thread's latest run used (while still configured), else
 * the default. Its key comes from the environment (OPENAI_API_KEY or the model's api_key_env).
 * With long-term memory on, what the summary covers is queued for fact extraction first
 * (DeerFlow's memory_flush_hook) and extracted before the process exits; `--no-memory` skips it.
 */
import { parse, requireString, workspaceArg, writeJsonLine, valueUsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { openRunSystem } from "../runs/services.js";
import { compactionModel, compactThread } from "../runs/compaction.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { HarnessError } from "../errors.js";
import { openRunMemory } from "./memory.js";
import { memoryRunHooks } from "../memory/hooks.js";

const options = {
  workspace: { type: "string" },
  thread: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  "data-dir": { type: "string" },
  "no-memory": { type: "boolean" },
} as const;

/** Refusals that come from the request itself: the caller's mistake, exit 2. */
const USAGE_CODES = new Set(["usage", "unknown_model", "no_models", "invalid_thread_id"]);

export async function compactCommand(argv: string[]): Promise<number> {
  const v = parse(argv, options, "compact");
  const workspace = workspaceArg(v.workspace, "compact");
  const threadId = requireString(v.thread, "--thread ID", "compact");
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let config;
  try {
    validateThreadId(threadId);
    config = loadHarnessConfig(dataDir);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError("compact", err.message);
    throw err;
  }
  const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
  const memory = openRunMemory(config, dataDir, v["no-memory"], store.workspaceFolder);
  try {
    const manager = openRunSystem(store);
    // Without --model / --base-url: the model the thread's conversation ran on (as the panel's command).
    const model = compactionModel(config, manager, threadId, { ...(v.model ? { model: v.model } : {}), ...(v["base-url"] ? { baseURL: v["base-url"] } : {}) });
    const flush = memory ? memoryRunHooks(memory.wiring.service, threadId, { name: model.name, ...(model.adHoc && model.baseURL ? { baseURL: model.baseURL } : {}) }, memory.wiring.onQueued) : undefined;
    const result = await compactThread(
      { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, checkpointer: store.checkpointer, config },
      {
        threadId,
        ...(v.model ? { model: v.model } : model.adHoc ? {} : { model: model.name }),
        ...(v["base-url"] ? { baseURL: v["base-url"] } : {}),
        ...(flush ? { beforeSummarize: (messages) => Promise.resolve(flush.flush(messages)) } : {}),
      },
    );
    writeJsonLine(result);
    await memory?.drain();
    return 0;
  } catch (err) {
    if (err instanceof HarnessError && USAGE_CODES.has(err.code)) throw valueUsageError("compact", err.message);
    if (err instanceof HarnessError) {
      process.stderr.write(`deerflow compact: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await memory?.close();
    store.close();
  }
}
