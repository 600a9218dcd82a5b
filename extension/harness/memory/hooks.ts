/**
 * What one run of the lead agent gets from memory (built per run by the worker, handed to the
 * middleware chain): the `<memory>` reminder for the thread's first run, and the way to queue
 * its conversation — after the run (MemoryMiddleware) or just before a compaction summarizes
 * part of it away (the `beforeSummarize` flush). Subagents get none: DeerFlow's flush is lead only.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { conversationFor } from "./conversation.js";
import type { MemoryRunModel, MemoryService } from "./service.js";

export interface MemoryRunHooks {
  injection(): string;
  /** The thread's conversation so far, after a run: replaces what the thread had waiting. */
  afterRun(messages: readonly BaseMessage[]): void;
  /** Messages about to be summarized: queued on their own, never merged. */
  flush(messages: readonly BaseMessage[]): void;
}

export function memoryRunHooks(service: MemoryService, threadId: string, model: MemoryRunModel, onQueued?: () => void): MemoryRunHooks {
  return {
    injection: () => service.injection(),
    afterRun: (messages) => {
      service.enqueue(threadId, "conversation", conversationFor(messages), model);
      onQueued?.();
    },
    flush: (messages) => {
      service.enqueue(threadId, "flush", conversationFor(messages), model);
      onQueued?.();
    },
  };
}

/** How an entry point lends its memory to runs (launcher → worker): the service, and what to do once something is queued (the server arms its debounce timer). */
export interface MemoryWiring {
  service: MemoryService;
  onQueued?: () => void;
}
