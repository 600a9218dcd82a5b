/**
 * The run launcher: the one way a run is started, whoever starts it — the CLI, the panel's
 * server, the retry after a dev container approval, and later approval resumes, subagents and
 * schedules. It does all the preparation a run needs, in one order, then `startRun` (the
 * validation choke point) and the worker:
 *
 *   1. refuse what can be refused with nothing written: an unknown thread, an upload that is not
 *      a readable file or over DeerFlow's `uploads` limits (files, size of one, size of all, per
 *      message; DeerFlow's gateway texts), an unknown model;
 *   2. the thread row (when the entry point may create it), the sandbox, the thread folders and
 *      the upload copy into `uploads` (what the model sees as /mnt/user-data/uploads);
 *   3. `startRun` (whitelist, scrubbing, server-side context, atomic admission);
 *   4. the worker, whose ending — even a failure outside the turn — is recorded by ending.ts.
 *
 * An entry point supplies only what is its own: where the sandbox comes from, the API key, and
 * what to do once the run is admitted (print it, announce it). It never prepares a run itself.
 */
import { basename } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { resolveModel } from "../models/factory.js";
import { HarnessError, errorMessage } from "../errors.js";
import type { BlobStore } from "../store/blobs.js";
import type { ThreadStore } from "../store/threads.js";
import type { RunRecord } from "../store/runs.js";
import { ACTIVE_STATUSES } from "../store/runs.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import type { UploadedFile } from "../state/threadState.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import { copyUploads } from "../threads/uploads.js";
import { attachableFile, type AttachRoots } from "../trust/attachments.js";
import { startRun } from "./gateway.js";
import type { RunContext, StartRunRequest } from "./gateway.js";
import type { Admission, RunManager } from "./manager.js";
import { executeRun } from "./worker.js";
import type { WorkerResult } from "./worker.js";
import { endRun } from "./ending.js";
import { resolvePolicy, type PolicyOverrides } from "../approvals/policy.js";
import type { MemoryWiring } from "../memory/hooks.js";
import type { SkillsContext } from "../skills/service.js";
import type { McpRunSource } from "../mcp/runTools.js";

export interface LaunchSandbox {
  provider: SandboxProvider;
  kind: "local" | "devcontainer";
  /** The operator allowed host commands (CLI flag or setting) — never the client. */
  allowHostCommands: boolean;
}

export interface LaunchServices {
  workspaceFolder: string;
  threads: ThreadStore;
  checkpointer: BaseCheckpointSaver;
  blobs: BlobStore;
  manager: RunManager;
  config: HarnessConfig;
  /** The run's sandbox, asked once the request passed its checks and before admission. */
  sandbox: () => LaunchSandbox;
  bashTimeoutMs?: number;
  /** The operator's approval policy (CLI `--approval`, config, user/machine settings); unnamed classes keep the defaults for the sandbox's kind. */
  approval?: PolicyOverrides;
  /** The classes of `approval` the operator set for this invocation (`deerflow approve --approval`): a continued turn takes these as given (runs/gateway.ts). */
  approvalExplicit?: PolicyOverrides;
  /** Long-term memory (issue 15); absent → off for this run: no injection, no extraction. */
  memory?: MemoryWiring;
  /** The workspace's skills (issue 24), snapshotted by the worker at the run's start; absent → none. */
  skills?: SkillsContext;
  /** The folder's MCP servers for a run in this sandbox (issue 23; mcp/open.ts); absent → no MCP tools. */
  mcp?: (sandbox: LaunchSandbox) => McpRunSource | undefined;
}

export interface LaunchRequest extends Omit<StartRunRequest, "files"> {
  /** Host files to copy into the thread's uploads folder, each one the caller may name (`attachRoots`). */
  uploads?: readonly string[];
  /**
   * Which host files the caller may attach (trust/attachments.ts): the CLI's user any, the
   * editor's harness its workspace folders only. Required with `uploads`: no default to forget.
   */
  attachRoots?: AttachRoots;
  /** Files already in the uploads folder (a retried run's). */
  files?: UploadedFile[];
  /** Create the thread row when it does not exist (the CLI's `--thread` of a new thread). */
  createThread?: boolean;
}

export interface Launched {
  admission: Admission;
  context: RunContext;
  sandbox: LaunchSandbox;
  /** The run's execution; undefined when the idempotency key matched an earlier run. Never rejects. */
  done?: Promise<WorkerResult>;
}

export interface LaunchHooks {
  /** Called once the run is admitted, before the worker emits anything (subscribe here). */
  onAdmitted?: (run: RunRecord) => void;
  /** The worker threw outside the turn (a bug): for the entry point's log; the run is ended anyway. */
  onCrash?: (runId: string, err: unknown) => void;
}

export function launchRun(s: LaunchServices, req: LaunchRequest, hooks: LaunchHooks = {}): Launched {
  // 1. Everything that can be refused is refused before anything is written or copied.
  validateThreadId(req.threadId);
  if (!req.createThread && !s.threads.get(req.threadId)) {
    throw new HarnessError("thread_not_found", `No thread ${req.threadId} in this workspace.`);
  }
  const limits = s.config.uploads;
  const uploads = req.uploads ?? [];
  if (uploads.length > limits.max_files) throw new HarnessError("usage", `Too many files: maximum is ${limits.max_files}`);
  if (uploads.length > 0 && req.attachRoots === undefined) throw new Error("launchRun: uploads without attachRoots");
  let total = 0;
  const sources: string[] = [];
  for (const f of uploads) {
    // One refusal for missing, unreadable, not a file and not allowed (no existence oracle).
    const { real, size } = attachableFile(f, req.attachRoots!);
    if (size > limits.max_file_size) throw new HarnessError("usage", `File too large: ${basename(f)} (uploads.max_file_size is ${limits.max_file_size} bytes)`);
    total += size;
    if (total > limits.max_total_size) throw new HarnessError("usage", `Total upload size too large (uploads.max_total_size is ${limits.max_total_size} bytes)`);
    sources.push(real);
  }
  resolveModel(s.config, { ...(req.model ? { name: req.model } : {}), ...(req.baseURL ? { baseURL: req.baseURL } : {}) });

  // 2. Preparation.
  if (req.createThread && !s.threads.get(req.threadId)) s.threads.create({ threadId: req.threadId, workspaceFolder: s.workspaceFolder });
  const sandbox = s.sandbox();
  const files = [...(req.files ?? []), ...copyUploads(ensureThreadDirs(s.workspaceFolder, req.threadId), sources, uploads)];

  // 3. The choke point.
  const { uploads: _u, attachRoots: _a, createThread: _c, files: _f, ...rest } = req;
  const { admission, context } = startRun(
    {
      workspaceFolder: s.workspaceFolder,
      threads: s.threads,
      manager: s.manager,
      config: s.config,
      allowHostCommands: sandbox.allowHostCommands,
      approvalPolicy: resolvePolicy(sandbox.kind, s.approval),
      ...(s.approvalExplicit ? { approvalExplicit: s.approvalExplicit } : {}),
    },
    { ...rest, files },
  );
  // The same idempotency key: the same run, never a second execution.
  if (admission.existing) return { admission, context, sandbox };
  s.threads.touch(req.threadId);
  hooks.onAdmitted?.(admission.run);

  // 4. The worker. A failure it did not catch still ends the run (never left `running`).
  const runId = admission.run.run_id;
  const mcp = s.mcp?.(sandbox);
  const done = executeRun(
    {
      manager: s.manager,
      threads: s.threads,
      checkpointer: s.checkpointer,
      blobs: s.blobs,
      sandboxProvider: sandbox.provider,
      sandboxKind: sandbox.kind,
      ...(s.bashTimeoutMs !== undefined ? { bashTimeoutMs: s.bashTimeoutMs } : {}),
      ...(s.memory ? { memory: s.memory } : {}),
      ...(s.skills ? { skills: s.skills } : {}),
      ...(mcp ? { mcp } : {}),
    },
    admission,
    context,
  ).catch((err: unknown): WorkerResult => {
    hooks.onCrash?.(runId, err);
    const message = `The run failed: ${errorMessage(err)}`;
    try {
      const ended = endRun(s.manager, { runId, from: ACTIVE_STATUSES, status: "error", error: message });
      return { status: ended?.status ?? "error", error: ended?.error ?? message };
    } catch (endErr) {
      // The database refused the ending too: the entry point still gets an answer; the run's
      // lease, no longer renewed, lets recovery end it.
      hooks.onCrash?.(runId, endErr);
      return { status: "error", error: message };
    }
  });
  return { admission, context, sandbox, done };
}
