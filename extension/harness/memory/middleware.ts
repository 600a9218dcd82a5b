/**
 * MemoryMiddleware (DeerFlow `memory_middleware.py`, chain slot [22]): after the agent finishes a
 * turn, the thread's conversation — user messages and final answers only (conversation.ts) — is
 * queued for debounced fact extraction. Queuing never fails the run: a queue that cannot be
 * written is logged (the harness's diagnostics line: stderr for the CLI, Show Logs in VS Code)
 * and the run ends as it would have.
 */
import { createMiddleware } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import type { MemoryRunHooks } from "./hooks.js";
import { diagnostics } from "../diagnostics.js";
import { errorMessage } from "../errors.js";

const logQueueFailure = (err: unknown) => diagnostics.warn(`memory: the conversation could not be queued for extraction: ${errorMessage(err)}`);

export function memoryMiddleware(hooks: MemoryRunHooks, onError: (err: unknown) => void = logQueueFailure) {
  return createMiddleware({
    name: "MemoryMiddleware",
    afterAgent: (state) => {
      try {
        hooks.afterRun((state as { messages?: BaseMessage[] }).messages ?? []);
      } catch (err) {
        onError(err);
      }
      return undefined;
    },
  });
}
