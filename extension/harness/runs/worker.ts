/**
 * The run worker (DeerFlow `run_agent`): takes an admitted run with a lease, builds the lead agent,
 * journals every stream item, renews the lease, checks delivery, and records the final status.
 *
 * The final status is decided against the run store, not assumed: if a cancel (here or from
 * another process) moved the run to `interrupted` first, that is what `end` says. Every ending
 * is recorded by ending.ts (status, receipt, `end`, lease), with this run's delivery facts.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BlobStore } from "../store/blobs.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import type { RunManager, Admission } from "./manager.js";
import type { RunContext } from "./gateway.js";
import { buildLeadAgent } from "../agent/leadAgent.js";
import { createChatModel, thinkingFromContext, withKey } from "../models/factory.js";
import { runTurn, RunAbort } from "./runTurn.js";
import { summarizationOptions } from "./compaction.js";
import { withCost } from "./usage.js";
import type { TurnResult } from "./runTurn.js";
import type { ThreadStore } from "../store/threads.js";
import type { BaseMessage} from "@langchain/core/messages";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { checkDelivery, deliveryError, snapshotOutputs, DeliveryCollector } from "./delivery.js";
import type { DeliveryReceipt } from "./delivery.js";
import { endRun } from "./ending.js";
import { errorMessage, HarnessError } from "../errors.js";
import { HostFiles } from "../sandbox/files.js";
import { TrackedFiles } from "../changes/tracker.js";
import type { PendingApproval } from "../../protocol/approvals.js";
import { memoryRunHooks, type MemoryWiring } from "../memory/hooks.js";
import { prepareRunSkills, type RunSkills, type SkillsContext } from "../skills/service.js";
import { ChatVSCodeLM } from "../models/vscodeLm/chatModel.js";
import { mcpRunTools, type McpRunSource } from "../mcp/runTools.js";

export interface WorkerServices {
  manager: RunManager;
  /** The thread rows: the worker syncs the thread's title after a run. */
  threads?: ThreadStore;
  checkpointer: BaseCheckpointSaver;
  blobs: BlobStore;
  sandboxProvider: SandboxProvider;
  sandboxKind: "local" | "devcontainer";
  bashTimeoutMs?: number;
  /** Long-term memory, when on for this run (issue 15): the entry point's per-user service. */
  memory?: MemoryWiring;
  /** Where the workspace's skills are found (issue 24); absent → a run without skills. */
  skills?: SkillsContext;
  /** The folder's MCP servers (issue 23): their tools join the run, their states its journal. */
  mcp?: McpRunSource;
}

/** `errorCode`: the HarnessError code when the run was refused before it ran (sandbox preflight). */
export type WorkerResult = TurnResult & { errorCode?: string };

/**
 * A run on a vscode.lm model (issue 25): its lead model's request count (each one billed by
 * Copilot) and `estimated`, since those tokens are countTokens estimates, in `end.data.usage`.
 */
function lmUsage(model: unknown, usage: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!(model instanceof ChatVSCodeLM)) return usage;
  return { ...(usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 }), model_requests: model.requests, estimated: true };
}

/** How often a running run proves it is alive (and learns of a cancel from another process). */
export async function executeRun(s: WorkerServices, admission: Admission, ctx: RunContext): Promise<WorkerResult> {
  const { manager } = s;
  const run = admission.run;
  // "interrupt": the newer run starts only once the older one has really stopped writing.
  if (admission.interrupted) {
    const prior = manager.runs.get(admission.interrupted);
    if (prior) await manager.waitForEnd(prior);
  }
  const controller = new AbortController();
  const unregister = manager.registerLocal(run.run_id, controller);
  let stopHeartbeat: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  // This run's present_files results, whatever way it ends: every receipt carries them.
  const delivery = new DeliveryCollector();
  const receiptOf = (): DeliveryReceipt => ({ type: "run.delivery", ...delivery.facts() });
  let tracker: TrackedFiles | undefined;
  try {
    if (!manager.runs.start(run.run_id, manager.owner, manager.leaseTtlMs)) {
      // Cancelled (or recovered) while pending: it never ran.
      const ended = endRun(manager, { runId: run.run_id, from: ["pending"], status: "interrupted", error: "Cancelled before it started." });
      return { status: ended?.status ?? "interrupted", error: ended?.error ?? "Cancelled before it started." };
    }
    stopHeartbeat = manager.startHeartbeat(run.run_id, (why) => controller.abort(new RunAbort("interrupted", why)));
    timer = ctx.timeoutMs
      ? setTimeout(() => controller.abort(new RunAbort("timeout", `Run timed out after ${ctx.timeoutMs! / 1000} s.`)), ctx.timeoutMs)
      : undefined;

    // A sandbox the run may not use at all (a dev container configuration the user has not
    // approved) ends the run here, with what to do, before the model is asked anything.
    const refusal = await sandboxRefusal(s.sandboxProvider);
    if (refusal) return endRefused(manager, run.run_id, ctx.threadId, refusal, receiptOf());

    const before = await snapshotOutputs(ctx.dirs, controller.signal);
    // The run's skills, once: prompt, view, activation and policy agree for the whole run.
    const skills = await runSkills(s.skills, controller.signal);
    // What the file tools write is recorded with its before-content, for review and revert.
    // The tracker's own file operations map paths too: with skills, /mnt/skills reads go to the view.
    const fileDirs = skills ? { ...ctx.dirs, skills: skills.mount } : ctx.dirs;
    tracker = manager.changes ? new TrackedFiles(new HostFiles(fileDirs), { store: manager.changes, dirs: fileDirs, runId: run.run_id }) : undefined;
    const memory = s.memory
      ? memoryRunHooks(
          s.memory.service,
          ctx.threadId,
          { name: ctx.model.name, modelId: ctx.model.model, ...(ctx.model.adHoc && ctx.model.baseURL ? { baseURL: ctx.model.baseURL } : {}) },
          s.memory.onQueued,
        )
      : undefined;
    const leadModel = createChatModel(ctx.model, { ...withKey(ctx.keyFor, ctx.model), ...thinkingFromContext(ctx.context) });
    // MCP (issue 23): each server's state is journaled (after the run's metadata), its tools join the run.
    const mcp = s.mcp ? await mcpRunTools(s.mcp, { threadId: ctx.threadId, runId: run.run_id, signal: controller.signal, blobs: s.blobs, supportsVision: ctx.model.supportsVision, append: (e) => manager.journal.append(e) }) : undefined;
    const agent = buildLeadAgent({
      model: leadModel,
      supportsVision: ctx.model.supportsVision,
      dirs: ctx.dirs,
      sandboxProvider: s.sandboxProvider,
      sandboxKind: s.sandboxKind,
      allowHostCommands: ctx.allowHostCommands,
      ...(s.bashTimeoutMs !== undefined ? { bashTimeoutMs: s.bashTimeoutMs } : {}),
      blobs: s.blobs,
      checkpointer: s.checkpointer,
      planMode: ctx.planMode,
      ...(ctx.subagents ? { subagents: { settings: ctx.subagents, modelName: ctx.model.name, keyFor: ctx.keyFor } } : {}),
      // Memory (issue 15): injection, extraction after the turn, and DeerFlow's memory_flush_hook —
      // what a compaction is about to summarize is queued for extraction first (lead only).
      ...(memory ? { memory, beforeSummarize: (messages: BaseMessage[]) => Promise.resolve(memory.flush(messages)) } : {}),
      chainSettings: ctx.chain,
      turns: ctx.turns,
      ...(ctx.summarization ? { summarization: summarizationOptions(ctx.summarization, ctx.model, ctx.keyFor) } : {}),
      ...(tracker ? { hostFiles: tracker } : {}),
      approvalPolicy: ctx.approvalPolicy,
      ...(mcp ? { mcp: { tools: mcp.tools, toolSearch: s.mcp!.toolSearch } } : {}),
      // Its own key (by its api_key_env), never the run's: the title model may be another endpoint.
      ...(ctx.titleModel ? { titleModel: createChatModel(ctx.titleModel, withKey(ctx.keyFor, ctx.titleModel)) } : {}),
      ...(skills ? { skills } : {}),
    });
    let result: WorkerResult;
    try {
      result = await runTurn({
        agent,
        threadId: ctx.threadId,
        runId: run.run_id,
        modelName: ctx.model.name,
        prompt: ctx.prompt,
        files: ctx.files,
        ...(ctx.approvals ? { approvals: ctx.approvals } : {}),
        sandboxProvider: s.sandboxProvider,
        sandboxKind: s.sandboxKind,
        signal: controller.signal,
        emit: (e) => {
          delivery.observe(e);
          manager.journal.append(e);
          if (e.event === "metadata") mcp?.started();
        },
      });
    } finally {
      stopHeartbeat?.();
      if (timer) clearTimeout(timer);
      mcp?.done();
    }
    // Whatever the status: bash may have changed or removed a file since the tool wrote it.
    await tracker?.settle();

    const after = await finalState(agent, ctx.threadId, result.values);
    const { values: _values, ...withoutValues } = result;
    result = withoutValues;
    if (s.threads && after.title && s.threads.get(ctx.threadId)?.title !== after.title) {
      s.threads.rename(ctx.threadId, after.title);
    }
    // The thread row mirrors what the checkpoint says the thread waits on, so startRun can refuse
    // a new message (and a panel can show the cards) without reading the checkpoint.
    const paused = after.pendingApprovals.length > 0;
    s.threads?.setMetadata(ctx.threadId, "pending_approvals", paused ? after.pendingApprovals : undefined);
    s.threads?.setMetadata(
      ctx.threadId,
      "paused_run",
      paused
        ? {
            run_id: run.run_id,
            model: ctx.model.name,
            ...(ctx.model.adHoc && ctx.model.baseURL ? { base_url: ctx.model.baseURL } : {}),
            allow_host_commands: ctx.allowHostCommands,
            ...(ctx.subagents ? { subagents: true } : {}),
            // The policy this turn ran with: the run that continues it is never looser (runs/gateway.ts).
            approval: { ...ctx.approvalPolicy },
          }
        : undefined,
    );
    const extra: Record<string, unknown> = {};
    if (result.status === "success" && after.clarification) {
      extra.stop_reason = "clarification";
      if (after.clarification.human_input) extra.human_input = after.clarification.human_input;
    }
    // A guard middleware stamped why the final answer is capped (ModelLength, Safety, LoopDetection).
    if (result.status === "success" && after.stopReason) extra.stop_reason = after.stopReason;
    // A middleware saved DeerFlow's error fallback as the answer (TerminalResponse): visible, but a failure.
    // Paused on tool calls the user decides: none of that turn's calls ran.
    if (result.status === "success" && after.pendingApprovals.length > 0) {
      extra.stop_reason = "approval";
      extra.pending_approvals = after.pendingApprovals;
    }
    if (result.status === "success" && after.errorFallback) result = { ...result, status: "error", error: after.errorFallback };
    // Outputs are verified only for a run that finished its turn (DeerFlow): an error, a cancel
    // or a timeout still gets its receipt, with this run's delivery facts.
    let receipt = receiptOf();
    if (result.status === "success") {
      // No tool ran: nothing of the agent's can have changed outputs/, so the walk is skipped.
      const afterOutputs = delivery.toolsRan ? await snapshotOutputs(ctx.dirs, controller.signal) : before;
      receipt = checkDelivery(before, afterOutputs, delivery.facts());
      const incomplete = deliveryError(receipt);
      if (incomplete) result = { status: "error", error: incomplete };
    }

    // Record the final status; if a cancel got there first, the store's status wins.
    const usage = lmUsage(leadModel, result.usage ? { ...withCost(result.usage, ctx.model, ctx.prices) } : null);
    const ended = endRun(manager, { runId: run.run_id, from: ["running"], status: result.status, error: result.error ?? null, usage, extra: result.status === "success" ? extra : {}, receipt });
    if (!ended || ended.status === result.status) return result;
    return { status: ended.status, ...(ended.error ? { error: ended.error } : {}) };
  } catch (err) {
    // Something outside the turn failed (building the agent, reading the final state): the run
    // still ends, as `error`, with its end journaled — never left `running`.
    const message = `The run could not complete: ${errorMessage(err)}`;
    await tracker?.settle();
    const ended = endRun(manager, { runId: run.run_id, from: ["running"], status: "error", error: message, receipt: receiptOf() });
    return { status: ended?.status ?? "error", error: ended?.error ?? message };
  } finally {
    stopHeartbeat?.();
    if (timer) clearTimeout(timer);
    unregister();
  }
}

/** Skills that cannot be read (a broken disk, a view that cannot be written) leave the run without them, said in the log. */
async function runSkills(ctx: SkillsContext | undefined, signal: AbortSignal): Promise<RunSkills | undefined> {
  if (!ctx) return undefined;
  try {
    return await prepareRunSkills(ctx, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    ctx.warn?.(`Skills are not available for this run: ${errorMessage(err)}`);
    return undefined;
  }
}

async function sandboxRefusal(provider: SandboxProvider): Promise<HarnessError | undefined> {
  try {
    await provider.preflight?.();
    return undefined;
  } catch (err) {
    if (err instanceof HarnessError) return err;
    throw err;
  }
}

/**
 * The run ends `error` with the refusal's message; its `error` event and its `end` (as
 * `error_code`) carry the code, so a client that only follows the journal can offer the fix.
 */
function endRefused(manager: RunManager, runId: string, threadId: string, refusal: HarnessError, receipt: DeliveryReceipt): WorkerResult {
  manager.journal.append({ run_id: runId, thread_id: threadId, event: "error", data: { name: refusal.name, message: refusal.message, code: refusal.code } });
  const ended = endRun(manager, { runId, from: ["running"], status: "error", error: refusal.message, extra: { error_code: refusal.code }, receipt });
  if (!ended || ended.status === "error") return { status: "error", error: refusal.message, errorCode: refusal.code };
  return { status: ended.status, ...(ended.error ? { error: ended.error } : {}) };
}

interface FinalState {
  artifacts: string[];
  /** Tool calls the thread now waits on (middlewares/approval.ts). */
  pendingApprovals: PendingApproval[];
  title: string | null;
  /** Set when the run ended on ask_clarification (the last message is its ToolMessage). */
  clarification?: { human_input?: Record<string, unknown> };
  /** `additional_kwargs.stop_reason` of the final AI answer (model_length_capped, safety_capped, loop_capped, subagent_limit_capped). */
  stopReason?: string;
  /** The final AI answer's text when it is flagged `deerflow_error_fallback`. */
  errorFallback?: string;
}

/** What the run left, from its last values (runTurn) or, when it stopped before any step, the checkpoint. */
async function finalState(agent: ReturnType<typeof buildLeadAgent>, threadId: string, lastValues: Record<string, unknown> | undefined): Promise<FinalState> {
  const values = (lastValues ?? (await agent.graph.getState({ configurable: { thread_id: threadId } })).values) as { artifacts?: string[]; title?: string | null; messages?: BaseMessage[]; pending_approvals?: PendingApproval[] | null };
  const last = values.messages?.at(-1);
  const out: FinalState = { artifacts: (values.artifacts ?? []).slice(), title: values.title ?? null, pendingApprovals: values.pending_approvals ?? [] };
  if (last && ToolMessage.isInstance(last) && last.name === "ask_clarification") {
    const human = (last.additional_kwargs as { human_input?: Record<string, unknown> }).human_input;
    out.clarification = human ? { human_input: human } : {};
  }
  if (last && AIMessage.isInstance(last)) {
    const kw = last.additional_kwargs as { stop_reason?: unknown; deerflow_error_fallback?: unknown };
    if (typeof kw.stop_reason === "string") out.stopReason = kw.stop_reason;
    if (kw.deerflow_error_fallback === true) out.errorFallback = typeof last.content === "string" ? last.content : "The model returned no final response.";
  }
  return out;
}
