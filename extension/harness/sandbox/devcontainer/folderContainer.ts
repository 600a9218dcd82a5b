/**
 * One workspace folder's dev container: brought up once, shared by the folder's threads under a
 * lease, released after an idle timeout, brought up again when it vanished or was stopped.
 *
 * Lease: the references are the threads that acquired the sandbox and have not released it, plus
 * the commands in flight. The harness acquires once per thread (the id then lives in the thread's
 * state) but releases at the end of every run, so a set of threads, not a counter, keeps the
 * count honest; a command re-leases its thread. At zero references the idle timer starts; when it
 * fires, a container WE started is stopped (or removed when configured). A container that was
 * already running (the user's VS Code attached to it) is never stopped by us.
 *
 * Recovery: the fast path never inspects the container. An exec that the engine refuses with 404
 * (container gone) or 409 (not running, e.g. `docker stop` or a daemon restart) marks the
 * container down, brings it up again through `devcontainer up` (which restarts or recreates it)
 * and retries once. A command whose stream ends without an exit code finds the container dead
 * and fails with `sandbox_container_lost`; the next command brings it up again.
 *
 * Approval: EVERY bring-up (the first, a re-up after the idle stop or a lost container, a
 * rebuild) first reads the configuration and refuses with `sandbox_config_unapproved` unless the
 * user approved exactly it; `up` then runs on the approved copy (approvals.ts, approvedCopy.ts).
 * The container can edit the bind-mounted devcontainer.json, so an approval given once is never
 * taken to cover what the folder holds later.
 *
 * Protection: every bring-up also plans the read-only mounts of the workspace's protected paths
 * (protectedMounts.ts), refuses a running container made without them, recreates a stopped one,
 * and checks the mounts in the engine's description of the container before any command; every
 * command is then bracketed by the watch of what the mounts could not cover (protectedWatch.ts).
 */
import { posix } from "node:path";
import { HarnessError } from "../../errors.js";
import type { ExecResult } from "../provider.js";
import { scrubbedEnv } from "../exec.js";
import { ContainerStdioProcess } from "./containerStdio.js";
import { OUTPUTS_VIRTUAL_PATH, UPLOADS_VIRTUAL_PATH, VIRTUAL_PATH_PREFIX, WORKSPACE_VIRTUAL_PATH } from "../paths.js";
import { requireApproved, type ConfigApprovals } from "./approvals.js";
import { writeApprovedCopy } from "./approvedCopy.js";
import { runContainerExec } from "./containerExec.js";
import { devcontainerUp } from "./devcontainerCli.js";
import { EngineHttpError, type EngineApi } from "./engineApi.js";
import { ThreadViewGate } from "./threadViewGate.js";
import { checkProtection, createPlaceholders, planProtection, reuseVerdict, unprotected } from "./protectedMounts.js";
import { ProtectedWatch, protectedChanges } from "./protectedWatch.js";
import { raceAbort } from "./errors.js";

export type DevContainerStatus = "stopped" | "starting" | "ready";

export interface DevContainerEvent {
  readonly status: DevContainerStatus;
  readonly workspaceFolder: string;
  readonly containerId?: string;
  /** A line of bring-up progress while starting; the error text when a bring-up failed. */
  readonly detail?: string;
}

export interface FolderContainerOptions {
  readonly workspaceFolder: string;
  /** The user's approvals of this folder's configuration: checked before every `up`. */
  readonly approvals: ConfigApprovals;
  readonly engine: EngineApi;
  readonly dockerPath: string;
  readonly cliPath?: string;
  readonly bringUpTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly removeWhenIdle: boolean;
  readonly captureLimitBytes: number;
  readonly onEvent?: (event: DevContainerEvent) => void;
}

/** What one bring-up established; replaced as a whole by the next bring-up. */
export interface UpContainer {
  readonly containerId: string;
  readonly remoteUser: string;
  readonly remoteWorkspaceFolder: string;
  readonly env: readonly string[];
  /** bash when the image has it, sh otherwise. */
  readonly shell: string;
}

export interface FolderExecOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly env?: Readonly<Record<string, string>>;
  readonly onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

const STOP_GRACE_SECONDS = 10;
/** How long the engine may take to record a container's death after its processes were killed. */
const DEATH_GRACE_MS = 1_500;

/** Root setup after every bring-up: the virtual root, the workspace link, the shell to use. */
const SETUP_SCRIPT = `set -e
mkdir -p ${VIRTUAL_PATH_PREFIX}
if [ -e ${WORKSPACE_VIRTUAL_PATH} ] && [ ! -L ${WORKSPACE_VIRTUAL_PATH} ]; then rm -rf ${WORKSPACE_VIRTUAL_PATH}; fi
ln -sfn "$1" ${WORKSPACE_VIRTUAL_PATH}
command -v bash || command -v sh`;

/** Switch the per-thread links (see ThreadViewGate). A real dir in their place would swallow the link. */
const INSTALL_VIEW_SCRIPT = `set -e
for pair in "$1:${UPLOADS_VIRTUAL_PATH}" "$2:${OUTPUTS_VIRTUAL_PATH}"; do
  target=\${pair%%:*}; link=\${pair#*:}
  if [ -e "$link" ] && [ ! -L "$link" ]; then rm -rf "$link"; fi
  ln -sfn "$target" "$link"
done`;

/** The container went down between our bring-up and this use (another caller saw it first). */
class ContainerDownError extends Error {
  override readonly name = "ContainerDownError";
}

function isContainerGone(err: unknown): boolean {
  return err instanceof ContainerDownError || (err instanceof EngineHttpError && (err.statusCode === 404 || err.statusCode === 409));
}

/** After the one retry: say so in words, not as the engine's 409. */
function lost(err: unknown): HarnessError {
  return new HarnessError(
    "sandbox_container_lost",
    `The dev container stopped again right after it was brought up (${err instanceof Error ? err.message : String(err)}). ` +
      "Check its logs (docker logs) and devcontainer.json.",
    { cause: err },
  );
}

/** `${containerEnv:NAME}` / `${containerEnv:NAME:default}` in remoteEnv, as the CLI resolves them. */
function resolveRemoteEnv(remoteEnv: Readonly<Record<string, string | null>>, containerEnv: readonly string[]): string[] {
  const known = new Map(containerEnv.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
  return Object.entries(remoteEnv)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([name, value]) => {
      const resolved = value.replace(/\$\{containerEnv:([^}:]+)(?::([^}]*))?\}/g, (_m, v: string, d?: string) => known.get(v) ?? d ?? "");
      return `${name}=${resolved}`;
    });
}

export interface OpenStdioOptions {
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
  readonly onClose: (exitCode: number | null) => void;
  readonly signal?: AbortSignal;
}

export class FolderContainer {
  private up: UpContainer | undefined;
  private bringingUp: Promise<UpContainer> | undefined;
  private generation = 0;
  private startedByUs = false;
  private readonly leases = new Set<string>();
  private inflight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly lifetime = new AbortController();
  private readonly gate: ThreadViewGate;
  /** What the current container's mounts do not cover, listed around every command. */
  private watch: ProtectedWatch | undefined;

  constructor(private readonly options: FolderContainerOptions) {
    this.gate = new ThreadViewGate((threadId) => this.installView(threadId), () => this.generation);
  }

  get current(): UpContainer | undefined {
    return this.up;
  }

  lease(threadId: string): void {
    this.leases.add(threadId);
    this.cancelIdle();
  }

  unlease(threadId: string): void {
    this.leases.delete(threadId);
    this.maybeIdle();
  }

  /** The running container; one bring-up at a time, shared by every caller that needs it. */
  async ensureUp(signal?: AbortSignal): Promise<UpContainer> {
    if (this.up) return this.up;
    this.bringingUp ??= this.bringUp(false).finally(() => {
      this.bringingUp = undefined;
    });
    return raceAbort(this.bringingUp, signal);
  }

  /**
   * Recreate the container from devcontainer.json (after it changed). Commands in flight on the
   * old container end with `sandbox_container_lost`; later ones run in the new container.
   */
  async rebuild(signal?: AbortSignal): Promise<UpContainer> {
    if (this.bringingUp) await this.bringingUp.catch(() => undefined);
    if (this.up) this.markDown(this.up);
    this.bringingUp = this.bringUp(true).finally(() => {
      this.bringingUp = undefined;
    });
    return raceAbort(this.bringingUp, signal);
  }

  async exec(threadId: string, command: string, options: FolderExecOptions): Promise<ExecResult> {
    this.lease(threadId);
    this.inflight++;
    try {
      for (let attempt = 0; ; attempt++) {
        let up = await this.ensureUp(options.signal);
        // A container that vanished under us is brought up again once; a second loss is reported.
        const goneOrThrow = (err: unknown): void => {
          if (!isContainerGone(err)) throw err;
          this.markDown(up);
          if (attempt > 0) throw lost(err);
        };
        try {
          await this.gate.enter(threadId, options.signal);
        } catch (err) {
          goneOrThrow(err);
          continue;
        }
        try {
          // The wait in the gate may have outlived a bring-up: use the container the view is in.
          up = this.up ?? up;
          return await this.watched(() => this.execIn(up, command, options), options.signal);
        } catch (err) {
          goneOrThrow(err);
          continue;
        } finally {
          this.gate.leave();
        }
      }
    } finally {
      this.inflight--;
      this.maybeIdle();
    }
  }

  /**
   * A long-lived stdio process in the container (an MCP server, issue 23): as the remoteUser, in
   * /mnt/user-data/workspace, with the container's environment, the approved remoteEnv and the
   * caller's `env` (the server's configured variables) — never the harness's. It holds a lease
   * (`leaseKey`) while it runs, so the idle timer does not stop the container under it.
   */
  async openStdio(leaseKey: string, o: OpenStdioOptions): Promise<ContainerStdioProcess> {
    this.lease(leaseKey);
    try {
      const up = await this.ensureUp(o.signal);
      const env = [...up.env, `PWD=${WORKSPACE_VIRTUAL_PATH}`, ...Object.entries(o.env).map(([k, v]) => `${k}=${v}`)];
      return await ContainerStdioProcess.start(this.options.engine, {
        containerId: up.containerId,
        cmd: o.cmd,
        user: up.remoteUser,
        workingDir: WORKSPACE_VIRTUAL_PATH,
        env,
        onStdout: o.onStdout,
        onStderr: o.onStderr,
        onClose: (code) => {
          this.unlease(leaseKey);
          o.onClose(code);
        },
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      this.unlease(leaseKey);
      throw err;
    }
  }

  /** Stop (or remove) the container if we started it; used by the idle timer and shutdown. */
  async release(): Promise<void> {
    this.cancelIdle();
    const up = this.up;
    if (!up) return;
    this.markDown(up);
    if (!this.startedByUs) return;
    this.startedByUs = false;
    if (this.options.removeWhenIdle) await this.options.engine.removeContainer(up.containerId);
    else await this.options.engine.stopContainer(up.containerId, STOP_GRACE_SECONDS);
    this.emit({ status: "stopped", containerId: up.containerId });
  }

  async shutdown(): Promise<void> {
    this.lifetime.abort(new HarnessError("sandbox_runtime", "The sandbox provider is shutting down."));
    await this.release().catch(() => undefined);
  }

  /** The command, with what it created or changed among the protected paths the mounts do not cover. */
  private async watched(run: () => Promise<ExecResult>, signal: AbortSignal | undefined): Promise<ExecResult> {
    const watch = this.watch;
    if (!watch) return run();
    const before = await watch.snapshot(signal);
    const result = await run();
    const changes = protectedChanges(before, await watch.snapshot(signal));
    return changes.length > 0 ? { ...result, protectedChanges: changes } : result;
  }

  private async execIn(up: UpContainer, command: string, options: FolderExecOptions): Promise<ExecResult> {
    // The command's environment: the container's own, the approved config's remoteEnv, PWD and
    // the caller's extras, which pass the local sandbox's filter (exec.ts) like every host value.
    const extra = Object.entries(scrubbedEnv(options.env ?? {})).map(([k, v]) => `${k}=${v ?? ""}`);
    const env = [...up.env, `PWD=${WORKSPACE_VIRTUAL_PATH}`, ...extra];
    const outcome = await runContainerExec(this.options.engine, {
      containerId: up.containerId,
      // The working directory is the virtual path itself (a link to the mounted folder) and PWD
      // says so, so `pwd` prints /mnt/user-data/workspace and the command runs verbatim.
      cmd: [up.shell, "-c", command],
      user: up.remoteUser,
      workingDir: WORKSPACE_VIRTUAL_PATH,
      env,
      timeoutMs: options.timeoutMs,
      captureLimitBytes: this.options.captureLimitBytes,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    });
    // No exit code, or SIGKILL's, without our timeout: did the container die under the command?
    // (When a container's init dies the kernel SIGKILLs everything in it: exec exit code 137.)
    const lostProcess = outcome.exitCode === null || outcome.exitCode === 137;
    if (!outcome.timedOut && lostProcess && (await this.options.engine.waitNotRunning(up.containerId, DEATH_GRACE_MS))) {
      this.markDown(up);
      throw new HarnessError(
        "sandbox_container_lost",
        "The dev container stopped while the command was running; its output is lost. " +
          "The next command starts the container again.",
      );
    }
    return { ...outcome, timeoutMs: options.timeoutMs };
  }

  /** Throws `sandbox_config_unapproved` unless the configuration as it is now is approved. */
  checkApproved(): void {
    requireApproved(this.options.approvals);
  }

  private async bringUp(removeExisting: boolean): Promise<UpContainer> {
    const { engine, workspaceFolder, approvals } = this.options;
    const signal = this.lifetime.signal;
    // Read once: what is checked is what the copy is written from, and what `up` then reads.
    const snapshot = requireApproved(approvals);
    const plan = await planProtection(workspaceFolder, snapshot.config, signal);
    const approved = writeApprovedCopy(approvals, snapshot, plan);
    await engine.ping(signal);
    const before = await engine.listContainers([`devcontainer.local_folder=${workspaceFolder}`], signal);
    const wasRunning = before.some((c) => c.State === "running");
    const { recreate, fresh } = reuseVerdict(await engine.listContainers(approved.idLabels, signal), plan, removeExisting);
    await createPlaceholders(plan);
    this.emit({ status: "starting", ...(recreate && !removeExisting ? { detail: "Recreating the dev container with read-only mounts of .git, .vscode and the other protected paths" } : {}) });
    let up: UpContainer;
    try {
      const result = await devcontainerUp({
        workspaceFolder,
        approved,
        dockerPath: this.options.dockerPath,
        engine: engine.endpoint,
        timeoutMs: this.options.bringUpTimeoutMs,
        signal,
        removeExisting: recreate,
        ...(this.options.cliPath ? { cliPath: this.options.cliPath } : {}),
        onProgress: (detail) => this.emit({ status: "starting", detail }),
      });
      const info = await engine.inspectContainer(result.containerId, signal);
      // The engine's own word on the mounts, before any command: the CLI could have dropped them.
      const protection = checkProtection(info, plan, fresh);
      if (protection.problems.length > 0) {
        // Not left behind for the next bring-up to take for one of ours.
        if (!wasRunning) await engine.removeContainer(result.containerId).catch(() => undefined);
        throw unprotected(workspaceFolder, protection.problems.join("; "));
      }
      this.watch = await ProtectedWatch.create(workspaceFolder, protection.mounted);
      // The first listing reads every folder; done now, the first command finds the cache warm.
      void this.watch.snapshot(signal).catch(() => undefined);
      const setup = await runContainerExec(engine, {
        containerId: result.containerId,
        cmd: ["sh", "-c", SETUP_SCRIPT, "sh", result.remoteWorkspaceFolder],
        user: "0",
        timeoutMs: 30_000,
        captureLimitBytes: 64 * 1024,
        signal,
      });
      if (setup.exitCode !== 0) {
        throw new HarnessError(
          "sandbox_bringup_failed",
          `Could not create ${VIRTUAL_PATH_PREFIX} in the dev container: ${setup.stderr.trim() || setup.stdout.trim()}`,
        );
      }
      up = {
        containerId: result.containerId,
        remoteUser: result.remoteUser,
        remoteWorkspaceFolder: result.remoteWorkspaceFolder,
        env: resolveRemoteEnv(result.remoteEnv, info.Config.Env ?? []),
        shell: setup.stdout.trim().split("\n").at(-1) || "sh",
      };
    } catch (err) {
      this.emit({ status: "stopped", detail: err instanceof Error ? err.message : String(err) });
      throw err;
    }
    // Ours to stop when we started it, or when we started it before and it was stopped behind our back.
    this.startedByUs = this.startedByUs || !wasRunning;
    this.generation++;
    this.up = up;
    this.emit({ status: "ready", containerId: up.containerId });
    this.maybeIdle();
    return up;
  }

  private async installView(threadId: string): Promise<void> {
    const up = this.up;
    if (!up) throw new ContainerDownError("The dev container is not up.");
    const base = posix.join(up.remoteWorkspaceFolder, ".deerflow", "threads", threadId);
    const result = await runContainerExec(this.options.engine, {
      containerId: up.containerId,
      cmd: ["sh", "-c", INSTALL_VIEW_SCRIPT, "sh", posix.join(base, "uploads"), posix.join(base, "outputs")],
      user: "0",
      timeoutMs: 30_000,
      captureLimitBytes: 64 * 1024,
    });
    if (result.exitCode !== 0) {
      throw new HarnessError(
        "sandbox_runtime",
        `Could not point ${VIRTUAL_PATH_PREFIX} at thread ${threadId}'s data: ${result.stderr.trim()}`,
      );
    }
  }

  private markDown(up: UpContainer): void {
    if (this.up !== up) return;
    this.up = undefined;
    this.gate.reset();
  }

  private maybeIdle(): void {
    if (this.leases.size > 0 || this.inflight > 0 || !this.up || this.idleTimer) return;
    if (this.options.idleTimeoutMs <= 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.leases.size > 0 || this.inflight > 0 || this.bringingUp) return;
      this.release().catch((err: unknown) =>
        this.emit({ status: "stopped", detail: err instanceof Error ? err.message : String(err) }),
      );
    }, this.options.idleTimeoutMs);
    // An idle container must not keep the harness process alive.
    this.idleTimer.unref();
  }

  private cancelIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private emit(event: Omit<DevContainerEvent, "workspaceFolder">): void {
    this.options.onEvent?.({ ...event, workspaceFolder: this.options.workspaceFolder });
  }
}
