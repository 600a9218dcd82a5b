/**
 * The sandbox contract, modelled on DeerFlow's SandboxProvider / Sandbox
 * (`sandbox/sandbox_provider.py`, `sandbox/sandbox.py`), made async with an AbortSignal on exec.
 *
 * Where the file operations live, and why:
 * DeerFlow puts read/write/list/glob/grep on every Sandbox. Here the two providers we build share
 * one truth: a dev container's `/mnt/user-data/{workspace,uploads,outputs}` are bind mounts of the
 * very host directories in ThreadDirs. So the file tools use one validated host-path
 * implementation (`files.ts`, on top of `paths.ts`) for both, and only `bash` goes through
 * `Sandbox.execCommand`, the one thing that differs (host process vs container exec). That keeps
 * the symlink/containment checks, output masking and per-path locks in one place, and a file tool
 * never waits for a container round trip. A future provider whose files are NOT the host's (a
 * remote sandbox) sets `files`; the tools then use it instead of the host implementation.
 */
import type { SandboxFiles } from "./files.js";
import type { ProtectedChange } from "../trust/protectedPaths.js";

export interface ExecOptions {
  /** Wall-clock limit; on expiry the whole process tree is killed and `timedOut` is set. */
  readonly timeoutMs?: number;
  /** Aborting kills the whole process tree; execCommand then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Extra variables for this call only (already vetted by the caller). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Raw result; the bash tool shapes it into DeerFlow's text (`tools/sandbox/output.ts`). */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  /** null when the process was killed by a signal (timeout). */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** The timeout that applied, for the notice ("after 1.5 seconds"). */
  readonly timeoutMs: number;
  /**
   * Protected paths the command created or changed that the sandbox could not keep it from
   * (a dev container: devcontainer/protectedWatch.ts). Present only when there are some; the run
   * must not take another step (the bash tool flags its result, SandboxAudit ends the run).
   */
  readonly protectedChanges?: readonly ProtectedChange[];
}

/**
 * How a sandbox sees `/mnt/user-data`:
 * - "host": commands run on the host, so virtual paths are validated and rewritten to host paths
 *   before exec and the provider is not a security boundary (host bash needs the user's consent);
 * - "virtual": the paths exist as such inside the sandbox (a container), nothing is rewritten.
 */
export type SandboxPathMode = "host" | "virtual";

export interface Sandbox {
  readonly id: string;
  readonly pathMode: SandboxPathMode;
  /** `bash -c command`, cwd = the thread's workspace, stdin = /dev/null. */
  execCommand(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Only for providers whose files are not the host's ThreadDirs (see the header). */
  readonly files?: SandboxFiles;
}

export interface SandboxProvider {
  /** One sandbox per thread; acquiring twice returns the same id. */
  acquire(threadId: string, options?: { signal?: AbortSignal }): Promise<string>;
  /** undefined when the id is unknown (e.g. restored from a checkpoint after a restart). */
  get(sandboxId: string): Promise<Sandbox | undefined>;
  /** Hand the sandbox back; a provider may keep it warm (local: no-op). */
  release(sandboxId: string): Promise<void>;
  /** Stop everything this provider started (dev containers, background exec sessions). */
  shutdown?(): Promise<void>;
  /**
   * Checks a run must pass before it may use this provider at all (a dev container whose
   * configuration the user has not approved). Rejects with a HarnessError that ends the run
   * with its message; the worker calls it before the model runs.
   */
  preflight?(): Promise<void>;
  /**
   * Set when no command may run in this provider's sandboxes at all, whatever the user allowed
   * (an untrusted VS Code workspace): the bash tool answers with this text, which says why.
   */
  readonly commandsDisabledReason?: string;
}
