/**
 * `deerflow run`: one turn on a thread, through startRun (the one choke point), the run manager
 * and the worker; every journaled event is printed as a JSON Line carrying its `seq`. The last
 * line is the `end` event. Exit 0 on `success`, 1 on any other final status, 2 on a usage error
 * (nothing is run and nothing is written).
 */
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { parse, requireString, workspaceArg, writeJsonLine, UsageError, valueUsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { loadHarnessConfig, type HarnessConfig } from "../config/harnessConfig.js";
import { resolveModel, vscodeLmUnavailable } from "../models/factory.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { createSandboxProvider, parseSandboxChoice } from "../sandbox/select.js";
import type { SandboxChoice } from "../sandbox/select.js";
import { launchRun } from "../runs/launcher.js";
import { openRunSystem } from "../runs/services.js";
import { HarnessError } from "../errors.js";
import type { StoredEvent } from "../store/events.js";
import type { RunManager } from "../runs/manager.js";
import type { RunRecord } from "../store/runs.js";
import type { ApprovalDecision, PendingApproval } from "../../protocol/approvals.js";
import { parsePolicySpec, type PolicyOverrides } from "../approvals/policy.js";
import { decideAll } from "../approvals/resume.js";
import { pausedRunOf, pendingApprovalsOf } from "../runs/gateway.js";
import { openRunMemory } from "./memory.js";
import { openMcpRegistry, toolSearchSettings } from "../mcp/open.js";
import type { McpRegistry } from "../mcp/registry.js";
import { diagnostics } from "../diagnostics.js";
import { readablePrinter } from "./readable.js";

/** Flags of every command that starts a run (`run`, `approve`). */
const runOptions = {
  workspace: { type: "string" },
  thread: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "api-key-stdin": { type: "boolean" },
  "plan-mode": { type: "boolean" },
  subagents: { type: "boolean" },
  "no-memory": { type: "boolean" },
  "max-tokens": { type: "string" },
  "max-turns": { type: "string" },
  "allow-host-commands": { type: "boolean" },
  approval: { type: "string" },
  "data-dir": { type: "string" },
  timeout: { type: "string" },
  "idempotency-key": { type: "string" },
  sandbox: { type: "string" },
  json: { type: "boolean" },
} as const;

const options = {
  ...runOptions,
  prompt: { type: "string" },
  upload: { type: "string", multiple: true },
  multitask: { type: "string" },
} as const;

const approveOptions = {
  ...runOptions,
  all: { type: "string" },
  approve: { type: "string", multiple: true },
  reject: { type: "string", multiple: true },
  "always-allow": { type: "string", multiple: true },
  reason: { type: "string" },
} as const;

/**
 * How a run command prints its events: JSON Lines (stdout not a terminal, or `--json`), else the
 * readable stream (readable.ts).
 */
export function eventPrinter(json: boolean | undefined, workspace: string, threadId: string): (e: StoredEvent) => void {
  if (json || !process.stdout.isTTY) return (e) => writeJsonLine(eventLine(e));
  const color = !process.env.NO_COLOR && process.env.TERM !== "dumb";
  return readablePrinter({ write: (t) => process.stdout.write(t), color, workspace, threadId });
}

/** The CLI's line for a journaled event. */
export function eventLine(e: StoredEvent): Record<string, unknown> {
  return { seq: e.seq, event: e.event, run_id: e.run_id, thread_id: e.thread_id, data: e.data };
}

type RunFlags = ReturnType<typeof parse<typeof runOptions>>;

/** What the invocation asks for, beyond the flags every run command shares. */
interface StreamedRunRequest {
  command: string;
  threadId: string;
  createThread: boolean;
  prompt: string;
  uploads?: string[];
  multitask?: "reject" | "interrupt";
  /** A decision run: the decisions, or a function of the thread's pending calls that builds them. */
  approvals?: (pending: PendingApproval[]) => ApprovalDecision[];
}

export async function runCommand(argv: string[]): Promise<number> {
  const v = parse(argv, options, "run");
  const uploads = (v.upload ?? []).map((f) => {
    if (!existsSync(f) || !statSync(f).isFile()) throw new UsageError(`deerflow run: --upload ${f} is not a file`);
    return f;
  });
  // A message may be files alone (DeerFlow's upload-only turn): --prompt is then optional.
  const prompt = uploads.length > 0 && v.prompt === undefined ? "" : requireString(v.prompt, "--prompt TEXT", "run");
  if (prompt.trim() === "" && uploads.length === 0) throw new UsageError("deerflow run: --prompt is empty");
  const threadId = v.thread ?? randomUUID();
  const multitask = v.multitask ?? "reject";
  if (multitask !== "reject" && multitask !== "interrupt") throw new UsageError("deerflow run: --multitask takes reject or interrupt");
  return streamedRun(v, { command: "run", threadId, createThread: true, prompt, uploads, multitask });
}

/**
 * `deerflow approve`: the user's decision on a paused turn's tool calls, as a run that streams
 * like `run` (same JSON Lines, same exit codes). Every pending call is decided in one command,
 * or nothing runs (usage error naming the undecided calls). Without --model/--base-url/
 * --allow-host-commands it resumes with what the paused run had: the decision continues that turn.
 * The same for the approval policy, class by class: the paused run's mode stays where it is
 * stricter than the configuration's, and only a class named in this command's --approval takes
 * the new mode.
 */
export async function approveCommand(argv: string[]): Promise<number> {
  const v = parse(argv, approveOptions, "approve");
  const threadId = requireString(v.thread, "--thread ID", "approve");
  const approveIds = v.approve ?? [];
  const rejectIds = v.reject ?? [];
  const always = new Set(v["always-allow"] ?? []);
  if (v.all !== undefined && (approveIds.length > 0 || rejectIds.length > 0)) {
    throw new UsageError("deerflow approve: use either --all approve|reject or --approve/--reject CALL_ID, not both");
  }
  if (v.all !== undefined && v.all !== "approve" && v.all !== "reject") throw new UsageError("deerflow approve: --all takes approve or reject");
  if (v.all === undefined && approveIds.length === 0 && rejectIds.length === 0) {
    throw new UsageError("deerflow approve: give --all approve|reject, or --approve CALL_ID / --reject CALL_ID for every pending call");
  }
  const both = approveIds.filter((id) => rejectIds.includes(id));
  if (both.length > 0) throw new UsageError(`deerflow approve: ${both.join(", ")} is both approved and rejected`);
  const reason = v.reason;
  const decisions = (pending: PendingApproval[]): ApprovalDecision[] => {
    const list: ApprovalDecision[] =
      v.all !== undefined
        ? decideAll(pending, v.all as "approve" | "reject", reason)
        : [
            ...approveIds.map((id): ApprovalDecision => ({ tool_call_id: id, decision: "approve" })),
            ...rejectIds.map((id): ApprovalDecision => ({ tool_call_id: id, decision: "reject", ...(reason ? { reason } : {}) })),
          ];
    // --always-allow TOOL: each approved call of that tool also gives its card's "Always allow"
    // rule (its command prefix, its sandbox kind; approvals/alwaysAllow.ts). A card that offers
    // none (a protected write, a command no prefix covers) is approved once, and stderr says so.
    return list.map((d) => {
      const calls = pending.filter((p) => p.tool_call_id === d.tool_call_id);
      if (d.decision !== "approve" || !calls.some((p) => always.has(p.name))) return d;
      const once = calls.filter((p) => !p.always_allow);
      for (const p of once) process.stderr.write(`deerflow approve: --always-allow ${p.name}: ${p.tool_call_id} is approved once; ${onceReason(p)}\n`);
      return once.length === calls.length ? d : { ...d, always_allow: true };
    });
  };
  return streamedRun(v, { command: "approve", threadId, createThread: false, prompt: "", approvals: decisions });
}

function onceReason(p: PendingApproval): string {
  if (p.class === "protected") return "a protected write is asked every time.";
  if (p.name === "bash") return "no command prefix covers this command line (see deerflow approve --help).";
  return "its card offers no rule.";
}

async function streamedRun(v: RunFlags, req: StreamedRunRequest): Promise<number> {
  const { command, threadId } = req;
  const workspace = workspaceArg(v.workspace, command);
  try {
    validateThreadId(threadId);
  } catch (err) {
    throw new UsageError(`deerflow ${command}: ${(err as Error).message}`);
  }
  let maxTokensPerRun: number | undefined;
  if (v["max-tokens"] !== undefined) {
    maxTokensPerRun = /^\d{1,12}$/.test(v["max-tokens"]) ? Number(v["max-tokens"]) : NaN;
    if (!Number.isSafeInteger(maxTokensPerRun)) throw new UsageError(`deerflow ${command}: --max-tokens takes a whole number of tokens (0 = no budget)`);
  }
  let maxTurns: number | undefined;
  if (v["max-turns"] !== undefined) {
    maxTurns = /^\d{1,9}$/.test(v["max-turns"]) ? Number(v["max-turns"]) : NaN;
    if (!Number.isSafeInteger(maxTurns) || maxTurns < 1) throw new UsageError(`deerflow ${command}: --max-turns takes a whole number of model turns, at least 1`);
  }
  let timeoutMs: number | undefined;
  if (v.timeout !== undefined) {
    timeoutMs = Number(v.timeout) * 1000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError(`deerflow ${command}: --timeout takes a positive number of seconds`);
  }
  const apiKey = await apiKeyArg(v["api-key"], v["api-key-stdin"] ?? false);
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let sandboxChoice: SandboxChoice | undefined;
  let approval: PolicyOverrides | undefined;
  try {
    if (v.sandbox !== undefined) sandboxChoice = parseSandboxChoice(v.sandbox);
    if (v.approval !== undefined) approval = parsePolicySpec(v.approval);
  } catch (err) {
    throw new UsageError(`deerflow ${command}: ${(err as Error).message}`);
  }
  let config;
  try {
    config = loadHarnessConfig(dataDir);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError(command, err.message);
    throw err;
  }

  // A new message: a bad model is a usage error before anything is written. A decision's model
  // may come from the paused run, known once the store is open.
  if (!req.approvals) checkModel(config, command, v.model, v["base-url"]);
  const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
  // Long-term memory (issue 15): queued after the run, extracted before this process exits.
  const memory = openRunMemory(config, dataDir, v["no-memory"], store.workspaceFolder);
  const manager = openRunSystem(store);
  const stopFollowing: Array<() => void> = [];
  const print = eventPrinter(v.json, workspace, threadId);
  let shutdownSandbox: (() => Promise<void>) | undefined;
  let mcpRegistry: McpRegistry | undefined;
  let cancelOnSignal: ((sig: NodeJS.Signals) => void) | undefined;
  try {
    // A decision continues the paused turn: by default with that run's model and host-command consent.
    let model = v.model;
    let baseURL = v["base-url"];
    let allowHostCommands = v["allow-host-commands"];
    let subagents = v.subagents;
    let approvals: ApprovalDecision[] | undefined;
    if (req.approvals) {
      const thread = store.threads.get(threadId);
      if (!thread) throw new UsageError(`deerflow ${command}: no thread ${threadId} in this workspace`);
      const pending = pendingApprovalsOf(thread);
      if (pending.length === 0) throw new UsageError(`deerflow ${command}: thread ${threadId} has no tool calls waiting for approval`);
      approvals = req.approvals(pending);
      const paused = pausedRunOf(thread);
      if (paused && model === undefined && baseURL === undefined) {
        model = paused.model;
        baseURL = paused.base_url;
      }
      if (paused && allowHostCommands === undefined) allowHostCommands = paused.allow_host_commands;
      if (paused?.subagents && subagents === undefined) subagents = true;
    }
    if (req.approvals) checkModel(config, command, model, baseURL);
    let launched;
    try {
      launched = launchRun(
        {
          workspaceFolder: store.workspaceFolder,
          threads: store.threads,
          checkpointer: store.checkpointer,
          blobs: store.blobs,
          manager,
          config,
          // The folder's sandbox: `auto` picks its dev container when it has one. A one-shot CLI
          // stops the container when it exits (the extension keeps it warm until an idle timeout).
          sandbox: () => {
            let sandbox;
            try {
              sandbox = createSandboxProvider(sandboxChoice ?? config.sandbox.provider, { workspaceFolder: workspace, dataDir });
            } catch (err) {
              if (err instanceof HarnessError) throw valueUsageError(command, err.message);
              throw err;
            }
            const provider = sandbox.provider;
            shutdownSandbox = () => provider.shutdown?.() ?? Promise.resolve();
            return { ...sandbox, allowHostCommands: allowHostCommands ?? config.sandbox.allow_host_commands };
          },
          bashTimeoutMs: config.sandbox.bash_timeout_seconds * 1000,
          approval: { ...config.approval, ...approval },
          // A decision keeps the paused turn's policy except for the classes named here (runs/gateway.ts).
          ...(approval ? { approvalExplicit: approval } : {}),
          ...(memory ? { memory: memory.wiring } : {}),
          // The CLI's workspace is the operator's own choice: its project skills load.
          skills: { workspaceFolder: store.workspaceFolder, workspaceTrusted: true, dataDir, ...(config.skills ? { config: config.skills } : {}), warn: (m) => process.stderr.write(`deerflow: ${m}\n`) },
          // MCP servers (issue 23): started for this invocation, stopped when it exits.
          mcp: (sandbox) => {
            mcpRegistry = openMcpRegistry({ workspaceFolder: store.workspaceFolder, dataDir, sandbox: sandbox.provider, log: (level, message) => diagnostics[level](message) });
            return { registry: mcpRegistry, toolSearch: toolSearchSettings(config.tool_search) };
          },
        },
        {
          threadId,
          createThread: req.createThread,
          prompt: req.prompt,
          uploads: req.uploads ?? [],
          // The user on their own machine: any file they can read (trust/attachments.ts).
          attachRoots: "any",
          ...(approvals ? { approvals } : {}),
          ...(model ? { model } : {}),
          ...(baseURL ? { baseURL } : {}),
          ...(apiKey ? { apiKey } : {}),
          planMode: v["plan-mode"] ?? false,
          ...(subagents !== undefined ? { subagents } : {}),
          ...(v["idempotency-key"] ? { idempotencyKey: v["idempotency-key"] } : {}),
          multitask: req.multitask ?? "reject",
          ...(timeoutMs ? { timeoutMs } : {}),
          ...(maxTokensPerRun !== undefined ? { maxTokensPerRun } : {}),
          ...(maxTurns !== undefined ? { maxTurns } : {}),
        },
        {
          onAdmitted: (run) => {
            // Print this run's journaled events as they are stored (replay + follow: no gap, no dup).
            stopFollowing.push(
              manager.journal.subscribe(threadId, manager.journal.events.lastSeq(threadId), (e) => {
                if (e.run_id === run.run_id) print(e);
              }),
            );
            cancelOnSignal = () => void manager.cancel(run.run_id);
            process.once("SIGINT", cancelOnSignal);
            process.once("SIGTERM", cancelOnSignal);
          },
        },
      );
    } catch (err) {
      // Refused because of the thread's state, not the request: busy, or waiting on a decision.
      if (err instanceof HarnessError && (err.code === "thread_busy" || err.code === "approval_pending")) {
        process.stderr.write(`deerflow ${command}: ${err.message}\n`);
        return 1;
      }
      // What startRun refuses from the request itself is the caller's mistake: a usage error.
      if (err instanceof HarnessError && (err.code === "usage" || err.code === "unknown_model" || err.code === "no_models" || err.code === "thread_not_found")) {
        throw valueUsageError(command, err.message);
      }
      throw err;
    }
    const { admission, done } = launched;
    memory?.useRunKey(launched.context.model, apiKey);
    if (!done) {
      // The same idempotency key: the same run, never a second execution. Replay it, and follow
      // it to its end if another process is still running it.
      const final = await followRun(manager, admission.run, print);
      return final.status === "success" ? 0 : 1;
    }
    const result = await done;
    store.threads.touch(threadId);
    if (result.status === "success" && endStopReason(manager, admission.run.run_id) === "turn_capped") {
      process.stderr.write(
        `deerflow ${command}: the run stopped at its turn budget (${launched.context.turns.maxTurns} model turns; --max-turns or config max_turns). ` +
          `Continue it with: deerflow run --workspace ${JSON.stringify(workspace)} --thread ${threadId} --prompt "Continue"\n`,
      );
    }
    // Interrupted (Ctrl+C, a cancel): exit now; what is queued is extracted by the next run.
    if (result.status !== "interrupted") await memory?.drain();
    return result.status === "success" ? 0 : 1;
  } finally {
    if (cancelOnSignal) {
      process.off("SIGINT", cancelOnSignal);
      process.off("SIGTERM", cancelOnSignal);
    }
    for (const stop of stopFollowing) stop();
    await mcpRegistry?.dispose().catch(() => undefined);
    await shutdownSandbox?.().catch(() => undefined);
    await memory?.close();
    store.close();
  }
}

/** The stop reason in a run's `end` event. */
function endStopReason(manager: RunManager, runId: string): string | undefined {
  const reason = (manager.journal.events.endOf(runId)?.data as { stop_reason?: unknown } | undefined)?.stop_reason;
  return typeof reason === "string" ? reason : undefined;
}

function checkModel(config: HarnessConfig, command: string, model: string | undefined, baseURL: string | undefined): void {
  try {
    const resolved = resolveModel(config, { ...(model ? { name: model } : {}), ...(baseURL ? { baseURL } : {}) });
    if (resolved.vscodeLm) throw vscodeLmUnavailable(resolved.name);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError(command, err.message);
    throw err;
  }
}

/**
 * The key from `--api-key-stdin` (all of stdin, the trailing newline dropped) or, with a warning,
 * from `--api-key`: a command line is readable by every process on the machine (ps, /proc).
 * Neither: undefined, and the model's key comes from the environment.
 */
async function apiKeyArg(flag: string | undefined, fromStdin: boolean): Promise<string | undefined> {
  if (flag !== undefined && fromStdin) throw new UsageError("deerflow: use either --api-key or --api-key-stdin, not both");
  if (flag !== undefined) {
    process.stderr.write(
      "deerflow run: warning: --api-key puts the key on the command line, where other processes on this machine can read it; " +
        "prefer the environment (OPENAI_API_KEY or the model's api_key_env) or --api-key-stdin.\n",
    );
    return flag || undefined;
  }
  if (!fromStdin) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const key = Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
  if (key.trim() === "") throw new UsageError("deerflow run: --api-key-stdin read no key from stdin");
  return key;
}

/**
 * Print a run's journaled events from the start and follow them to its end, whichever process
 * writes them: local appends arrive through the journal, other processes' through the database
 * (read on every wake-up of waitForEnd). Delivery is by seq, so nothing is printed twice.
 */
export async function followRun(manager: RunManager, run: RunRecord, print: (e: StoredEvent) => void = (e) => writeJsonLine(eventLine(e))): Promise<RunRecord> {
  let last = 0;
  const deliver = (e: StoredEvent) => {
    if (e.seq <= last) return;
    last = e.seq;
    if (e.run_id === run.run_id) print(e);
  };
  const drain = () => {
    for (const e of manager.journal.events.list(run.thread_id, { afterSeq: last })) deliver(e);
  };
  const stop = manager.journal.subscribe(run.thread_id, 0, deliver);
  try {
    return await manager.waitForEnd(run, { onWake: drain });
  } finally {
    stop();
  }
}

