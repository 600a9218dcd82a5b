/**
 * One subagent run (DeerFlow `subagents/executor.py`), called by the `task` tool inside the lead's
 * tool node. The subagent is its own agent graph (agent/graph/build.ts):
 *
 * - its own history: the type's system prompt and the delegated prompt, never the lead's messages;
 *   it starts from the lead's `sandbox` and `thread_data`, so it works in the same thread folders
 *   and sandbox (DeerFlow passes the same two channels);
 * - no checkpointer (`checkpointer: false`, as DeerFlow) AND run outside the lead's async context:
 *   LangGraph.js merges the ambient RunnableConfig of the calling node into a nested graph's config
 *   (its checkpointer, checkpoint namespace and callbacks). Inside that context the subagent would
 *   write into the lead's checkpoint and its tokens would reach the lead's `messages` stream as
 *   the lead's own. The recipe's pitfall; `AsyncLocalStorage.run(undefined, …)` cuts it;
 * - its own chain (./chain.ts) and the lead's model;
 * - stopped by the lead's AbortSignal (cancel, run timeout) and by its own wall clock.
 *
 * What it produces goes to the lead's stream writer, so it lands in the run's journal in order,
 * each item carrying its `task_id` (protocol/events.ts `TaskEventData`): DeerFlow's `task_*`
 * lifecycle events, and `task_event` items wrapping the subagent's own `messages` (coalesced
 * token chunks) and `updates` (its deltas) in their wire form.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { randomUUID } from "node:crypto";
import { threadStateFields } from "../state/threadState.js";
import { buildAgentGraph } from "../agent/graph/build.js";
import { UpdateDeltas } from "../runs/updateDeltas.js";
import { ChunkCoalescer } from "../runs/chunkCoalescer.js";
import { toWireChunk, toWireMessage, wireValue } from "../runs/wire.js";
import { errorMessage } from "../errors.js";
import { buildSubagentChain, type SubagentChainContext } from "./chain.js";
import type { BudgetState } from "./budget.js";
import type { SubagentType } from "./config.js";
import type { SubagentOutcome, SubagentUsage } from "./statusContract.js";

export type TaskEventWriter = (data: { type: string; task_id: string; [key: string]: unknown }) => void;

export interface SubagentRunRequest {
  taskId: string;
  description: string;
  type: SubagentType;
  prompt: string;
  model: BaseChatModel;
  modelName: string;
  tools: StructuredToolInterface[];
  chain: Omit<SubagentChainContext, "budget" | "maxTurns" | "tokenBudget">;
  limits: { maxTurns: number; timeoutMs: number; tokenBudget: number };
  /** The lead's `sandbox` and `thread_data` channels. */
  parentState: { sandbox?: unknown; thread_data?: unknown };
  threadId: string;
  /** The lead run's signal: cancel, run timeout. */
  signal: AbortSignal | undefined;
  write: TaskEventWriter;
}

export interface SubagentRunResult extends SubagentOutcome {
  usage?: SubagentUsage;
  /** The sandbox the subagent acquired, when the lead had none yet (the lead keeps it for release). */
  sandbox?: { sandbox_id: string };
}

class SubagentTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`Execution timed out after ${seconds} seconds`);
    this.name = "SubagentTimeout";
  }
}

function textOf(m: BaseMessage): string {
  const c = m.content;
  if (typeof c === "string") return c;
  return c.map((b) => (b.type === "text" && "text" in b ? String(b.text) : "")).join("");
}

export async function runSubagent(req: SubagentRunRequest): Promise<SubagentRunResult> {
  // Outside the lead's async context: see the header.
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, () => execute(req));
}

async function execute(req: SubagentRunRequest): Promise<SubagentRunResult> {
  const { taskId, write, modelName } = req;
  const budget: BudgetState = {};
  const agent = buildAgentGraph({
    model: req.model,
    tools: req.tools,
    systemPrompt: req.type.systemPrompt,
    stateFields: threadStateFields,
    middleware: buildSubagentChain({ ...req.chain, budget, maxTurns: req.limits.maxTurns, tokenBudget: req.limits.tokenBudget }),
    checkpointer: false,
    // The turn cap is the budget middleware's (./budget.ts: it reports turn_capped); the graph
    // only derives its recursion limit from it, so the limit never fires first.
    recursionTurns: req.limits.maxTurns,
  });

  const timeout = new AbortController();
  const seconds = req.limits.timeoutMs / 1000;
  const timer = setTimeout(() => timeout.abort(new SubagentTimeout(seconds)), req.limits.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;

  const usageById = new Map<string, SubagentUsage>();
  const usage = (): SubagentUsage | undefined => {
    if (usageById.size === 0) return undefined;
    const sum = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (const u of usageById.values()) {
      sum.input_tokens += u.input_tokens;
      sum.output_tokens += u.output_tokens;
      sum.total_tokens += u.total_tokens;
    }
    return sum;
  };
  const chunks = new ChunkCoalescer((data) => write({ type: "task_event", task_id: taskId, event: "messages", data }));
  const emit: TaskEventWriter = (data) => {
    chunks.flush();
    write(data);
  };
  const steps: string[] = [];
  const deltas = new UpdateDeltas();
  let finalMessages: BaseMessage[] = [];
  let finalSandbox: unknown;

  emit({ type: "task_started", task_id: taskId, description: req.description, model_name: modelName, subagent_type: req.type.name });
  let outcome: SubagentOutcome;
  try {
    const input = {
      messages: [new HumanMessage({ id: randomUUID(), content: req.prompt })],
      ...(req.parentState.sandbox ? { sandbox: req.parentState.sandbox } : {}),
      ...(req.parentState.thread_data ? { thread_data: req.parentState.thread_data } : {}),
    };
    const stream = await agent.graph.stream(input, {
      configurable: { thread_id: req.threadId },
      recursionLimit: agent.recursionLimit,
      signal,
      streamMode: ["values", "updates", "messages"] as const,
    });
    for await (const item of stream) {
      const [mode, payload] = item as [string, unknown];
      if (mode === "messages") {
        const [msg, meta] = payload as [BaseMessage, { langgraph_node?: string }];
        chunks.push(toWireChunk(msg, meta.langgraph_node));
      } else if (mode === "values") {
        const v = payload as { messages?: BaseMessage[]; sandbox?: unknown };
        deltas.observeValues(v.messages);
        finalMessages = v.messages ?? finalMessages;
        finalSandbox = v.sandbox;
      } else if (mode === "updates") {
        const delta = deltas.delta(payload);
        if (Object.keys(delta).length === 0) continue;
        emit({ type: "task_event", task_id: taskId, event: "updates", data: wireValue(delta) });
        // DeerFlow's task_running: one per new step message (its answers and its tool results).
        for (const node of Object.values(delta)) {
          const messages = (node as { messages?: unknown } | null)?.messages;
          if (!Array.isArray(messages)) continue;
          for (const m of messages as BaseMessage[]) {
            if (!AIMessage.isInstance(m) && !ToolMessage.isInstance(m)) continue;
            if (AIMessage.isInstance(m) && m.usage_metadata) {
              const { input_tokens, output_tokens, total_tokens } = m.usage_metadata;
              usageById.set(m.id ?? `anon-${usageById.size}`, { input_tokens, output_tokens, total_tokens });
            }
            const key = m.id ?? (ToolMessage.isInstance(m) ? `tool:${m.tool_call_id}` : randomUUID());
            if (steps.includes(key)) continue;
            steps.push(key);
            emit({
              type: "task_running",
              task_id: taskId,
              message: toWireMessage(m),
              message_index: steps.length,
              total_messages: steps.length,
              usage: usage() ?? null,
              model_name: modelName,
            });
          }
        }
      }
    }
    chunks.flush();
    outcome = finish(finalMessages, budget, req.limits.maxTurns);
  } catch (err) {
    try {
      chunks.flush();
    } catch {
      // The lead's stream is gone (its run ended): nothing more can be written.
    }
    if (timeout.signal.aborted) outcome = { status: "timed_out", error: new SubagentTimeout(seconds).message };
    else if (req.signal?.aborted) outcome = { status: "cancelled", error: "Cancelled by user" };
    else outcome = { status: "failed", error: errorMessage(err) };
  } finally {
    clearTimeout(timer);
  }

  const total = usage();
  const base = { task_id: taskId, usage: total ?? null, model_name: modelName };
  try {
    if (outcome.status === "completed") emit({ type: "task_completed", ...base, result: outcome.result ?? "" });
    else emit({ type: `task_${outcome.status === "polling_timed_out" ? "timed_out" : outcome.status}`, ...base, error: outcome.error ?? null });
  } catch {
    // As above: a cancelled lead run may have closed its stream already; its runner closes the task.
  }
  const sandboxId = (finalSandbox as { sandbox_id?: unknown } | undefined)?.sandbox_id;
  return {
    ...outcome,
    ...(total ? { usage: total } : {}),
    ...(typeof sandboxId === "string" && sandboxId && !req.parentState.sandbox ? { sandbox: { sandbox_id: sandboxId } } : {}),
  };
}

/** The outcome of a run that ended by itself (DeerFlow `_aexecute`'s completion and max-turns paths). */
function finish(messages: BaseMessage[], budget: BudgetState, maxTurns: number): SubagentOutcome {
  const lastAi = [...messages].reverse().find((m): m is AIMessage => AIMessage.isInstance(m));
  const kwargs = (lastAi?.additional_kwargs ?? {}) as { deerflow_error_fallback?: unknown; stop_reason?: unknown };
  // LLMErrorHandling saved a provider failure as the answer: a clean graph end, not a success.
  if (lastAi && kwargs.deerflow_error_fallback === true) return { status: "failed", error: textOf(lastAi).trim() || "LLM request failed" };
  const loopCapped = kwargs.stop_reason === "loop_capped";
  const stopReason = budget.capped ?? (loopCapped ? "loop_capped" : undefined);
  const text = lastAi ? textOf(lastAi).trim() : "";
  if (budget.capped === "turn_capped") {
    // DeerFlow: usable partial work survives as completed; none → failed, both with the cap.
    return text ? { status: "completed", result: text, stopReason: "turn_capped" } : { status: "failed", error: `Reached max_turns=${maxTurns}`, stopReason: "turn_capped" };
  }
  return { status: "completed", result: text || "No response generated", ...(stopReason ? { stopReason } : {}) };
}
