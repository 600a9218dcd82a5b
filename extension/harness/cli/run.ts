/**
 * `deerflow run`: one turn on a thread, through startRun (the one choke point), the run manager
 * and the worker; every journaled event is printed as a JSON Line carrying its `seq`. The last
 * line is the `end` event. Exit 0 on `success`, 1 on any other final status, 2 on a usage error
 * (nothing is run and nothing is written).
 */
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { parse, requireString, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { resolveModel } from "../models/factory.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { createSandboxProvider, parseSandboxChoice } from "../sandbox/select.js";
import type { SandboxChoice } from "../sandbox/select.js";
import { launchRun } from "../runs/launcher.js";
import { openRunSystem } from "../runs/services.js";
import { HarnessError } from "../errors.js";
import type { StoredEvent } from "../store/events.js";
import type { RunManager } from "../runs/manager.js";
import type { RunRecord } from "../store/runs.js";

const options = {
  workspace: { type: "string" },
  prompt: { type: "string" },
  thread: { type: "string" },
  upload: { type: "string", multiple: true },
  model: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "api-key-stdin": { type: "boolean" },
  "plan-mode": { type: "boolean" },
  "allow-host-commands": { type: "boolean" },
  "data-dir": { type: "string" },
  timeout: { type: "string" },
  "idempotency-key": { type: "string" },
  multitask: { type: "string" },
  sandbox: { type: "string" },
} as const;

/** The CLI's line for a journaled event. */
export function eventLine(e: StoredEvent): Record<string, unknown> {
  return { seq: e.seq, event: e.event, run_id: e.run_id, thread_id: e.thread_id, data: e.data };
}

export async function runCommand(argv: string[]): Promise<number> {
  const v = parse(argv, options, "run");
  const workspace = workspaceArg(v.workspace, "run");
  const prompt = requireString(v.prompt, "--prompt TEXT", "run");
  if (prompt.trim() === "") throw new UsageError("deerflow run: --prompt is empty");
  const threadId = v.thread ?? randomUUID();
  try {
    validateThreadId(threadId);
  } catch (err) {
    throw new UsageError(`deerflow run: ${(err as Error).message}`);
  }
  const uploads = (v.upload ?? []).map((f) => {
    if (!existsSync(f) || !statSync(f).isFile()) throw new UsageError(`deerflow run: --upload ${f} is not a file`);
    return f;
  });
  let timeoutMs: number | undefined;
  if (v.timeout !== undefined) {
    timeoutMs = Number(v.timeout) * 1000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError("deerflow run: --timeout takes a positive number of seconds");
  }
  const multitask = v.multitask ?? "reject";
  if (multitask !== "reject" && multitask !== "interrupt") throw new UsageError("deerflow run: --multitask takes reject or interrupt");
  const apiKey = await apiKeyArg(v["api-key"], v["api-key-stdin"] ?? false);
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let sandboxChoice: SandboxChoice | undefined;
  try {
    if (v.sandbox !== undefined) sandboxChoice = parseSandboxChoice(v.sandbox);
  } catch (err) {
    throw new UsageError(`deerflow run: ${(err as Error).message}`);
  }
  let config;
  try {
    config = loadHarnessConfig(dataDir);
    // Resolve once here so a bad model is a usage error before anything is written.
    resolveModel(config, { ...(v.model ? { name: v.model } : {}), ...(v["base-url"] ? { baseURL: v["base-url"] } : {}) });
  } catch (err) {
    if (err instanceof HarnessError) throw new UsageError(`deerflow run: ${err.message}`);
    throw err;
  }

  const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
  const manager = openRunSystem(store);
  const stopFollowing: Array<() => void> = [];
  let shutdownSandbox: (() => Promise<void>) | undefined;
  let cancelOnSignal: ((sig: NodeJS.Signals) => void) | undefined;
  try {
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
              if (err instanceof HarnessError) throw new UsageError(`deerflow run: ${err.message}`);
              throw err;
            }
            const provider = sandbox.provider;
            shutdownSandbox = () => provider.shutdown?.() ?? Promise.resolve();
            return { ...sandbox, allowHostCommands: v["allow-host-commands"] ?? config.sandbox.allow_host_commands };
          },
          bashTimeoutMs: config.sandbox.bash_timeout_seconds * 1000,
        },
        {
          threadId,
          createThread: true,
          prompt,
          uploads,
          ...(v.model ? { model: v.model } : {}),
          ...(v["base-url"] ? { baseURL: v["base-url"] } : {}),
          ...(apiKey ? { apiKey } : {}),
          planMode: v["plan-mode"] ?? false,
          ...(v["idempotency-key"] ? { idempotencyKey: v["idempotency-key"] } : {}),
          multitask,
          ...(timeoutMs ? { timeoutMs } : {}),
        },
        {
          onAdmitted: (run) => {
            // Print this run's journaled events as they are stored (replay + follow: no gap, no dup).
            stopFollowing.push(
              manager.journal.subscribe(threadId, manager.journal.events.lastSeq(threadId), (e) => {
                if (e.run_id === run.run_id) writeJsonLine(eventLine(e));
              }),
            );
            cancelOnSignal = () => void manager.cancel(run.run_id);
            process.once("SIGINT", cancelOnSignal);
            process.once("SIGTERM", cancelOnSignal);
          },
        },
      );
    } catch (err) {
      if (err instanceof HarnessError && err.code === "thread_busy") {
        process.stderr.write(`deerflow run: ${err.message}\n`);
        return 1;
      }
      // What startRun refuses from the request itself is the caller's mistake: a usage error.
      if (err instanceof HarnessError && (err.code === "usage" || err.code === "unknown_model" || err.code === "no_models")) {
        throw new UsageError(`deerflow run: ${err.message}`);
      }
      throw err;
    }
    const { admission, done } = launched;
    if (!done) {
      // The same idempotency key: the same run, never a second execution. Replay it, and follow
      // it to its end if another process is still running it.
      const final = await followRun(manager, admission.run);
      return final.status === "success" ? 0 : 1;
    }
    const result = await done;
    store.threads.touch(threadId);
    return result.status === "success" ? 0 : 1;
  } finally {
    if (cancelOnSignal) {
      process.off("SIGINT", cancelOnSignal);
      process.off("SIGTERM", cancelOnSignal);
    }
    for (const stop of stopFollowing) stop();
    await shutdownSandbox?.().catch(() => undefined);
    store.close();
  }
}

/**
 * The key from `--api-key-stdin` (all of stdin, the trailing newline dropped) or, with a warning,
 * from `--api-key`: a command line is readable by every process on the machine (ps, /proc).
 * Neither: undefined, and the model's key comes from the environment.
 */
async function apiKeyArg(flag: string | undefined, fromStdin: boolean): Promise<string | undefined> {
  if (flag !== undefined && fromStdin) throw new UsageError("deerflow run: use either --api-key or --api-key-stdin, not both");
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
export async function followRun(manager: RunManager, run: RunRecord): Promise<RunRecord> {
  let last = 0;
  const deliver = (e: StoredEvent) => {
    if (e.seq <= last) return;
    last = e.seq;
    if (e.run_id === run.run_id) writeJsonLine(eventLine(e));
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

