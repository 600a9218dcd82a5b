/**
 * A thread view with nothing in it yet: where the shown thread starts (threadView.ts) and where
 * each subagent's own small thread view starts (tasks.ts). Its own module because threadView
 * folds task events in through tasks.ts, so tasks.ts cannot import it back from there.
 */
import { NO_USAGE } from "./usage.js";
import { PMap } from "./pmap.js";
import { Seq } from "./seq.js";
import type { ThreadView } from "./types.js";

export function emptyThread(threadId: string): ThreadView {
  return {
    threadId,
    title: null,
    lastSeq: 0,
    messages: Seq.empty(),
    index: PMap.empty(),
    callOwner: PMap.empty(),
    pendingResults: PMap.empty(),
    tasks: PMap.empty(),
    live: [],
    rowsShape: {},
    artifacts: [],
    todos: null,
    viewedImages: [],
    uploadedFiles: [],
    run: { runId: null, status: null, model: null, error: null, retry: null, awaitingApproval: false, stopReason: null },
    usage: NO_USAGE,
  };
}
