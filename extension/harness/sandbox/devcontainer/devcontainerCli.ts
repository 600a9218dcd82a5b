/**
 * `devcontainer up` from @devcontainers/cli, run as a child Node process: it is what understands
 * devcontainer.json (image or Dockerfile, features, mounts, remoteUser, lifecycle commands, id
 * labels that find the folder's existing container). It runs once per bring-up, never per command.
 *
 * The CLI prints one JSON line on stdout (`{"outcome":"success"|"error",...}`) and its log as JSON
 * lines on stderr (`--log-format json`); the log is forwarded as progress and mined for the
 * engine's own error text when the outcome is an error ("Command failed: docker pull x" alone
 * does not tell a person that the image is missing and no registry answered).
 *
 * It only ever runs on an approved copy of the configuration (approvedCopy.ts; the type makes
 * the copy required): `up` executes the config's `initializeCommand` on the host and resolves
 * `${localEnv:…}` from the environment it gets, so both are the user's approved choice.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { HarnessError } from "../../errors.js";
import type { ApprovedCopy } from "./approvedCopy.js";
import { asError } from "./errors.js";
import { dockerClientEnv, type EngineEndpoint } from "./engineEndpoint.js";

export interface DevcontainerUpOptions {
  readonly workspaceFolder: string;
  /** The approved copy `up` reads instead of the workspace's own configuration. */
  readonly approved: ApprovedCopy;
  /** The docker client the CLI shells out to (`--docker-path`). */
  readonly dockerPath: string;
  /** The engine our API calls use: the CLI (and the docker it runs) is pointed at the same one. */
  readonly engine: EngineEndpoint;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Path of `devcontainer.js`; defaults to the installed @devcontainers/cli. */
  readonly cliPath?: string;
  /** Remove the folder's existing container first (a rebuild after devcontainer.json changed). */
  readonly removeExisting?: boolean;
  /** Each progress line of the CLI's log, for a "starting…" display. */
  readonly onProgress?: (text: string) => void;
}

export interface DevcontainerUpResult {
  readonly containerId: string;
  readonly remoteUser: string;
  readonly remoteWorkspaceFolder: string;
  /** The merged `remoteEnv` (null values unset a variable); `${containerEnv:X}` not yet resolved. */
  readonly remoteEnv: Readonly<Record<string, string | null>>;
}

interface UpOutcome {
  outcome?: string;
  message?: string;
  description?: string;
  containerId?: string;
  remoteUser?: string;
  remoteWorkspaceFolder?: string;
  mergedConfiguration?: { remoteEnv?: Record<string, string | null> };
}

const STDERR_KEEP_BYTES = 256 * 1024;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

export function defaultCliPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@devcontainers/cli/package.json")), "devcontainer.js");
}

export function devcontainerUp(options: DevcontainerUpOptions): Promise<DevcontainerUpResult> {
  const { signal } = options;
  const args = [
    options.cliPath ?? defaultCliPath(),
    "up",
    "--workspace-folder", options.workspaceFolder,
    "--config", options.approved.configPath,
    ...options.approved.idLabels.flatMap((label) => ["--id-label", label]),
    // Only the folder itself, never the repository root above it: the parent's .git would be
    // writable in the container, outside the read-only mounts (protectedMounts.ts).
    "--mount-workspace-git-root", "false",
    "--docker-path", options.dockerPath,
    "--include-merged-configuration",
    "--log-format", "json",
    ...(options.removeExisting ? ["--remove-existing-container"] : []),
  ];
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(asError(signal.reason));
      return;
    }
    // process.execPath is Electron inside the extension host: ELECTRON_RUN_AS_NODE makes it Node.
    // The host environment is passed on purpose: `${localEnv:…}` in an approved config is a
    // legitimate Dev Containers feature, and the approval is what makes its use the user's choice.
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: "1", ...dockerClientEnv(options.engine) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // a group of its own: a timeout or an abort kills the docker children too
    });
    let stdout = "";
    let stderrTail = "";
    let lineBuf = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderrTail = (stderrTail + c).slice(-STDERR_KEEP_BYTES);
      lineBuf += c;
      const lines = lineBuf.split("\n");
      lineBuf = lines.pop() ?? "";
      if (options.onProgress) for (const line of lines) forwardProgress(line, options.onProgress);
    });

    let failure: unknown;
    const killTree = (reason: unknown): void => {
      failure ??= reason;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already exited.
      }
    };
    const timer = setTimeout(
      () =>
        killTree(
          new HarnessError(
            "sandbox_bringup_failed",
            `The dev container for ${options.workspaceFolder} did not come up within ${Math.round(options.timeoutMs / 1000)} s.`,
          ),
        ),
      options.timeoutMs,
    );
    const onAbort = (): void => killTree(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });

    child.once("error", (err) => killTree(err));
    child.once("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (failure !== undefined) {
        reject(asError(failure));
        return;
      }
      const outcome = lastOutcome(stdout);
      if (outcome?.outcome === "success" && outcome.containerId && outcome.remoteWorkspaceFolder) {
        resolve({
          containerId: outcome.containerId,
          remoteUser: outcome.remoteUser ?? "root",
          remoteWorkspaceFolder: outcome.remoteWorkspaceFolder,
          remoteEnv: outcome.mergedConfiguration?.remoteEnv ?? {},
        });
        return;
      }
      reject(upError(options.workspaceFolder, outcome, stderrTail, code));
    });
  });
}

function lastOutcome(stdout: string): UpOutcome | undefined {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    try {
      const parsed = JSON.parse(line) as UpOutcome;
      if (typeof parsed.outcome === "string") return parsed;
    } catch {
      // Not the outcome line.
    }
  }
  return undefined;
}

function logText(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { type?: string; text?: string };
    if ((entry.type === "text" || entry.type === "raw" || entry.type === "start") && typeof entry.text === "string") {
      return entry.text.replace(ANSI, "").trim() || undefined;
    }
  } catch {
    // Not a log line.
  }
  return undefined;
}

function forwardProgress(line: string, onProgress: (text: string) => void): void {
  const text = logText(line);
  if (text !== undefined) onProgress(text);
}

/** The CLI's own message, plus the last error the engine or docker client printed. */
function upError(folder: string, outcome: UpOutcome | undefined, stderrTail: string, code: number | null): HarnessError {
  const message = (outcome?.message ?? `devcontainer up exited with code ${code ?? "null"}`).replace(ANSI, "").trim();
  const engineLines = stderrTail
    .split("\n")
    .map(logText)
    .filter((t): t is string => t !== undefined && /^(Error|error:|ERROR)/.test(t));
  // The daemon's own answer (e.g. why a pull failed) says more than the client's follow-ups.
  const detail = engineLines.filter((t) => t.startsWith("Error response from daemon")).at(-1) ?? engineLines.at(-1);
  return new HarnessError(
    "sandbox_bringup_failed",
    `Could not bring up the dev container for ${folder}: ${message}` +
      (detail && !message.includes(detail) ? ` (${detail})` : "") +
      ". Fix .devcontainer/devcontainer.json (or the image it names) and try again.",
  );
}
