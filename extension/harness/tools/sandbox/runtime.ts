/**
 * Lazy sandbox acquisition for the sandbox tools (DeerFlow's ensure_sandbox_initialized,
 * `sandbox/tools.py:1373`) and the shared tool plumbing.
 *
 * The first sandbox tool call of a thread finds no `state.sandbox.sandbox_id` (or one the provider
 * no longer knows, e.g. restored from a checkpoint after a restart) and acquires. Python DeerFlow
 * then mutates `runtime.state`; LangGraph.js state is immutable from a tool, so the tool returns
 * `Command({ update: { sandbox: { sandbox_id }, messages: [ToolMessage] } })` instead. Parallel
 * first calls acquire the same id (one sandbox per thread), which the `sandbox` channel's
 * conflict-checking reducer accepts.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { ThreadDirs } from "../../threads/threadDirs.js";
import { HarnessError } from "../../errors.js";
import type { Sandbox, SandboxProvider } from "../../sandbox/provider.js";
import { HostFiles, type SandboxFiles, type WriteOptions } from "../../sandbox/files.js";
import { maskLocalPathsInOutput } from "../../sandbox/paths.js";
import { sanitizeError } from "./output.js";

export interface SandboxToolDeps {
  readonly dirs: ThreadDirs;
  readonly provider: SandboxProvider;
  /** The user's consent to run commands on the host (local provider only). */
  readonly allowHostCommands: boolean;
  /** Per-command wall clock; DeerFlow's sandbox.bash_command_timeout (600 s). */
  readonly bashTimeoutMs?: number;
  /**
   * The host file operations of this run, when they are not a plain HostFiles: the worker's
   * change-recording decorator (changes/tracker.ts). Unused for a sandbox with its own `files`.
   */
  readonly hostFiles?: SandboxFiles;
  /**
   * Tool call ids whose write to a protected path the approval middleware cleared (the user
   * approved it, or chose `protected=auto`). Filled per run by middlewares/approval.ts.
   */
  readonly protectedWritesAllowed?: ReadonlySet<string>;
}

/**
 * A tool result that carries facts for the middlewares beside its text (the bash tool's
 * protected-path changes, read by SandboxAudit). The text is what the model reads.
 */
export interface FlaggedText {
  readonly text: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
}

/** The slice of ToolRuntime the sandbox tools read; everything optional so a bare invoke works. */
export interface SandboxToolRuntime {
  readonly state?: unknown;
  readonly toolCallId?: string;
  readonly toolCall?: { readonly id?: string };
  readonly signal?: AbortSignal;
}

export interface ToolContext {
  readonly sandbox: Sandbox;
  readonly files: SandboxFiles;
  readonly dirs: ThreadDirs;
  readonly signal: AbortSignal | undefined;
  /** For the writing tools: what the approval middleware decided for this call. */
  readonly writeOptions: WriteOptions;
}

function stateSandboxId(state: unknown): string | undefined {
  if (typeof state !== "object" || state === null) return undefined;
  const sandbox = (state as { sandbox?: unknown }).sandbox;
  if (typeof sandbox !== "object" || sandbox === null) return undefined;
  const id = (sandbox as { sandbox_id?: unknown }).sandbox_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * Run a tool body with the thread's sandbox, acquiring it first when needed. The body returns the
 * tool's text and must not throw; anything it does throw becomes "Error: ..." with host paths
 * masked, so a tool never throws to the agent.
 */
export async function runSandboxTool(
  name: string,
  deps: SandboxToolDeps,
  runtime: SandboxToolRuntime | undefined,
  body: (ctx: ToolContext) => Promise<string | FlaggedText>,
): Promise<string | ToolMessage | Command> {
  let sandbox: Sandbox | undefined;
  let acquiredId: string | undefined;
  try {
    const existing = stateSandboxId(runtime?.state);
    if (existing !== undefined) sandbox = await deps.provider.get(existing);
    if (!sandbox) {
      const signal = runtime?.signal;
      acquiredId = await deps.provider.acquire(deps.dirs.threadId, signal ? { signal } : {});
      sandbox = await deps.provider.get(acquiredId);
      if (!sandbox) throw new HarnessError("sandbox_runtime", "Sandbox not found after acquisition");
    }
  } catch (err) {
    return err instanceof HarnessError
      ? `Error: ${sanitizeError(err, deps.dirs).replace(/^HarnessError: /, "")}`
      : `Error: Unexpected error initializing sandbox: ${sanitizeError(err, deps.dirs)}`;
  }

  const toolCallId = runtime?.toolCallId ?? runtime?.toolCall?.id;
  let content: string;
  let kwargs: Readonly<Record<string, unknown>> | undefined;
  try {
    const reply = await body({
      sandbox,
      files: sandbox.files ?? deps.hostFiles ?? new HostFiles(deps.dirs),
      dirs: deps.dirs,
      signal: runtime?.signal,
      writeOptions: { allowProtected: toolCallId !== undefined && (deps.protectedWritesAllowed?.has(toolCallId) ?? false) },
    });
    if (typeof reply === "string") content = reply;
    else ({ text: content, kwargs } = reply);
  } catch (err) {
    content = `Error: Unexpected error in ${name}: ${sanitizeError(err, deps.dirs)}`;
  }
  // Safety net: even a host path the model typed itself is answered in its virtual form.
  content = maskLocalPathsInOutput(content, deps.dirs);

  if (toolCallId === undefined) return content;
  const message = kwargs ? new ToolMessage({ content, tool_call_id: toolCallId, name, additional_kwargs: { ...kwargs } }) : undefined;
  if (acquiredId === undefined) return message ?? content;
  return new Command({
    update: {
      sandbox: { sandbox_id: acquiredId },
      messages: [message ?? new ToolMessage({ content, tool_call_id: toolCallId, name })],
    },
  });
}
