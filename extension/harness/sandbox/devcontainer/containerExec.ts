/**
 * One command in a running container through the Engine API: create the exec, stream its
 * multiplexed output into bounded buffers, read the exit code.
 *
 * Every exec runs under a small wrapper (killTree.ts, EXEC_WRAPPER) that reports the exec's root
 * pid on stderr before becoming the command; that line is taken off the output here. A timeout
 * or an abort then kills the whole process tree inside the container by that pid's session, the
 * exec's environment token, ancestry and output pipes (killTree.ts), `setsid`, `sudo` and
 * `env -i` children included.
 *
 * The exec's environment is only what the caller passes (the approved config's remoteEnv and
 * vetted extras, see folderContainer.ts) plus the token: the Engine API never forwards the
 * harness's own environment, so a host secret cannot reach a command by accident.
 */
import { randomUUID } from "node:crypto";
import type { EngineApi } from "./engineApi.js";
import { BoundedCapture } from "../boundedCapture.js";
import { EXEC_ID_ENV, EXEC_WRAPPER, killExecTree, parseExecRoot, type ExecRoot } from "./killTree.js";

/** After the kill, how long the stream may take to close before we stop waiting for it. */
const KILL_STREAM_GRACE_MS = 5_000;

export interface ContainerExecRequest {
  readonly containerId: string;
  readonly cmd: readonly string[];
  readonly user?: string;
  readonly workingDir?: string;
  readonly env?: readonly string[];
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly captureLimitBytes: number;
  /** Called with each chunk as it arrives (streaming to a UI); the result still holds it all. */
  readonly onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

export interface ContainerExecOutcome {
  readonly stdout: string;
  readonly stderr: string;
  /** null when the engine reports none: the process was killed, or the container went away. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
}


/**
 * Splits the engine's multiplexed stream: frames of an 8-byte header (stream type, 3 zero bytes,
 * big-endian length) then the payload. Frames may straddle chunks.
 */
export function demultiplex(onFrame: (streamType: number, payload: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      onFrame(pending[0] ?? 1, pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
  };
}

/**
 * Run one exec to completion. Engine failures before the start (404/409: container gone or not
 * running) reject with EngineHttpError so the caller can bring the container up and retry.
 */
export async function runContainerExec(api: EngineApi, req: ContainerExecRequest): Promise<ContainerExecOutcome> {
  const { signal } = req;
  if (signal?.aborted) throw signal.reason;
  const token = randomUUID();
  const env = [...(req.env ?? []), `${EXEC_ID_ENV}=${token}`];
  const execId = await api.createExec(
    req.containerId,
    {
      cmd: ["sh", "-c", EXEC_WRAPPER, "deerflow-exec", ...req.cmd],
      env,
      ...(req.user !== undefined ? { user: req.user } : {}),
      ...(req.workingDir !== undefined ? { workingDir: req.workingDir } : {}),
    },
    signal,
  );
  const stream = await api.startExec(execId);
  const stdout = new BoundedCapture(req.captureLimitBytes);
  const stderr = new BoundedCapture(req.captureLimitBytes);
  const preamble = new RootPidPreamble();
  const feed = demultiplex((type, frame) => {
    const name = type === 2 ? "stderr" : "stdout";
    const payload = name === "stderr" ? preamble.strip(frame) : frame;
    if (payload.length === 0) return;
    (name === "stderr" ? stderr : stdout).append(payload);
    req.onOutput?.(name, payload);
  });

  let timedOut = false;
  let aborted = false;
  await new Promise<void>((resolve) => {
    let graceTimer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      killExecTree(api, req.containerId, token, preamble.root).catch(() => undefined);
      // A process that escaped the sweep may still hold the stream open: stop waiting for it.
      graceTimer ??= setTimeout(() => stream.destroy(), KILL_STREAM_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, req.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    // Aborted while the exec was being created and started: the listener would never fire.
    if (signal?.aborted) onAbort();
    const done = (): void => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    stream.on("data", feed);
    // "close" covers both a normal end and a connection the engine (or the grace timer) cut.
    stream.once("close", done);
    stream.once("error", () => undefined);
  });
  if (aborted) throw signal?.reason ?? new Error("aborted");

  const exitCode = await exitCodeOf(api, execId);
  return { stdout: stdout.text(), stderr: stderr.text(), exitCode: timedOut ? null : exitCode, timedOut };
}

/**
 * The engine closes the stream after the process exits and records the exit code in the same
 * step, so one inspect normally suffices; a second look covers the rare ordering where the
 * stream closed first. Null when the engine has none (the container died under the command).
 */
async function exitCodeOf(api: EngineApi, execId: string): Promise<number | null> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const info = await api.inspectExec(execId);
      if (!info.Running) return info.ExitCode;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The wrapper's first stderr line (killTree.ts, EXEC_WRAPPER) taken off the stream (it may
 * arrive split over frames); everything after it is the command's own stderr, untouched.
 */
export class RootPidPreamble {
  root: ExecRoot | undefined;
  private done = false;
  private head = "";

  strip(frame: Buffer): Buffer {
    if (this.done) return frame;
    const newline = frame.indexOf(10);
    if (newline < 0) {
      this.head += frame.toString("latin1");
      return Buffer.alloc(0);
    }
    this.done = true;
    this.root = parseExecRoot(this.head + frame.subarray(0, newline).toString("latin1"));
    return frame.subarray(newline + 1);
  }
}
