/**
 * The lead agent's middleware chain, in DeerFlow's order (reference §3.2, "port recommendation").
 * The order IS the behaviour, so it is stated here, in one place, with the reasons:
 *
 * - `beforeAgent`/`beforeModel` hooks run in list order; `afterModel`/`afterAgent` in REVERSE order.
 * - `wrapModelCall`/`wrapToolCall`: first in the list = OUTERMOST wrapper. So InputSanitization
 *   wraps everything (LLM retries re-send already-sanitised messages), ToolOutputBudget sees the
 *   final tool result after ToolErrorHandling turned exceptions into error results, and
 *   Clarification, last, is the innermost tool wrapper and the first `afterModel`.
 *
 * Slots (DeerFlow numbering in brackets); a slot whose middleware is not ported yet is a comment:
 *   [1]  InputSanitization        — user text cannot inject framework tags (request-only)
 *   [2]  ToolOutputBudget         — oversized results saved under outputs, synopsis in context
 *   [4]  ThreadData               — thread_data + the thread's directories, before anything uses them
 *   [5]  Uploads                  — this message's uploads → uploaded_files + <current_uploads>
 *   [6]  Sandbox                  — (lazy acquisition lives in the sandbox tools; release at run end)
 *   [7]  DanglingToolCall         — every tool call answered before each model request (request-only)
 *   [8]  LLMErrorHandling         — retries with backoff, `llm_retry` events, readable final failure
 *   [13] ToolErrorHandling        — a throwing tool becomes an error ToolMessage; the run goes on
 *   [19] Todo (plan mode)         — write_todos + reminder when the list scrolled out of context
 *   [20] TokenUsage               — usage per model call and per run
 *   [21] Title                    — title after the first exchange, never regenerated
 *   [23] ViewImage (vision)       — viewed images injected into the next request only
 *   [26] SystemMessageCoalescing  — exactly one leading system message per request
 *   [28] LoopDetection            — repeated tool-call sets → warning, then forced stop
 *   [35] Clarification            — always last: ask_clarification ends the turn
 */
import type { AgentMiddleware } from "langchain";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ThreadDirs } from "../threads/threadDirs.js";
import type { BlobStore } from "../store/blobs.js";
import { threadDataMiddleware } from "../middlewares/threadData.js";
import { uploadsMiddleware } from "../middlewares/uploads.js";
import { todoMiddleware } from "../middlewares/todo.js";
import { titleMiddleware } from "../middlewares/title.js";
import { viewImageMiddleware } from "../middlewares/viewImage.js";
import { clarificationMiddleware } from "../middlewares/clarification.js";

export interface ChainContext {
  dirs: ThreadDirs;
  blobs: BlobStore;
  /** The run's chat model (LLM-backed middlewares may reuse it). */
  model: BaseChatModel;
  /** A configured title model; absent → TitleMiddleware's local fallback. */
  titleModel?: BaseChatModel;
  supportsVision: boolean;
  planMode: boolean;
}

export function buildMiddlewareChain(ctx: ChainContext): AgentMiddleware[] {
  const chain: Array<AgentMiddleware | false | undefined> = [
    // [1] InputSanitization
    // [2] ToolOutputBudget
    threadDataMiddleware(ctx.dirs), // [4]
    uploadsMiddleware(ctx.dirs), // [5]
    // [7] DanglingToolCall
    // [8] LLMErrorHandling
    // [13] ToolErrorHandling
    ctx.planMode && todoMiddleware(), // [19]
    // [20] TokenUsage
    titleMiddleware(ctx.titleModel), // [21]
    ctx.supportsVision && viewImageMiddleware(ctx.blobs), // [23]
    // [26] SystemMessageCoalescing
    // [28] LoopDetection
    clarificationMiddleware(), // [35] keep last
  ];
  return chain.filter((m): m is AgentMiddleware => Boolean(m));
}
