/**
 * `deerflow run`: one turn on a thread, streamed to stdout as JSON Lines (one RunEvent per line).
 * The last line is the `end` event. Exit 0 on `success`, 1 on any other final status, 2 on a
 * usage error (nothing is run and nothing is written).
 */
import { randomUUID } from "node:crypto";
import { copyFileSync, existsSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { parse, requireString, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { createChatModel, resolveModel } from "../models/factory.js";
import { ensureThreadDirs, validateThreadId } from "../threads/threadDirs.js";
import { buildLeadAgent } from "../agent/leadAgent.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { runTurn, RunAbort, endEvent } from "../runs/runTurn.js";
import { HarnessError } from "../errors.js";
import type { UploadedFile } from "../state/threadState.js";

const options = {
  workspace: { type: "string" },
  prompt: { type: "string" },
  thread: { type: "string" },
  upload: { type: "string", multiple: true },
  model: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "plan-mode": { type: "boolean" },
  "allow-host-commands": { type: "boolean" },
  "data-dir": { type: "string" },
  timeout: { type: "string" },
} as const;

export async function runCommand(argv: string[]): Promise<number> {
  const v = parse(argv, options, "run");
  const workspace = workspaceArg(v.workspace, "run");
  const prompt = requireString(v.prompt, "--prompt TEXT", "run");
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
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let config;
  let resolved;
  try {
    config = loadHarnessConfig(dataDir);
    resolved = resolveModel(config, { ...(v.model ? { name: v.model } : {}), ...(v["base-url"] ? { baseURL: v["base-url"] } : {}) });
  } catch (err) {
    if (err instanceof HarnessError) throw new UsageError(`deerflow run: ${err.message}`);
    throw err;
  }

  const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => controller.abort(new RunAbort("interrupted", `Run interrupted by ${sig}.`));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const timer = timeoutMs
    ? setTimeout(() => controller.abort(new RunAbort("timeout", `Run timed out after ${timeoutMs / 1000} s.`)), timeoutMs)
    : undefined;
  try {
    if (!store.threads.get(threadId)) store.threads.create({ threadId, workspaceFolder: workspace });
    const dirs = ensureThreadDirs(workspace, threadId);
    const files: UploadedFile[] = uploads.map((src) => {
      const name = basename(src);
      copyFileSync(src, join(dirs.uploads, name));
      return { filename: name, size: statSync(src).size, path: `/mnt/user-data/uploads/${name}`, extension: extname(name) };
    });
    const sandboxProvider = new LocalSandboxProvider({ workspaceFolder: workspace });
    const agent = buildLeadAgent({
      model: createChatModel(resolved, { ...(v["api-key"] ? { apiKey: v["api-key"] } : {}) }),
      supportsVision: resolved.supportsVision,
      dirs,
      sandboxProvider,
      sandboxKind: "local",
      allowHostCommands: v["allow-host-commands"] ?? config.sandbox.allow_host_commands,
      bashTimeoutMs: config.sandbox.bash_timeout_seconds * 1000,
      blobs: store.blobs,
      checkpointer: store.checkpointer,
      planMode: v["plan-mode"] ?? false,
    });
    const runId = randomUUID();
    const result = await runTurn({
      agent,
      threadId,
      runId,
      modelName: resolved.name,
      prompt,
      files,
      sandboxProvider,
      sandboxKind: "local",
      signal: controller.signal,
      emit: writeJsonLine,
    });
    writeJsonLine(endEvent(threadId, runId, result));
    store.threads.touch(threadId);
    return result.status === "success" ? 0 : 1;
  } finally {
    if (timer) clearTimeout(timer);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    store.close();
  }
}
