/**
 * Host command execution for the local sandbox (DeerFlow's LocalSandbox._run_posix_command).
 *
 * - `detached: true` makes the shell a process-group leader, so a timeout or an abort can SIGKILL
 *   the whole group (`kill(-pid)`), grandchildren included.
 * - stdin is /dev/null (`"ignore"`), so a command that reads stdin gets EOF instead of hanging.
 * - stdout/stderr are pipes drained into bounded buffers (10 MB each). We settle on the shell's
 *   `exit`, not on the pipes' `close`: a backgrounded `server &` inherits the pipes and would hold
 *   them open forever. Like DeerFlow (which moved from a capture file to drained pipes so a
 *   background process never writes into a deleted temp file), when the group is still alive
 *   after the shell exits we give the pipes a short grace to deliver what the shell wrote, then
 *   keep draining them unreferenced so the background process never blocks on a full pipe.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable } from "node:stream";
import type { ExecResult } from "./provider.js";
import { BoundedCapture } from "./boundedCapture.js";

export const DEFAULT_COMMAND_TIMEOUT_MS = 600_000;
export const COMMAND_CAPTURE_LIMIT_BYTES = 10 * 1024 * 1024;
/** How long pipes may lag behind the shell's exit while a background process holds them. */
const BACKGROUND_PIPE_GRACE_MS = 200;
/** Upper bound for pipes to close once nothing should hold them (DeerFlow's join timeout). */
const PIPE_CLOSE_LIMIT_MS = 10_000;

export interface RunCommandOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly captureLimitBytes?: number;
}

/**
 * Names that look like credentials never reach a host command (DeerFlow's env_policy.py): the
 * model could simply `env` them out otherwise.
 */
const SECRET_NAME_PARTS = ["KEY", "SECRET", "TOKEN", "PASS", "CREDENTIAL", "DSN"];
const BLOCKED_EXACT_NAMES = new Set([
  "DATABASE_URL", "DATABASE_URI", "REDIS_URL", "MONGODB_URI", "MONGO_URL", "AMQP_URL", "RABBITMQ_URL",
  "POSTGRES_URL", "POSTGRESQL_URL", "MYSQL_URL", "CLICKHOUSE_URL", "CONNECTION_STRING", "CONN_STR",
  "GH_PAT", "GITHUB_PAT", "MYSQL_PWD", "REDISCLI_AUTH", "REDIS_AUTH", "PGSERVICEFILE",
]);

export function isBlockedEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return BLOCKED_EXACT_NAMES.has(upper) || SECRET_NAME_PARTS.some((part) => upper.includes(part));
}

export function scrubbedEnv(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && !isBlockedEnvName(name)) env[name] = value;
  }
  return env;
}

function shellPath(): string {
  return existsSync("/bin/bash") ? "/bin/bash" : "bash";
}


function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone: the command finished in the race between the timer and the kill.
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("The command was aborted", "AbortError");
}

/** Keep a pipe flowing without holding the harness's event loop open. */
function detachPipe(stream: Readable): void {
  stream.removeAllListeners("data");
  stream.on("data", () => undefined);
  stream.on("error", () => undefined);
  (stream as Readable & { unref?: () => void }).unref?.();
}

export function runCommand(command: string, options: RunCommandOptions): Promise<ExecResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const limit = options.captureLimitBytes ?? COMMAND_CAPTURE_LIMIT_BYTES;
  const { signal } = options;
  return new Promise<ExecResult>((resolvePromise, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const child = spawn(shellPath(), ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const stdout = new BoundedCapture(limit);
    const stderr = new BoundedCapture(limit);
    child.stdout.on("data", (c: Buffer) => stdout.append(c));
    child.stderr.on("data", (c: Buffer) => stderr.append(c));

    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let settled = false;
    const pid = child.pid;

    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) killGroup(pid);
    }, timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      if (pid !== undefined) killGroup(pid);
    };
    signal?.addEventListener("abort", onAbort, { once: true });

    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(pipeTimer);
      signal?.removeEventListener("abort", onAbort);
      detachPipe(child.stdout);
      detachPipe(child.stderr);
      if (aborted) {
        reject(abortReason(signal));
        return;
      }
      resolvePromise({ stdout: stdout.text(), stderr: stderr.text(), exitCode, timedOut, timeoutMs });
    };
    let pipeTimer: NodeJS.Timeout | undefined;

    child.once("error", (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    // `close` = the shell exited AND every holder of the pipes is gone: nothing more can arrive.
    child.once("close", finish);
    child.once("exit", (code) => {
      exitCode = code;
      clearTimeout(timer);
      const backgroundAlive = !timedOut && !aborted && pid !== undefined && groupAlive(pid);
      // setImmediate after the timer: one more poll phase runs first, so output the shell wrote
      // before exiting is read even if the event loop was blocked for the whole grace period.
      pipeTimer = setTimeout(() => setImmediate(finish), backgroundAlive ? BACKGROUND_PIPE_GRACE_MS : PIPE_CLOSE_LIMIT_MS);
    });
  });
}
