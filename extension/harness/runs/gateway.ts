/**
 * `startRun`: the single choke point through which every run is created — the CLI, the panel,
 * the command palette, anything later. It validates what the client sent, scrubs it, and builds
 * the server-side RunContext that no client can forge (DeerFlow gateway `start_run`).
 */
import { randomUUID } from "node:crypto";
import { scrubSecrets } from "../trust/secrets.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { resolveModel, runKeys } from "../models/factory.js";
import type { KeyFor } from "../models/factory.js";
import type { ResolvedModel } from "../models/resolvedModel.js";
import { HarnessError } from "../errors.js";
import type { ThreadStore } from "../store/threads.js";
import type { MultitaskStrategy } from "../store/runs.js";
import type { UploadedFile } from "../state/threadState.js";
import type { Admission, RunManager } from "./manager.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import type { ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";
import { continuedPolicy, storedPolicy, type ApprovalPolicy, type PolicyOverrides } from "../approvals/policy.js";
import { checkDecisions, decideAll, describePending } from "../approvals/resume.js";
import type { ThreadRecord } from "../store/threads.js";
import { subagentSettings, type SubagentSettings } from "../subagents/config.js";
import { resolveSummarization, type RunSummarization } from "./compaction.js";
import { chainSettings, type ChainSettings } from "../config/sections.js";
import type { PriceList } from "./usage.js";

/** What a client may ask for. Everything else about a run is decided here. */
export interface StartRunRequest {
  threadId: string;
  /** The user's message; may be empty only for a run that carries approval decisions. */
  prompt: string;
  /** The user's decisions on the thread's paused tool calls (issue 13): every pending call, once. */
  approvals?: ApprovalDecision[];
  files?: UploadedFile[];
  model?: string;
  /** The operator's own ad-hoc endpoint (CLI `--base-url`); allowed for that invocation only. */
  baseURL?: string;
  /** Never stored; held in memory for this run's model client, and only its. */
  apiKey?: string;
  /**
   * The keys the process holds by `api_key_env` name (the harness server's session): each of the
   * run's other models (title, summary, a custom subagent type's) gets the one for ITS source.
   */
  heldKey?: (apiKeySource: string) => string | undefined;
  planMode?: boolean;
  /** Register the `task` tool for this run (CLI `--subagents`); absent → the config's `subagents.enabled`. */
  subagents?: boolean;
  /** This run's total token budget (CLI `--max-tokens`, `deerflow.maxTokensPerRun`); absent → the config's `token_budget`. 0 = none. */
  maxTokensPerRun?: number;
  /** This run's budget of model turns (CLI `--max-turns`, `deerflow.maxTurnsPerRun`); absent → the config's `max_turns`. */
  maxTurns?: number;
  idempotencyKey?: string;
  multitask?: MultitaskStrategy;
  /** The message answers the calls the thread waits on: they are rejected with it as the reason (protocol/rpc.ts runs/start). */
  rejectPending?: boolean;
  /** Client context: only whitelisted keys pass, secrets are scrubbed. */
  context?: Record<string, unknown>;
  timeoutMs?: number;
}

/** Server-side context of one run. Built here only. */
export interface RunContext {
  runId: string;
  threadId: string;
  workspaceFolder: string;
  dirs: ThreadDirs;
  model: ResolvedModel;
  /** The configured title model (`title_model`), if any: TitleMiddleware's LLM. */
  titleModel?: ResolvedModel;
  /** Which key each of the run's models gets (models/factory.ts runKeys); never stored. */
  keyFor: KeyFor;
  planMode: boolean;
  /** Present when the run may delegate to subagents (issue 14): the `task` tool's limits. */
  subagents?: SubagentSettings;
  /** Summarization (issue 15): the configured settings and summary model (runs/compaction.ts). */
  summarization?: RunSummarization;
  /** Each model the run may spend tokens on (lead, title, summary, subagents), by configured name: what `by_model` is priced with (runs/usage.ts). */
  prices: PriceList;
  /** DeerFlow's middleware sections for this run: title, loop detection, tool output, read-before-write, safety, and the token budget (`chain.tokenBudget`, absent = none). */
  chain: ChainSettings;
  /** Model turns the run may make before it ends `turn_capped` (issue 20), and DeerFlow's step ceiling. */
  turns: { maxTurns: number; maxRecursionLimit?: number };
  allowHostCommands: boolean;
  /** Which tool calls run, ask or are refused: the operator's, never the client's. */
  approvalPolicy: ApprovalPolicy;
  /** Decisions this run carries on the thread's paused tool calls (checked against the checkpoint again). */
  approvals?: ApprovalDecision[];
  timeoutMs?: number;
  prompt: string;
  files: UploadedFile[];
  context: Record<string, unknown>;
}

/** Context keys a client may set; the rest is dropped (DeerFlow's context whitelist). */
export const CONTEXT_WHITELIST = new Set(["plan_mode", "thinking_enabled", "reasoning_effort", "locale", "user_timezone", "client"]);

export interface GatewayServices {
  workspaceFolder: string;
  threads: ThreadStore;
  manager: RunManager;
  config: HarnessConfig;
  /** The operator allowed host commands (CLI flag or setting) — never the client. */
  allowHostCommands: boolean;
  /** The operator's approval policy for this run's sandbox (CLI flag, config, user/machine settings). */
  approvalPolicy: ApprovalPolicy;
  /**
   * The classes this invocation's operator set explicitly (`deerflow approve --approval`): a run
   * that continues a paused turn takes these as given and keeps the paused run's other classes
   * where they are stricter (approvals/policy.ts continuedPolicy).
   */
  approvalExplicit?: PolicyOverrides;
}

/** What the run that paused on approvals ran with, so a decision can continue the same turn (CLI). */
export interface PausedRun {
  run_id: string;
  model: string;
  /** Only for an ad-hoc endpoint (`--base-url`), which has no configured name to find it by. */
  base_url?: string;
  allow_host_commands: boolean;
  /** The paused turn may hold `task` calls: its decision runs with the `task` tool too. */
  subagents?: boolean;
  /**
   * The approval policy the paused run had, every class (absent on pauses recorded before it was
   * kept): the run that continues the turn is never looser (startRun, continuedPolicy).
   */
  approval?: PolicyOverrides;
}

export function pausedRunOf(thread: ThreadRecord): PausedRun | undefined {
  const p = thread.metadata.paused_run as Partial<PausedRun> | undefined;
  if (!p || typeof p.model !== "string" || typeof p.run_id !== "string") return undefined;
  const { approval: raw, ...rest } = p;
  const approval = storedPolicy(raw);
  return { ...(rest as PausedRun), ...(approval ? { approval } : {}) };
}

/** The calls a thread waits on, as the worker mirrored them from the checkpoint into the thread row. */
export function pendingApprovalsOf(thread: ThreadRecord): PendingApproval[] {
  const p = thread.metadata.pending_approvals;
  return Array.isArray(p) ? (p as PendingApproval[]) : [];
}

/** A message sent instead of a decision, as the rejection's reason (within DECISION_LIMITS). */
function rejectionReason(prompt: string): string {
  const text = prompt.trim();
  if (!text) return "the user sent a new message instead";
  const max = DECISION_LIMITS.maxReasonChars;
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function startRun(s: GatewayServices, req: StartRunRequest): { admission: Admission; context: RunContext } {
  validateThreadId(req.threadId);
  const thread = s.threads.get(req.threadId);
  if (!thread) throw new HarnessError("thread_not_found", `No thread ${req.threadId} in this workspace.`);
  if (thread.workspaceFolder !== s.workspaceFolder) {
    throw new HarnessError("workspace_mismatch", `Thread ${req.threadId} belongs to another workspace folder.`);
  }
  if (typeof req.prompt !== "string") throw new HarnessError("usage", "A run needs a prompt.");
  // A thread paused on tool calls takes a decision first: every pending call, approved or
  // rejected. A new message with `interrupt` rejects them all first; without it, it is refused.
  const pending = pendingApprovalsOf(thread);
  let approvals = req.approvals;
  if (approvals) {
    checkDecisions(pending, approvals);
  } else if (pending.length > 0) {
    if (req.multitask !== "interrupt" && req.rejectPending !== true) {
      // One line: what waits, and the command that decides it (the CLI prints this as is).
      throw new HarnessError(
        "approval_pending",
        `Thread ${req.threadId} waits for your decision on ${describePending(pending)}: decide with deerflow approve --thread ${req.threadId}, or send with --multitask interrupt to reject them.`,
      );
    }
    // The new message is the user's answer to what waited: it is the reason the model reads.
    approvals = decideAll(pending, "reject", rejectionReason(scrubSecrets(req.prompt) as string));
  }
  // A message of files alone is one (DeerFlow's upload-only turn); a decision run carries none.
  if (req.prompt.trim() === "" && !approvals && (req.files ?? []).length === 0) throw new HarnessError("usage", "A run needs a non-empty prompt or files.");
  // The whitelist: a configured model, or the operator's explicit ad-hoc endpoint.
  const model = resolveModel(s.config, { ...(req.model ? { name: req.model } : {}), ...(req.baseURL ? { baseURL: req.baseURL } : {}) });
  const titleName = s.config.title.enabled ? s.config.title.model_name : undefined;
  const titleModel = titleName ? resolveModel(s.config, { name: titleName }) : undefined;
  const clientContext = Object.fromEntries(Object.entries(req.context ?? {}).filter(([k]) => CONTEXT_WHITELIST.has(k)));
  const context = scrubSecrets(clientContext) as Record<string, unknown>;
  const planMode = req.planMode ?? context.plan_mode === true;
  const prompt = scrubSecrets(req.prompt) as string;
  const files = req.files ?? [];
  // A run that decides the paused calls continues that turn: it keeps the policy the turn
  // started with (a `write=ask` given to `deerflow run` still asks for the next write), unless
  // the decider's own flags say otherwise for a class.
  const pausedPolicy = approvals ? pausedRunOf(thread)?.approval : undefined;
  const approvalPolicy = pausedPolicy ? continuedPolicy(pausedPolicy, s.approvalPolicy, s.approvalExplicit) : s.approvalPolicy;
  // Before admission: a thread folder the sandbox replaced with a link refuses the run
  // (HarnessError "thread_folder_redirected"), and no run is left pending for it.
  const dirs = ensureThreadDirs(s.workspaceFolder, req.threadId);
  const runId = randomUUID();
  const admission = s.manager.admit({
    run_id: runId,
    thread_id: req.threadId,
    ...(req.multitask ? { multitask_strategy: req.multitask } : {}),
    idempotency_key: req.idempotencyKey ?? null,
    model: model.name,
    // What is stored is what the journal and the panel may show: no keys, no host paths.
    input: { prompt, files, plan_mode: planMode, ...(approvals ? { approvals: scrubSecrets(approvals) } : {}) },
    context,
  });
  const run = admission.run;
  return {
    admission,
    context: {
      runId: run.run_id,
      threadId: req.threadId,
      workspaceFolder: s.workspaceFolder,
      dirs,
      model,
      ...(titleModel ? { titleModel } : {}),
      keyFor: runKeys(model, req.apiKey, req.heldKey),
      planMode,
      ...((req.subagents ?? s.config.subagents.enabled) ? { subagents: subagentSettings(s.config.subagents, (name) => resolveModel(s.config, { name })) } : {}),
      summarization: resolveSummarization(s.config),
      prices: { ...Object.fromEntries(s.config.models.map((m) => [m.name, resolveModel(s.config, { name: m.name })])), [model.name]: model },
      chain: chainSettings(s.config, req.maxTokensPerRun),
      turns: { maxTurns: req.maxTurns ?? s.config.max_turns, ...(s.config.max_recursion_limit ? { maxRecursionLimit: s.config.max_recursion_limit } : {}) },
      allowHostCommands: s.allowHostCommands,
      approvalPolicy,
      ...(approvals ? { approvals } : {}),
      ...(req.timeoutMs ? { timeoutMs: req.timeoutMs } : {}),
      prompt: req.prompt,
      files,
      context,
    },
  };
}
