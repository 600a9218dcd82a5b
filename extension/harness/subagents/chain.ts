/**
 * A subagent's middleware chain, as DeerFlow builds it (`build_subagent_runtime_middlewares`):
 * the lead's shared runtime layers without uploads, then the subagent-only guards. Slot numbers
 * are the lead chain's (agent/middlewareChain.ts), so the relative order is the same.
 *
 * Not here, on purpose: Uploads (DeerFlow `include_uploads=False`), Title, Todo, TokenUsage,
 * Clarification (a subagent cannot ask the user), SubagentLimit (a subagent has no `task` tool),
 * TerminalResponse (an empty subagent answer is reported as "No response generated"), and the
 * lead's pausing ApprovalMiddleware, replaced by ./approval.ts.
 */
import type { AgentMiddleware } from "langchain";
import type { ThreadDirs } from "../threads/threadDirs.js";
import type { BlobStore } from "../store/blobs.js";
import { inputSanitizationMiddleware } from "../middlewares/inputSanitization.js";
import { toolOutputBudgetMiddleware } from "../middlewares/toolOutputBudget.js";
import { toolResultSanitizationMiddleware } from "../middlewares/toolResultSanitization.js";
import { threadDataMiddleware } from "../middlewares/threadData.js";
import { danglingToolCallMiddleware } from "../middlewares/danglingToolCall.js";
import { llmErrorHandlingMiddleware } from "../middlewares/llmErrorHandling.js";
import { sandboxAuditMiddleware } from "../middlewares/sandboxAudit.js";
import { readBeforeWriteMiddleware } from "../middlewares/readBeforeWrite.js";
import { toolErrorHandlingMiddleware } from "../middlewares/toolErrorHandling.js";
import { dynamicContextMiddleware } from "../middlewares/dynamicContext.js";
import { viewImageMiddleware } from "../middlewares/viewImage.js";
import { systemMessageCoalescingMiddleware } from "../middlewares/systemMessageCoalescing.js";
import { loopDetectionMiddleware } from "../middlewares/loopDetection.js";
import { modelLengthFinishReasonMiddleware } from "../middlewares/modelLengthFinishReason.js";
import { safetyFinishReasonMiddleware } from "../middlewares/safetyFinishReason.js";
import type { ApprovalOptions } from "../middlewares/approval.js";
import { subagentApprovalMiddleware } from "./approval.js";
import { deferredToolFilterMiddleware } from "../middlewares/deferredToolFilter.js";
import { subagentBudgetMiddleware, type BudgetState } from "./budget.js";
import type { ChainSettings } from "../config/sections.js";
import { skillActivationMiddleware } from "../middlewares/skillActivation.js";
import { skillToolPolicyMiddleware } from "../middlewares/skillToolPolicy.js";
import type { SkillCatalog } from "../skills/catalog.js";

export interface SubagentChainContext {
  dirs: ThreadDirs;
  blobs: BlobStore;
  supportsVision: boolean;
  /** The lead run's policy and classification context. */
  approval: ApprovalOptions;
  /** The thread's "Always allow" rules: the lead's `approval_always_allow` channel as it stands. */
  alwaysAllowed: unknown;
  maxTurns: number;
  tokenBudget: number;
  /** Filled by the budget middleware when a cap ends the run. */
  budget: BudgetState;
  /** The subagent's own deferred MCP tools (issue 23, mcp/deferred.ts), hidden until its tool_search promotes them. */
  deferred?: { names: ReadonlySet<string>; hash: string };
  /** The run's skills and the ones this subagent may use (its `skills`, skills/subagent.ts; null = all); absent → none. */
  skills?: { catalog: SkillCatalog; available: ReadonlySet<string> | null };
  /** The lead run's DeerFlow middleware sections (tool_output, read_before_write, loop_detection, safety_finish_reason); absent → defaults. */
  settings?: ChainSettings;
}

export function buildSubagentChain(ctx: SubagentChainContext): AgentMiddleware[] {
  const s = ctx.settings;
  const chain: Array<AgentMiddleware | false> = [
    inputSanitizationMiddleware(), // [1]
    s?.toolOutput !== false && toolOutputBudgetMiddleware(ctx.dirs, s?.toolOutput), // [2]
    toolResultSanitizationMiddleware(), // [3]
    threadDataMiddleware(ctx.dirs), // [4]
    danglingToolCallMiddleware(), // [7]
    llmErrorHandlingMiddleware(), // [8]
    subagentApprovalMiddleware(
      { ...ctx.approval, preflight: { dirs: ctx.dirs, readBeforeWrite: s?.readBeforeWrite ?? true, ...(ctx.skills !== undefined ? { skills: ctx.skills } : {}) } },
      ctx.alwaysAllowed,
    ), // [9]
    sandboxAuditMiddleware(), // [10]
    (s?.readBeforeWrite ?? true) && readBeforeWriteMiddleware(ctx.dirs, ctx.approval.protectedWritesAllowed), // [11]
    toolErrorHandlingMiddleware(), // [13]
    dynamicContextMiddleware(), // [14]
    ctx.skills !== undefined && skillActivationMiddleware(ctx.skills), // [15]
    ctx.skills !== undefined && skillToolPolicyMiddleware(ctx.skills), // [16]
    ctx.supportsVision && viewImageMiddleware(ctx.blobs), // [23]
    ctx.deferred !== undefined && deferredToolFilterMiddleware(ctx.deferred), // [25]
    systemMessageCoalescingMiddleware(), // [26]
    s?.loopDetection !== false && loopDetectionMiddleware(s?.loopDetection), // [28]
    subagentBudgetMiddleware({ maxTurns: ctx.maxTurns, tokenBudget: ctx.tokenBudget }, ctx.budget), // [29] TokenBudget + DeerFlow's max_turns
    modelLengthFinishReasonMiddleware(), // [33]
    (s?.safetyFinishReason ?? true) && safetyFinishReasonMiddleware(), // [34]
  ];
  return chain.filter((m): m is AgentMiddleware => Boolean(m));
}
