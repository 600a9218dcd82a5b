/**
 * One command in a running container through the Engine API: create the exec, stream its
 * multiplexed output into bounded buffers, read the exit code.
 *
 * Killing the process tree INSIDE the container: the Engine API has no "kill exec". Closing our
 * stream would leave the command running, so every exec carries a unique `DEERFLOW_EXEC_ID` in
 * its environment; children inherit it, and a timeout or an abort runs a second, root exec that
 * stops, then SIGKILLs, every process whose environment carries that id (repeated until none is
 * left, so a process forked during the sweep is caught too). A process that both detaches and scrubs its
 * environment escapes; DeerFlow's process-group kill has the same blind spot for `setsid`.
 */
import { randomUUID } from "node:crypto";
import type { EngineApi } from "./engineApi.js";
import { BoundedCapture } from "../boundedCapture.js";

export const EXEC_ID_ENV = "DEERFLOW_EXEC_ID";
/** After the kill, how long the stream may take to close before we stop waiting for it. */
const KILL_STREAM_GRACE_MS = 5_000;

/**
 * Sweeps /proc for the marked processes; POSIX sh + tr + grep: present in Debian, Alpine, UBI.
 * All of them are stopped before any is killed: /proc lists pids in text order, so a child
 * could otherwise die first and let its parent shell run the next command of the script.
 */
const KILL_SCRIPT = `tok="$1"; n=0
while [ $n -lt 20 ]; do
  pids=""
  for d in /proc/[0-9]*; do
    if tr '\\0' '\\n' < "$d/environ" 2>/dev/null | grep -qx "${EXEC_ID_ENV}=$tok"; then pids="$pids \${d#/proc/}"; fi
  done
  [ -z "$pids" ] && exit 0
  kill -STOP $pids 2>/dev/null
  kill -KILL $pids 2>/dev/null
  n=$((n+1))
done`;

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

/** Kill every process of one exec; best effort (the container may be gone already). */
export async function killExecTree(api: EngineApi, containerId: string, token: string): Promise<void> {
  const execId = await api.createExec(containerId, { cmd: ["sh", "-c", KILL_SCRIPT, "sh", token], user: "0" });
  const stream = await api.startExec(execId);
  stream.resume();
  await new Promise<void>((resolve) => {
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
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
      cmd: req.cmd,
      env,
      ...(req.user !== undefined ? { user: req.user } : {}),
      ...(req.workingDir !== undefined ? { workingDir: req.workingDir } : {}),
    },
    signal,
  );
  const stream = await api.startExec(execId);
  const stdout = new BoundedCapture(req.captureLimitBytes);
  const stderr = new BoundedCapture(req.captureLimitBytes);
  const feed = demultiplex((type, payload) => {
    const name = type === 2 ? "stderr" : "stdout";
    (name === "stderr" ? stderr : stdout).append(payload);
    req.onOutput?.(name, payload);
  });

  let timedOut = false;
  let aborted = false;
  await new Promise<void>((resolve) => {
    let graceTimer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      killExecTree(api, req.containerId, token).catch(() => undefined);
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
