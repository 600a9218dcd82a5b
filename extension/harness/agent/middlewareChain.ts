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
 *   [10] SandboxAudit             — bash commands classified before they run: block / warn / pass
 *   [11] ReadBeforeWrite          — writes to an existing file need a read of its current version
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
import { inputSanitizationMiddleware } from "../middlewares/inputSanitization.js";
import { toolOutputBudgetMiddleware } from "../middlewares/toolOutputBudget.js";
import type { ToolOutputBudgetOptions } from "../middlewares/toolOutputBudget.js";
import { danglingToolCallMiddleware } from "../middlewares/danglingToolCall.js";
import { llmErrorHandlingMiddleware } from "../middlewares/llmErrorHandling.js";
import type { LlmRetryOptions } from "../middlewares/llmErrorHandling.js";
import { readBeforeWriteMiddleware } from "../middlewares/readBeforeWrite.js";
import { toolErrorHandlingMiddleware } from "../middlewares/toolErrorHandling.js";
import { sandboxAuditMiddleware } from "../middlewares/sandboxAudit.js";
import { tokenUsageMiddleware } from "../middlewares/tokenUsage.js";
import { systemMessageCoalescingMiddleware } from "../middlewares/systemMessageCoalescing.js";
import { loopDetectionMiddleware } from "../middlewares/loopDetection.js";
import type { LoopDetectionOptions } from "../middlewares/loopDetection.js";
import { dynamicContextMiddleware } from "../middlewares/dynamicContext.js";
import { terminalResponseMiddleware } from "../middlewares/terminalResponse.js";
import { modelLengthFinishReasonMiddleware } from "../middlewares/modelLengthFinishReason.js";
import { safetyFinishReasonMiddleware } from "../middlewares/safetyFinishReason.js";

export interface ChainContext {
  dirs: ThreadDirs;
  blobs: BlobStore;
  /** The run's chat model (LLM-backed middlewares may reuse it). */
  model: BaseChatModel;
  /** A configured title model; absent → TitleMiddleware's local fallback. */
  titleModel?: BaseChatModel;
  supportsVision: boolean;
  planMode: boolean;
  /** LLM retry budget and delays (DeerFlow `llm_call.*`); absent → DeerFlow's defaults (3 attempts, 1 s base, 8 s cap). */
  llmRetry?: Partial<LlmRetryOptions>;
  /** Loop thresholds (DeerFlow `loop_detection.*`); absent → warn at 3, stop at 5 identical tool-call sets. */
  loopDetection?: Partial<LoopDetectionOptions>;
  /** Tool output budget (DeerFlow `tool_output.*`); absent → externalise above 12000 chars. */
  toolOutput?: Partial<ToolOutputBudgetOptions>;
}

export function buildMiddlewareChain(ctx: ChainContext): AgentMiddleware[] {
  const chain: Array<AgentMiddleware | false | undefined> = [
    inputSanitizationMiddleware(), // [1]
    toolOutputBudgetMiddleware(ctx.dirs, ctx.toolOutput), // [2]
    threadDataMiddleware(ctx.dirs), // [4]
    uploadsMiddleware(ctx.dirs), // [5]
    danglingToolCallMiddleware(), // [7]
    llmErrorHandlingMiddleware(ctx.llmRetry), // [8]
    sandboxAuditMiddleware(), // [10]
    readBeforeWriteMiddleware(ctx.dirs), // [11]
    toolErrorHandlingMiddleware(), // [13]
    dynamicContextMiddleware(), // [14]
    ctx.planMode && todoMiddleware(), // [19]
    tokenUsageMiddleware(), // [20]
    titleMiddleware(ctx.titleModel), // [21]
    ctx.supportsVision && viewImageMiddleware(ctx.blobs), // [23]
    systemMessageCoalescingMiddleware(), // [26]
    loopDetectionMiddleware(ctx.loopDetection), // [28]
    terminalResponseMiddleware(), // [32]
    modelLengthFinishReasonMiddleware(), // [33]
    safetyFinishReasonMiddleware(), // [34]
    clarificationMiddleware(), // [35] keep last
  ];
  return chain.filter((m): m is AgentMiddleware => Boolean(m));
}
