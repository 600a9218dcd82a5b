/**
 * LocalSandboxProvider: commands run on the host, in the thread's workspace folder
 * (DeerFlow's `sandbox/local/local_sandbox_provider.py` + `local_sandbox.py`).
 *
 * Not a security boundary. Whether host bash may run at all is the bash tool's decision
 * (`allowHostCommands`), exactly as DeerFlow gates it outside the sandbox.
 */
import type { ThreadDirs } from "../threads/threadDirs.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import { runCommand, scrubbedEnv } from "./exec.js";
import type { ExecOptions, ExecResult, Sandbox, SandboxProvider } from "./provider.js";

/** DeerFlow has users; we have one ("default"), kept in the id for parity: `local:default:{thread}`. */
const LOCAL_USER = "default";
/** DeerFlow's LRU cap on cached thread sandboxes. */
const MAX_CACHED_SANDBOXES = 256;

export function isLocalSandboxId(id: string): boolean {
  return id === "local" || id.startsWith("local:");
}

export class LocalSandbox implements Sandbox {
  readonly pathMode = "host" as const;

  constructor(
    readonly id: string,
    readonly dirs: ThreadDirs,
  ) {}

  execCommand(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const env = { ...scrubbedEnv(), ...(options.env ?? {}) };
    return runCommand(command, {
      cwd: this.dirs.workspace,
      env,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  }
}

export interface LocalSandboxProviderOptions {
  /** The workspace folder that holds the threads (`.deerflow/threads/<id>` inside it). */
  readonly workspaceFolder: string;
}

export class LocalSandboxProvider implements SandboxProvider {
  /** Map order is recency order: `get` re-inserts, eviction takes the first key. */
  private readonly sandboxes = new Map<string, LocalSandbox>();

  constructor(private readonly options: LocalSandboxProviderOptions) {}

  acquire(threadId: string): Promise<string> {
    try {
      return Promise.resolve(this.acquireNow(threadId));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private acquireNow(threadId: string): string {
    const id = `local:${LOCAL_USER}:${threadId}`;
    if (!this.sandboxes.has(id)) {
      // Validates the thread id and creates the thread's directories (idempotent).
      const dirs = ensureThreadDirs(this.options.workspaceFolder, threadId);
      this.sandboxes.set(id, new LocalSandbox(id, dirs));
      while (this.sandboxes.size > MAX_CACHED_SANDBOXES) {
        const oldest = this.sandboxes.keys().next().value;
        if (oldest === undefined) break;
        this.sandboxes.delete(oldest);
      }
    }
    return id;
  }

  get(sandboxId: string): Promise<LocalSandbox | undefined> {
    const sandbox = this.sandboxes.get(sandboxId);
    if (sandbox) {
      this.sandboxes.delete(sandboxId);
      this.sandboxes.set(sandboxId, sandbox);
    }
    return Promise.resolve(sandbox);
  }

  /** A no-op, as in DeerFlow: the instance stays cached for the thread's next run. */
  release(_sandboxId: string): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.sandboxes.clear();
    return Promise.resolve();
  }
}
