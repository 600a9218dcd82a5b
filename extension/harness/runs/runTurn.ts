/**
 * One turn of the lead agent on a thread, consumed as a stream of RunEvents.
 *
 * This is the worker's core (DeerFlow `run_agent`): stream LangGraph's `values`, `updates`,
 * `messages` and `custom` modes, map each item to a RunEvent, decide the final status, release
 * the sandbox. It goes through `agent.graph.stream`, not `agent.stream`: the latter re-feeds the
 * saved state as input and applies every reducer once more per turn (langchain recipe, gotcha 2).
 */
import { HumanMessage } from "@langchain/core/messages";
import { UpdateDeltas } from "./updateDeltas.js";
import { ChunkCoalescer } from "./chunkCoalescer.js";
import type { BaseMessage } from "@langchain/core/messages";
import type { FinalRunStatus, ModelRequestFailure, RunEvent } from "../../protocol/events.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import type { LeadAgent } from "../agent/leadAgent.js";
import type { UploadedFile } from "../state/threadState.js";
import { toWireChunk, toWireMessage, wireValue } from "./wire.js";
import { MessagesDeltas } from "./valuesDelta.js";
import { randomUUID } from "node:crypto";
import { errorMessage } from "../errors.js";
import type { ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import { RESUME_CONFIG_KEY, resumeInput } from "../approvals/resume.js";
import { SubagentRunTracker } from "../subagents/runTracker.js";
import { RunUsageCollector } from "./usage.js";
import type { RunUsageView } from "../../protocol/usage.js";

export interface TurnRequest {
  agent: LeadAgent;
  threadId: string;
  runId: string;
  modelName: string;
  prompt: string;
  /** Files uploaded with this message (already copied into the thread's uploads). */
  files?: UploadedFile[];
  /**
   * The user's decisions on the thread's paused tool calls: checked against the checkpoint, then
   * the run starts with them (approvals/resume.ts). With an empty prompt, no new message.
   */
  approvals?: ApprovalDecision[];
  sandboxProvider: SandboxProvider;
  sandboxKind: string;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
}

export interface TurnResult {
  status: FinalRunStatus;
  error?: string;
  /**
   * The thread's state after the run's last finished step (the stream's last `values`), which is
   * what its last checkpoint holds: the worker reads the run's outcome from it instead of decoding
   * the checkpoint again. Absent when the run stopped before its first step.
   */
  values?: Record<string, unknown>;
  /** Tokens of this run's model calls (TokenUsage; DeerFlow's worker completion counters), its subagents' included and split under `subagents` (./usage.ts). */
  usage?: RunUsageView;
}

/** A run's usage (protocol/usage.ts); the sums live in ./usage.ts. */
export type RunUsage = RunUsageView;

/** Why a run was aborted: the caller passes one of these as the AbortSignal's reason. */
export class RunAbort extends Error {
  constructor(readonly status: "interrupted" | "timeout", message: string) {
    super(message);
    this.name = "RunAbort";
  }
}

export async function runTurn(req: TurnRequest): Promise<TurnResult> {
  const { agent, threadId, runId, emit } = req;
  const base = { run_id: runId, thread_id: threadId };
  const config = { configurable: { thread_id: threadId }, recursionLimit: agent.recursionLimit, signal: req.signal };
  emit({ ...base, event: "metadata", data: { run_id: runId, thread_id: threadId, model: req.modelName, sandbox: req.sandboxKind } });

  // An id of our own: the journal names the input message before the reducer would assign one,
  // and a middleware that edits it (Uploads) replaces it by this id.
  // No new message only for a decision run (empty prompt, no files); files alone are a message.
  const human =
    req.prompt.trim() === "" && !(req.files && req.files.length > 0)
      ? undefined
      : new HumanMessage({
          id: randomUUID(),
          content: req.prompt,
          additional_kwargs: req.files && req.files.length > 0 ? { files: req.files } : {},
        });
  let result: TurnResult = { status: "success" };
  const usage = new RunUsageCollector(req.modelName);
  const deltas = new UpdateDeltas();
  // The `task` tool's subagents, seen through their `task_*` events (subagents/runTracker.ts).
  const subagents = new SubagentRunTracker();
  let lastValues: string | undefined;
  let finalValues: Record<string, unknown> | undefined;
  let lastSummary: unknown;
  // Token chunks are held for at most a few ms and merged (./chunkCoalescer.ts); every other
  // event flushes them first, so the journal's order is the stream's.
  const chunks = new ChunkCoalescer((data) => emit({ ...base, event: "messages", data }));
  const emitInOrder = (event: RunEvent) => {
    chunks.flush();
    emit(event);
  };
  // Where this run starts in the checkpoint history: its own intermediate checkpoints are
  // compacted away when it ends (LinearSqliteSaver.compactRun).
  const compaction = runCompaction(agent);
  const startedAfter = compaction?.latestRootCheckpointId(threadId);
  try {
    // Inside the try: a decision the checkpoint no longer matches ends this run `error` with the
    // reason, and the worker still re-reads what the thread waits on (its mirror stays true).
    const { input, configurable } = await turnInput(req, human, config, emit);
    // `values` events carry the message list's change, not the list (./valuesDelta.ts).
    const messageDeltas = new MessagesDeltas(compaction ? (startedAfter ?? null) : undefined, new Set(input.messages as unknown[]));
    const stream = await agent.graph.stream(
      input,
      { ...config, configurable, streamMode: ["values", "updates", "messages", "custom"] as const },
    );
    for await (const item of stream) {
      const [mode, payload] = item as [string, unknown];
      switch (mode) {
        case "messages": {
          const [msg, meta] = payload as [BaseMessage, { langgraph_node?: string }];
          chunks.push(toWireChunk(msg, meta.langgraph_node));
          break;
        }
        case "updates": {
          const delta = deltas.delta(payload);
          usage.add(delta);
          // A hook that changed nothing (most middleware hooks, most steps) is not journaled:
          // each would be a row per hook per turn that no consumer reads.
          if (Object.keys(delta).length > 0) emitInOrder({ ...base, event: "updates", data: wireValue(delta) as Record<string, Record<string, unknown>> });
          break;
        }
        case "values": {
          finalValues = payload as Record<string, unknown>;
          const { messages, ...rest } = payload as { messages?: unknown[] } & Record<string, unknown>;
          deltas.observeValues(messages);
          // Only when something changed: most steps (a no-op middleware hook) leave every
          // business channel and the message count as they were.
          // Business channels only: a middleware's private channel (`_loop_detection`, …) is its
          // bookkeeping, grows with the thread, and is nobody's to read.
          // `jumpTo` was createAgent's routing scratch (a channel of older checkpoints), not state anyone reads.
          const business = Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith("_") && k !== "jumpTo"));
          // The summary (kilobytes) rides along only in the values event where it changed: every
          // later step of a summarized thread would otherwise journal it again. `deerflow state`
          // and threads/state read it from the checkpoint.
          if (business.summary_text === lastSummary) delete business.summary_text;
          else lastSummary = business.summary_text;
          const data = { ...(wireValue(business) as Record<string, unknown>), message_count: messages?.length ?? 0 };
          const text = JSON.stringify(data);
          // A message replaced by id changes neither the count nor the channels, but it is a change.
          const messagesDelta = messageDeltas.delta(messages ?? []);
          if (text !== lastValues || messagesDelta) {
            lastValues = text;
            messageDeltas.journaled(messages ?? []);
            emitInOrder({ ...base, event: "values", data: { ...data, messages_delta: messagesDelta ?? { keep: messages?.length ?? 0, add: [] } } });
          }
          break;
        }
        case "custom": {
          const data = payload && typeof payload === "object" && "type" in payload ? (payload as { type: string }) : { type: "custom", value: payload };
          subagents.observe(data);
          usage.observeCustom(data);
          emitInOrder({ ...base, event: "custom", data });
          break;
        }
        default:
          break;
      }
    }
    chunks.flush();
  } catch (err) {
    try {
      chunks.flush(); // what the stream produced before it failed or was cancelled
    } catch {
      // The journal itself is failing: the run ends with the error being handled here.
    }
    const reason: unknown = req.signal.aborted ? req.signal.reason : undefined;
    if (reason instanceof RunAbort) {
      result = { status: reason.status, error: reason.message };
    } else if (req.signal.aborted) {
      result = { status: "interrupted", error: "Run cancelled." };
    } else {
      const e = err instanceof Error ? err : new Error(String(err));
      result = { status: "error", error: errorMessage(e) };
      const code = errorCode(e);
      const failure = requestFailureOf(e);
      emit({
        ...base,
        event: "error",
        data: { name: e.name, message: e.message, ...(typeof code === "string" ? { code } : {}), ...(failure ? { failure: { ...failure, model: req.modelName } } : {}) },
      });
    }
  } finally {
    // A subagent still open when the run stopped was stopped with it: say so in its namespace.
    try {
      for (const data of subagents.close(result.status, result.error)) emit({ ...base, event: "custom", data });
    } catch {
      // The journal itself is failing: the run ends with that error.
    }
    await releaseSandbox(req, finalValues);
  }
  // Any final status: the last checkpoint holds what the run left (a crash never gets here, so
  // a killed run's steps stay for the next run to resume from).
  compaction?.compactRun(threadId, startedAfter);
  // No `end` event here: the worker decides the final status (delivery check, a concurrent
  // cancel already recorded in the run store) and journals `end` with it.
  const total = usage.total(subagents);
  return { ...result, ...(total ? { usage: total } : {}), ...(finalValues ? { values: finalValues } : {}) };
}

/**
 * The graph input of a turn: the user's message, and for a decision run (issue 13) the
 * decisions checked against what the checkpoint says the thread waits on (not what the client
 * believed): rejections as tool results, approvals for the approval middleware. The input is
 * journaled as the `__start__` node's update: with updates carrying deltas (./updateDeltas.ts) no
 * middleware re-sends it, and a follower must still see the prompt and the rejections.
 */
async function turnInput(
  req: TurnRequest,
  human: HumanMessage | undefined,
  config: { configurable: Record<string, unknown> },
  emit: (event: RunEvent) => void,
): Promise<{ input: Record<string, unknown>; configurable: Record<string, unknown> }> {
  const base = { run_id: req.runId, thread_id: req.threadId };
  let input: Record<string, unknown> = { messages: human ? [human] : [] };
  let configurable = config.configurable;
  if (req.approvals) {
    const snap = await req.agent.graph.getState(config);
    const values = snap.values as { pending_approvals?: PendingApproval[] | null; approval_always_allow?: unknown };
    const decided = resumeInput(values.pending_approvals ?? [], req.approvals, values.approval_always_allow);
    emit({ ...base, event: "custom", data: { type: "approval_decided", decisions: req.approvals } });
    input = { ...decided.input, messages: [...decided.input.messages, ...(human ? [human] : [])] };
    configurable = { ...configurable, [RESUME_CONFIG_KEY]: decided.resume };
  }
  const messages = input.messages as BaseMessage[];
  if (messages.length > 0) emit({ ...base, event: "updates", data: { __start__: { messages: messages.map((m) => toWireMessage(m)) } } });
  return { input, configurable };
}

/** The saver's run compaction, when the agent's checkpointer offers it (ours does). */
interface RunCompaction {
  latestRootCheckpointId(threadId: string): string | undefined;
  compactRun(threadId: string, startedAfter: string | undefined): number;
}

function runCompaction(agent: LeadAgent): RunCompaction | undefined {
  const saver = (agent.graph as { checkpointer?: unknown }).checkpointer as Partial<RunCompaction> | undefined;
  return saver && typeof saver.compactRun === "function" && typeof saver.latestRootCheckpointId === "function" ? (saver as RunCompaction) : undefined;
}

/** The terminal event of a run, built in one place (the manager journals it). */
export function endEvent(
  threadId: string,
  runId: string,
  result: { status: FinalRunStatus; error?: string | null; usage?: Record<string, unknown> | RunUsage | null },
  extra: Record<string, unknown> = {},
): RunEvent {
  return {
    run_id: runId,
    thread_id: threadId,
    event: "end",
    data: {
      thread_id: threadId,
      run_id: runId,
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      ...(result.usage ? { usage: { ...result.usage } } : {}),
      ...extra,
    },
  };
}

/** The sorted model failure LLMErrorHandlingMiddleware hung on its LlmCallError, wherever langchain wrapped it. */
function requestFailureOf(err: unknown): ModelRequestFailure | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 20; e = e.cause, depth++) {
    const failure = (e as Error & { failure?: ModelRequestFailure }).failure;
    if (failure && typeof failure === "object") return failure;
  }
  return undefined;
}

/** A typed error's stable code; langchain wraps middleware errors (MiddlewareError), so follow `cause`. */
function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 20; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** The sandbox is acquired lazily by the first sandbox tool call and released when the run ends. */
async function releaseSandbox(req: TurnRequest, values: Record<string, unknown> | undefined): Promise<void> {
  try {
    const state: unknown = values ?? (await req.agent.graph.getState({ configurable: { thread_id: req.threadId } })).values;
    const id = (state as { sandbox?: { sandbox_id?: string | null } | null }).sandbox?.sandbox_id;
    if (id) await req.sandboxProvider.release(id);
  } catch {
    // Releasing is best effort: a provider that cannot release keeps its own idle timeout.
  }
}
