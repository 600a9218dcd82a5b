/**
 * The lead agent's middleware chain, in DeerFlow's order (reference §3.2, "port recommendation").
 * The order IS the behaviour, so it is stated here, in one place, with the reasons:
 *
 * - `beforeAgent`/`beforeModel` hooks run in list order; `afterModel`/`afterAgent` in REVERSE order.
 * - All hooks of one point run composed in ONE graph node (agent/graph/build.ts, issue 20), each
 *   hook's update applied with the state's reducers before the next hook sees it; a `jumpTo` ends
 *   the point there. Measured (test/unit/agent/graphSteps.test.ts, the whole chain): a tool turn is
 *   4 graph steps (before_model, model_request, after_model, tools; parallel calls share the tools
 *   step), an answer turn 3, and the run's own hooks take none (beforeAgent runs in the run's first
 *   before_model, afterAgent in the node that ends the run), so a one-answer run is 3 steps.
 *   createAgent gave every
 *   hook its own node: ~13 steps a tool turn, so LangGraph's recursion limit ended runs after 7
 *   tool calls. A run is bounded by its turn budget (`max_turns` model calls), never by steps.
 * - `wrapModelCall`/`wrapToolCall`: first in the list = OUTERMOST wrapper. So InputSanitization
 *   wraps everything (LLM retries re-send already-sanitised messages), ToolOutputBudget sees the
 *   final tool result after ToolErrorHandling turned exceptions into error results, and
 *   Clarification, last, is the innermost tool wrapper and the first `afterModel`.
 *
 * DeerFlow's lead chain, all 35 slots of reference §3.2 in its order, each "ported" (what it
 * guarantees here) or "not yet" (why); only ported slots appear in the list below:
 *   [1]  InputSanitization        ported  — user text cannot inject framework tags (request-only)
 *   [2]  ToolOutputBudget         ported  — oversized results saved under outputs, synopsis in context
 *   [3]  ToolResultSanitization   ported  — the harness's tags in EVERY tool's result (files and
 *                                           command output too, not only web tools) are neutralised
 *   [4]  ThreadData               ported  — thread_data + the thread's directories, before anything uses them
 *   [5]  Uploads                  ported  — this message's uploads → uploaded_files + <current_uploads>
 *   [6]  Sandbox                  ported, not as a middleware — lazy acquisition lives in the sandbox
 *                                           tools, release at run end (runs/runTurn.ts)
 *   [7]  DanglingToolCall         ported  — every tool call answered before each model request (request-only)
 *   [8]  LLMErrorHandling         ported  — retries with backoff, `llm_retry` events, readable final
 *                                           failure; the circuit breaker beside it (llmCircuitBreaker.ts)
 *   [9]  Authorization/Guardrail  ported as ApprovalMiddleware — every tool call classified
 *                                           (read/write/protected/shell/other) against the operator's
 *                                           policy: auto runs, deny refuses, ask pauses the whole turn
 *                                           until the user decides (a decision is a new run)
 *   [10] SandboxAudit             ported  — bash commands classified before they run: block / warn / pass
 *   [11] ReadBeforeWrite          ported  — writes to an existing file need a read of its current version
 *   [12] ToolProgress             not yet — optional in DeerFlow (off by default)
 *   [13] ToolErrorHandling        ported  — a throwing tool becomes an error ToolMessage; the run goes on
 *   [14] DynamicContext           ported  — the date as a hidden per-request message, never in the
 *                                           system prompt (request-only here; DeerFlow persists it);
 *                                           with memory on, the user's memory snapshotted at the
 *                                           thread's first run, injected the same way
 *   [15] SkillActivation          ported  — `/skill-name task`: the SKILL.md as DeerFlow's hidden activation
 *                                           message, written once per run in before_agent (DeerFlow: first
 *                                           model request only), journaled `skill_activated`
 *   [16] SkillToolPolicy          ported  — an activated or loaded skill's allowed-tools restricts the
 *                                           tools offered and run; a read of a SKILL.md records skill_context
 *   [17] DurableContext           ported  — once a summary exists: the summary, todos, artifacts,
 *                                           viewed images and the summarized subagent results as one
 *                                           hidden <durable_context_data> block (request-only)
 *   [18] Summarization            ported, non-destructive — past a trigger, older messages are
 *                                           summarized into summary_text/summary_upto; they stay in
 *                                           state and leave only the model request
 *   [19] Todo (plan mode)         ported  — write_todos + reminder when the list scrolled out of context
 *   [20] TokenUsage               ported  — usage per model call and per run
 *   [21] Title                    ported  — title after the first exchange, never regenerated
 *   [22] Memory                   ported  — with memory on: the conversation queued for debounced
 *                                           fact extraction after the turn (memory/)
 *   [23] ViewImage (vision)       ported  — viewed images injected into the next request only
 *   [24] McpRouting               ported  — with deferred MCP tools whose routing is `prefer`: the ones the
 *                                           user's words match are promoted before the model call
 *   [25] DeferredToolFilter       ported  — with deferred MCP tools (tool_search): unpromoted schemas
 *                                           leave the request, a call to one gets DeerFlow's error
 *   [26] SystemMessageCoalescing  ported  — exactly one leading system message per request
 *   [27] SubagentLimit            ported  — with subagents on: at most max_concurrent `task` calls per
 *                                           response, max_total_per_run per run, then "[SUBAGENT LIMIT
 *                                           REACHED]" and stop_reason subagent_limit_capped
 *   [28] LoopDetection            ported  — repeated tool-call sets per thread → warning, then forced stop
 *   [29] TokenBudget              ported  — with a per-run budget (off by default, as in DeerFlow): a hidden
 *                                           "[TOKEN BUDGET WARNING] …" at 80 % (request-only); once the
 *                                           run's tokens reach it, tool calls stripped, "[TOKEN BUDGET
 *                                           EXCEEDED] …" and stop_reason token_capped
 *   [30] custom middlewares       not yet — no programmatic extension point
 *   [31] extension middlewares    not yet — no `extensions.middlewares` configuration
 *   [32] TerminalResponse         ported  — an empty answer after tool use: one hidden retry, then a
 *                                           visible failure
 *   [33] ModelLengthFinishReason  ported  — a length-capped answer ends with stop_reason model_length_capped
 *   [34] SafetyFinishReason       ported  — a content-filtered reply's tool calls are stripped, never run
 *   [35] Clarification            ported  — always last: ask_clarification ends the turn
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
import { toolResultSanitizationMiddleware } from "../middlewares/toolResultSanitization.js";
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
import { approvalMiddleware, type ApprovalOptions } from "../middlewares/approval.js";
import { defaultPolicy } from "../approvals/policy.js";
import { subagentLimitMiddleware, type SubagentLimitOptions } from "../middlewares/subagentLimit.js";
import { memoryMiddleware } from "../memory/middleware.js";
import type { MemoryRunHooks } from "../memory/hooks.js";
import { tokenBudgetMiddleware, type TokenBudgetOptions } from "../middlewares/tokenBudget.js";
import { summarizationMiddleware, type SummarizationOptions } from "../middlewares/summarization.js";
import { durableContextMiddleware } from "../middlewares/durableContext.js";
import { skillActivationMiddleware } from "../middlewares/skillActivation.js";
import { skillToolPolicyMiddleware } from "../middlewares/skillToolPolicy.js";
import type { SkillCatalog } from "../skills/catalog.js";
import type { BaseMessage } from "@langchain/core/messages";
import { mcpRoutingMiddleware } from "../middlewares/mcpRouting.js";
import { deferredToolFilterMiddleware, hiddenTools } from "../middlewares/deferredToolFilter.js";
import type { DeferredSetup } from "../mcp/deferred.js";
import type { ChainSettings } from "../config/sections.js";

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
  /** The approval policy and what it needs to classify calls (issue 13); absent → the defaults for a local sandbox without host commands. */
  approval?: ApprovalOptions;
  /** The run has the `task` tool (issue 14): DeerFlow's max_concurrent / max_total_per_run; absent → no SubagentLimit. */
  subagentLimit?: SubagentLimitOptions;
  /** Long-term memory is on for this run (issue 15, lead agent only): injection at the thread's first run, extraction after it. */
  memory?: MemoryRunHooks;
  /** A per-run token budget (issue 15, DeerFlow `token_budget`); absent → no TokenBudget. */
  tokenBudget?: TokenBudgetOptions;
  /** Summarization (issue 15, lead agent only): settings and summary models; absent → neither Summarization nor DurableContext. */
  summarization?: Omit<SummarizationOptions, "beforeSummarize">;
  /** Called with the messages about to be summarized, once their summary exists (DeerFlow's before_summarization hooks; errors are logged). */
  beforeSummarize?: (messages: BaseMessage[]) => Promise<void>;
  /** MCP tools deferred behind tool_search this run (issue 23, mcp/deferred.ts); absent → neither McpRouting nor DeferredToolFilter. */
  deferred?: DeferredSetup & { hash: string; topK: number };
  /** DeerFlow's middleware sections of the config for this run (config/sections.ts): on/off and thresholds; absent → DeerFlow's defaults. */
  settings?: ChainSettings;
  /** The run's skills (issue 24): SkillActivation and SkillToolPolicy; absent → no skills. `available`: a subagent's `skills`, null = all. */
  skills?: { catalog: SkillCatalog; available: ReadonlySet<string> | null };
}

export function buildMiddlewareChain(ctx: ChainContext): AgentMiddleware[] {
  const approval: ApprovalOptions = ctx.approval ?? {
    policy: defaultPolicy("local"),
    dirs: ctx.dirs,
    sandboxKind: "local",
    allowHostCommands: false,
    protectedWritesAllowed: new Set(),
  };
  // What this run's summary calls spent: in the run's usage (a custom event) and in its budget.
  const summaryTokens = { input: 0, output: 0 };
  const summarization = ctx.summarization && {
    ...ctx.summarization,
    ...(ctx.beforeSummarize ? { beforeSummarize: ctx.beforeSummarize } : {}),
    onUsage: (u: { input_tokens: number; output_tokens: number }) => {
      summaryTokens.input += u.input_tokens;
      summaryTokens.output += u.output_tokens;
    },
  };
  const s = ctx.settings;
  const toolOutput = s ? s.toolOutput : (ctx.toolOutput ?? {});
  const loopDetection = s ? s.loopDetection : (ctx.loopDetection ?? {});
  const tokenBudget = s?.tokenBudget ?? ctx.tokenBudget;
  const chain: Array<AgentMiddleware | false | undefined> = [
    inputSanitizationMiddleware(), // [1]
    toolOutput !== false && toolOutputBudgetMiddleware(ctx.dirs, toolOutput), // [2]
    toolResultSanitizationMiddleware(), // [3]
    threadDataMiddleware(ctx.dirs), // [4]
    uploadsMiddleware(ctx.dirs), // [5]
    danglingToolCallMiddleware(), // [7]
    llmErrorHandlingMiddleware(ctx.llmRetry), // [8]
    approvalMiddleware({
      ...approval,
      // What [10], [11], [16] and the tools would refuse is refused before anyone is asked (approvals/preflight.ts).
      preflight: { dirs: ctx.dirs, readBeforeWrite: s?.readBeforeWrite ?? true, ...(ctx.skills ? { skills: ctx.skills } : {}) },
      ...(ctx.deferred ? { deferredHidden: (state: unknown) => hiddenTools(ctx.deferred!, state) } : {}),
    }), // [9] (a hidden deferred call: [25] answers it)
    sandboxAuditMiddleware(), // [10]
    (s?.readBeforeWrite ?? true) && readBeforeWriteMiddleware(ctx.dirs, approval.protectedWritesAllowed), // [11]
    toolErrorHandlingMiddleware(), // [13]
    dynamicContextMiddleware(ctx.memory ? { memory: ctx.memory } : {}), // [14]
    ctx.skills && skillActivationMiddleware(ctx.skills), // [15]
    ctx.skills && skillToolPolicyMiddleware(ctx.skills), // [16]
    ctx.summarization && durableContextMiddleware(), // [17]
    summarization && summarizationMiddleware(summarization), // [18]
    ctx.planMode && todoMiddleware(), // [19]
    tokenUsageMiddleware(), // [20]
    s?.title !== false && titleMiddleware(ctx.titleModel, s?.title), // [21]
    ctx.memory && memoryMiddleware(ctx.memory), // [22]
    ctx.supportsVision && viewImageMiddleware(ctx.blobs), // [23]
    ctx.deferred && ctx.deferred.routing.size > 0 && mcpRoutingMiddleware({ hash: ctx.deferred.hash, topK: ctx.deferred.topK, index: ctx.deferred.routing }), // [24]
    ctx.deferred && deferredToolFilterMiddleware({ names: ctx.deferred.names, hash: ctx.deferred.hash }), // [25]
    systemMessageCoalescingMiddleware(), // [26]
    ctx.subagentLimit && subagentLimitMiddleware(ctx.subagentLimit), // [27]
    loopDetection !== false && loopDetectionMiddleware(loopDetection), // [28]
    tokenBudget && tokenBudget.maxTokens > 0 && tokenBudgetMiddleware({ ...tokenBudget, spentElsewhere: () => summaryTokens }), // [29]
    terminalResponseMiddleware(), // [32]
    modelLengthFinishReasonMiddleware(), // [33]
    (s?.safetyFinishReason ?? true) && safetyFinishReasonMiddleware(), // [34]
    clarificationMiddleware(), // [35] keep last
  ];
  return chain.filter((m): m is AgentMiddleware => Boolean(m));
}
