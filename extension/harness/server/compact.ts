/**
 * `threads/compact`: manual compaction for the panel's "DeerFlow: Compact Thread", on the same
 * code as `deerflow compact` (runs/compaction.ts). It fails visibly: a summary model failure is a
 * JSON-RPC error (`summary_failed`), a thread with an active run `thread_busy`.
 */
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { compactionModel, compactThread } from "../runs/compaction.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import type { OpenWorkspace } from "./workspaces.js";
import type { ServerMemory } from "./memory.js";

export async function compactThreadRpc(
  ws: OpenWorkspace,
  session: Session,
  memory: ServerMemory,
  log: Logger,
  p: RequestParams<"threads/compact">,
): Promise<RequestResult<"threads/compact">> {
  // A clear of viewed images writes a checkpoint after an await: the two would race.
  if (ws.clearing.has(p.threadId)) throw new HarnessError("thread_busy", "The thread's viewed images are being cleared; compact it again in a moment.");
  const config = session.config;
  const model = compactionModel(config, ws.manager, p.threadId, p.model ? { model: p.model } : {});
  // Memory on: what the summary covers is queued for extraction first (DeerFlow's memory_flush_hook).
  const beforeSummarize = memory.beforeSummarize(p.threadId, ws.folder, { name: model.name });
  const result = await compactThread(
    { workspaceFolder: ws.folder, threads: ws.store.threads, manager: ws.manager, checkpointer: ws.store.checkpointer, config },
    // The run model and a configured summary model each get the key held for their own api_key_env.
    { threadId: p.threadId, model: model.name, heldKey: (source) => session.apiKey(source), ...(beforeSummarize ? { beforeSummarize } : {}) },
  );
  log.info(
    result.compacted
      ? `Thread ${p.threadId} compacted by ${result.model ?? "a canned summary"}: ${result.summarized} messages summarized, ${result.preserved} kept in full.`
      : `Thread ${p.threadId} not compacted: ${result.reason}`,
  );
  const { summary_upto: _upto, ...view } = result;
  return view;
}
