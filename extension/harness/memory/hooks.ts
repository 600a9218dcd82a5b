/**
 * What one run of the lead agent gets from memory (built per run by the worker, handed to the
 * middleware chain): the `<memory>` reminder for the thread's first run, and the way to queue
 * its conversation — after the run (MemoryMiddleware) or just before a compaction summarizes
 * part of it away (the `beforeSummarize` flush). Subagents get none: DeerFlow's flush is lead only.
 * Both are bound to the run's workspace (service.ts WorkspaceMemory): the reminder holds the
 * global part and that workspace's own, and what is queued is extracted into its scope.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { tokenCounterFor } from "../models/tokenCount.js";
import { conversationFor } from "./conversation.js";
import { estimateTokens } from "./render.js";
import type { MemoryRunModel, WorkspaceMemory } from "./service.js";

export interface MemoryRunHooks {
  /** The `<memory>` reminder, counted with the run model's tokenizer where one is known (models/tokenCount.ts). */
  injection(): Promise<string>;
  /** The memory's generation (memory/store.ts): a thread's snapshot is rendered again when it changed. */
  generation(): string;
  /** The thread's conversation so far, after a run: replaces what the thread had waiting. */
  afterRun(messages: readonly BaseMessage[]): void;
  /** Messages about to be summarized: queued on their own, never merged. */
  flush(messages: readonly BaseMessage[]): void;
}

/** `modelId`: the provider's model id, which picks the tokenizer for the injection budget. */
export function memoryRunHooks(service: WorkspaceMemory, threadId: string, model: MemoryRunModel & { modelId?: string }, onQueued?: () => void): MemoryRunHooks {
  const { modelId, ...queued } = model;
  return {
    injection: async () => {
      if (!service.settings.injection_enabled) return ""; // DeerFlow's injection_enabled: extraction goes on
      // The estimate first: an empty memory, or one far below the budget, never loads a tokenizer
      // (o200k takes ~1.5 s and ~70 MB). Chars/4 under-counts by at most ~4× (a token is at
      // least about a character), so below a quarter of the budget every line fits either way.
      const estimated = service.injection();
      if (!modelId || !estimated || estimateTokens(estimated) * 4 <= service.settings.max_injection_tokens) return estimated;
      // No tokenizer (its table failed to load): the estimate; memory never fails a run.
      const count = await tokenCounterFor(modelId).catch(() => undefined);
      if (!count) return estimated;
      // The counter adds a message's framing (a few tokens); the block is one message anyway.
      return service.injection((text) => count([new HumanMessage(text)]));
    },
    generation: () => service.generation(),
    afterRun: (messages) => {
      if (service.enqueue(threadId, "conversation", conversationFor(messages), queued) > 0) onQueued?.();
    },
    flush: (messages) => {
      if (service.enqueue(threadId, "flush", conversationFor(messages), queued) > 0) onQueued?.();
    },
  };
}

/**
 * How an entry point lends its memory to one run (launcher → worker): the service bound to the
 * run's workspace, and what to do once something is queued (the server arms its debounce timer).
 */
export interface MemoryWiring {
  service: WorkspaceMemory;
  onQueued?: () => void;
}
