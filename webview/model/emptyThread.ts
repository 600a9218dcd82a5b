/**
 * A thread view with nothing in it yet: where the shown thread starts (threadView.ts) and where
 * each subagent's own small thread view starts (tasks.ts). Its own module because threadView
 * folds task events in through tasks.ts, so tasks.ts cannot import it back from there.
 */
import { NO_USAGE } from "./usage.js";
import type { ThreadView } from "./types.js";

export function emptyThread(threadId: string): ThreadView {
  return {
    threadId,
    title: null,
    lastSeq: 0,
    messages: [],
    index: new Map(),
    callOwner: new Map(),
    pendingResults: new Map(),
    tasks: new Map(),
    artifacts: [],
    todos: null,
    viewedImages: [],
    uploadedFiles: [],
    run: { runId: null, status: null, model: null, error: null, retry: null, awaitingApproval: false },
    usage: NO_USAGE,
  };
}
