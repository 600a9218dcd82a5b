/**
 * DevContainerSandboxProvider: `bash` runs in the workspace folder's dev container (DeerFlow's
 * AioSandboxProvider is the model, `community/aio_sandbox/aio_sandbox_provider.py`).
 *
 * Where we differ from DeerFlow on purpose:
 * - one container per FOLDER, shared by its threads (DeerFlow: one per thread). The folder's
 *   devcontainer.json describes one environment; a container per thread would multiply
 *   bring-ups (minutes with features) and disk. The per-thread uploads/outputs are symlinks
 *   switched by ThreadViewGate.
 * - the file tools do not go through the container (see ../provider.ts): the folder is a bind
 *   mount, so the host paths and the container paths are the same files.
 * - no warm pool or replica cap: one container per folder; an idle timeout stops it.
 *
 * Sandbox ids are `devcontainer:<folder hash>:<thread>`: deterministic like DeerFlow's, so an id
 * restored from a checkpoint after a restart is recognised by `get` without a new acquire.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { HarnessError } from "../../errors.js";
import { validateThreadId } from "../../threads/threadDirs.js";
import { ensureThreadDirs } from "../../trust/threadFolders.js";
import { COMMAND_CAPTURE_LIMIT_BYTES, DEFAULT_COMMAND_TIMEOUT_MS } from "../exec.js";
import type { ExecOptions, ExecResult, Sandbox, SandboxProvider } from "../provider.js";
import { ConfigApprovals } from "./approvals.js";
import { defaultEngine, EngineApi } from "./engineApi.js";
import type { EngineEndpoint } from "./engineEndpoint.js";
import { FolderContainer, type DevContainerEvent, type OpenStdioOptions, type UpContainer } from "./folderContainer.js";
import type { ContainerStdioProcess } from "./containerStdio.js";

export type { DevContainerEvent, DevContainerStatus } from "./folderContainer.js";

/** DeerFlow's aio sandbox idle_timeout. */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Image builds and features can take minutes; a bring-up that hangs longer is an error. */
export const DEFAULT_BRING_UP_TIMEOUT_MS = 900_000;

export interface DevContainerProviderOptions {
  /** The folder with `.devcontainer/devcontainer.json` or `.devcontainer.json`. */
  readonly workspaceFolder: string;
  /**
   * The harness's data directory (outside the workspace): where the user's approvals of the
   * folder's configuration and the approved copies `up` runs on are kept. Required: there is
   * no way to build this provider that skips the approval.
   */
  readonly dataDir: string;
  /**
   * Docker Engine socket. Default: the engine the environment names as the docker CLI reads it
   * (DOCKER_HOST unix:// or tcp://, DOCKER_TLS_VERIFY/DOCKER_CERT_PATH, DOCKER_CONTEXT), else
   * /var/run/docker.sock (./engineEndpoint.ts).
   */
  readonly socketPath?: string;
  /** The engine as an endpoint (tcp:// with TLS, a context's); `socketPath` wins when both are given. */
  readonly engine?: EngineEndpoint;
  /** Docker client for @devcontainers/cli (`--docker-path`); default "docker" on PATH. */
  readonly dockerPath?: string;
  /** devcontainer.js of @devcontainers/cli; default the installed dependency. */
  readonly cliPath?: string;
  /** Stop the container this long after the last lease ended; 0 keeps it running. */
  readonly idleTimeoutMs?: number;
  /** Remove instead of stop when idle (and at shutdown). */
  readonly removeWhenIdle?: boolean;
  readonly bringUpTimeoutMs?: number;
  /** Starting / ready / stopped, with bring-up progress: for the panel's sandbox indicator. */
  readonly onEvent?: (event: DevContainerEvent) => void;
}

/** ExecOptions plus streaming: each output chunk as it arrives (the result still holds it all). */
export interface DevContainerExecOptions extends ExecOptions {
  readonly onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

export class DevContainerSandbox implements Sandbox {
  readonly pathMode = "virtual" as const;

  constructor(
    readonly id: string,
    readonly threadId: string,
    private readonly container: FolderContainer,
  ) {}

  execCommand(command: string, options: DevContainerExecOptions = {}): Promise<ExecResult> {
    return this.container.exec(this.threadId, command, {
      timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    });
  }
}

export class DevContainerSandboxProvider implements SandboxProvider {
  private readonly engine: EngineApi;
  private readonly container: FolderContainer;
  /** The user's approvals of this folder's configuration (data directory). */
  readonly approvals: ConfigApprovals;
  private readonly folderKey: string;
  private readonly sandboxes = new Map<string, DevContainerSandbox>();

  constructor(private readonly options: DevContainerProviderOptions) {
    // The real path: the CLI labels the container with the folder path it was given.
    const workspaceFolder = realFolder(options.workspaceFolder);
    this.folderKey = createHash("sha256").update(workspaceFolder).digest("hex").slice(0, 12);
    this.engine = new EngineApi(options.socketPath ?? options.engine ?? defaultEngine());
    this.approvals = new ConfigApprovals(options.dataDir, workspaceFolder);
    this.container = new FolderContainer({
      workspaceFolder,
      approvals: this.approvals,
      engine: this.engine,
      dockerPath: options.dockerPath ?? "docker",
      ...(options.cliPath ? { cliPath: options.cliPath } : {}),
      bringUpTimeoutMs: options.bringUpTimeoutMs ?? DEFAULT_BRING_UP_TIMEOUT_MS,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      removeWhenIdle: options.removeWhenIdle ?? false,
      captureLimitBytes: COMMAND_CAPTURE_LIMIT_BYTES,
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
  }

  /**
   * Before a run: refuses it (`sandbox_config_unapproved`) when the folder's configuration is
   * not approved as it is now, so the run ends at once with what to approve instead of the
   * model meeting the refusal at its first command. Reads a few small files; no engine call.
   */
  preflight(): Promise<void> {
    try {
      this.container.checkApproved();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Creates the thread's dirs, leases the folder's container and brings it up if needed. */
  async acquire(threadId: string, options: { signal?: AbortSignal } = {}): Promise<string> {
    const dirs = ensureThreadDirs(this.options.workspaceFolder, threadId);
    const id = this.sandboxId(dirs.threadId);
    if (!this.sandboxes.has(id)) this.sandboxes.set(id, new DevContainerSandbox(id, threadId, this.container));
    this.container.lease(threadId);
    try {
      await this.container.ensureUp(options.signal);
    } catch (err) {
      this.container.unlease(threadId);
      throw err;
    }
    return id;
  }

  get(sandboxId: string): Promise<DevContainerSandbox | undefined> {
    const known = this.sandboxes.get(sandboxId);
    if (known) return Promise.resolve(known);
    // An id of this folder restored from a checkpoint: usable again, the container comes up on exec.
    const prefix = `devcontainer:${this.folderKey}:`;
    if (!sandboxId.startsWith(prefix)) return Promise.resolve(undefined);
    const threadId = sandboxId.slice(prefix.length);
    try {
      validateThreadId(threadId);
      ensureThreadDirs(this.options.workspaceFolder, threadId);
    } catch {
      return Promise.resolve(undefined);
    }
    const sandbox = new DevContainerSandbox(sandboxId, threadId, this.container);
    this.sandboxes.set(sandboxId, sandbox);
    return Promise.resolve(sandbox);
  }

  /** Ends the thread's lease; the container stops after the idle timeout once no lease is left. */
  release(sandboxId: string): Promise<void> {
    const sandbox = this.sandboxes.get(sandboxId);
    if (sandbox) this.container.unlease(sandbox.threadId);
    return Promise.resolve();
  }

  /** Stops the container if this provider started it, and closes the engine connections. */
  async shutdown(): Promise<void> {
    await this.container.shutdown();
    this.engine.close();
  }

  /** "Rebuild Sandbox Container": remove the folder's container and bring it up anew. */
  async rebuild(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.container.rebuild(options.signal);
  }

  /**
   * Bring the folder's container up with no thread's lease ("Open Sandbox Terminal" with no
   * thread shown): the idle timeout applies as if a run had just ended.
   */
  async ensureUp(options: { signal?: AbortSignal } = {}): Promise<UpContainer> {
    return this.container.ensureUp(options.signal);
  }

  /** A long-lived stdio process in the folder's container (an MCP server): folderContainer.ts `openStdio`. */
  openStdio(leaseKey: string, options: OpenStdioOptions): Promise<ContainerStdioProcess> {
    return this.container.openStdio(leaseKey, options);
  }

  /** The Docker client given to @devcontainers/cli; a terminal attaching to the container can use it. */
  get dockerPath(): string {
    return this.options.dockerPath ?? "docker";
  }

  /** The container as last brought up (id, remoteUser, shell): for "Open Sandbox Terminal". */
  containerInfo(): UpContainer | undefined {
    return this.container.current;
  }

  sandboxId(threadId: string): string {
    return `devcontainer:${this.folderKey}:${threadId}`;
  }
}

function realFolder(folder: string): string {
  try {
    return realpathSync(folder);
  } catch (err) {
    throw new HarnessError("workspace_mismatch", `Workspace folder does not exist: ${folder}`, { cause: err });
  }
}
