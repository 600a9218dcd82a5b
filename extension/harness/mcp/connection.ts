/**
 * One MCP session with one server (issue 23), after VS Code's `McpServerConnection`: its
 * lifecycle and nothing else. The protocol is the SDK's `Client`; where the process runs is the
 * launcher's (launch.ts), handed in as a transport factory.
 *
 * States: starting → ready (with the server's tools) | error (with a reason a person can act
 * on), and error again when a ready session's transport closes (the server exited or crashed).
 * Bring-up (spawn, initialize, tools/list with every page) is bounded by `session_init_timeout`
 * (DeerFlow's); every call by the run's AbortSignal (and a stdio server's `tool_call_timeout`), which the SDK turns into
 * `notifications/cancelled` for the server. The reason never carries the server's stderr lines
 * to the model: the caller decides who sees what (the log tail goes to the user's status).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../errors.js";

export type McpConnectionState =
  | { readonly kind: "starting" }
  | { readonly kind: "ready"; readonly tools: readonly Tool[] }
  | { readonly kind: "error"; readonly reason: string }
  | { readonly kind: "stopped" };

export interface ConnectionOptions {
  readonly server: string;
  /** Creates the transport; its `exitReason` is asked when the session ends. */
  readonly transport: (signal: AbortSignal) => Promise<Transport>;
  readonly initTimeoutMs: number;
  /** How the process ended, when known ("exit code 1"): for the reason. */
  readonly exitReason?: () => string | undefined;
  readonly log: (line: string) => void;
}

/** A bound on pages of tools/list: a server that pages forever is cut off here. */
const MAX_TOOL_PAGES = 100;

export class McpConnection {
  private current: McpConnectionState = { kind: "stopped" };
  private client: Client | undefined;
  private readonly listeners = new Set<(s: McpConnectionState) => void>();
  private closing = false;

  constructor(private readonly o: ConnectionOptions) {}

  get state(): McpConnectionState {
    return this.current;
  }

  onState(listener: (s: McpConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(state: McpConnectionState): void {
    this.current = state;
    for (const l of this.listeners) l(state);
  }

  /** Brings the session up; resolves with the server's tools, or rejects (the state says why). */
  async start(signal?: AbortSignal): Promise<readonly Tool[]> {
    this.set({ kind: "starting" });
    const seconds = this.o.initTimeoutMs / 1000;
    const deadline = AbortSignal.timeout(this.o.initTimeoutMs);
    const bound = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const client = new Client({ name: "deerflow-vscode", version: "1" });
    this.client = client;
    client.onerror = (err) => this.o.log(`[deerflow] transport error: ${errorMessage(err)}`);
    try {
      const transport = await this.o.transport(bound);
      await client.connect(transport, { signal: bound, timeout: this.o.initTimeoutMs });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const res = await client.listTools(cursor ? { cursor } : undefined, { signal: bound, timeout: this.o.initTimeoutMs });
        tools.push(...res.tools);
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      // Installed after the handshake: a close from here on is the server going away.
      client.onclose = () => {
        if (this.closing) return;
        const how = this.o.exitReason?.();
        const reason = `the server closed the connection${how ? ` (${how})` : ""}`;
        this.o.log(`[deerflow] ${reason}`);
        this.set({ kind: "error", reason });
      };
      this.set({ kind: "ready", tools });
      return tools;
    } catch (err) {
      const reason = deadline.aborted && !signal?.aborted
        ? `it did not answer within ${seconds} s (session_init_timeout)`
        : signal?.aborted
          ? "its start was cancelled"
          : startFailure(err, this.o.exitReason?.());
      this.o.log(`[deerflow] start failed: ${reason}`);
      this.set({ kind: "error", reason });
      await this.dispose();
      throw new McpStartError(reason);
    }
  }

  /**
   * One tools/call; rejects with McpCallError (timeout, closed connection, protocol error).
   * `timeoutMs` is `tool_call_timeout` (stdio only, config.ts): the longest wait for an answer or a
   * progress notification. Absent, the call has no limit of its own (DeerFlow's default): only the
   * run's signal ends it.
   */
  async callTool(name: string, args: Record<string, unknown>, o: { timeoutMs?: number; signal?: AbortSignal }): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.current.kind !== "ready") {
      throw new McpCallError("unavailable", this.current.kind === "error" ? this.current.reason : "the session is not started");
    }
    try {
      const result = await client.callTool({ name, arguments: args }, undefined, callRequestOptions(o.timeoutMs, o.signal));
      return result as CallToolResult;
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new Error("cancelled");
      if (err instanceof McpError && (err.code as ErrorCode) === ErrorCode.RequestTimeout) {
        throw new McpCallError("timeout", o.timeoutMs === undefined ? "no answer (the request timed out)" : `no answer within ${o.timeoutMs / 1000} s (tool_call_timeout)`);
      }
      if (err instanceof McpError && (err.code as ErrorCode) === ErrorCode.ConnectionClosed) {
        const how = this.o.exitReason?.();
        throw new McpCallError("unavailable", `the server closed the connection${how ? ` (${how})` : ""}`);
      }
      if (err instanceof McpError) throw new McpCallError("protocol", `the server answered with an error: ${err.message}`);
      throw new McpCallError("unavailable", errorMessage(err));
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.dispose();
    if (this.current.kind !== "error") this.set({ kind: "stopped" });
  }

  private async dispose(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }
}

/**
 * The longest delay a timer takes (2^31 - 1 ms, about 24.8 days): the SDK has no "no timeout"
 * and falls back to its own 60 s when none is given, so "no limit" is this.
 */
export const NO_CALL_TIMEOUT_MS = 2_147_483_647;

/**
 * The SDK request options of one tools/call. `onprogress` is what makes the SDK send a progress
 * token (protocol.js only adds `_meta.progressToken` with a handler), so a server's progress
 * notifications reach us and `resetTimeoutOnProgress` restarts the wait on each.
 */
export function callRequestOptions(timeoutMs: number | undefined, signal?: AbortSignal): RequestOptions {
  return {
    timeout: timeoutMs ?? NO_CALL_TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    onprogress: () => undefined,
    ...(signal ? { signal } : {}),
  };
}

export class McpStartError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "McpStartError";
  }
}

export class McpCallError extends Error {
  constructor(
    readonly kind: "timeout" | "unavailable" | "protocol",
    message: string,
  ) {
    super(message);
    this.name = "McpCallError";
  }
}

function startFailure(err: unknown, exit: string | undefined): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === "ENOENT") return `its command was not found (${e.path ?? "ENOENT"}): is it installed, and on your login shell's PATH?`;
  if (e?.code === "EACCES") return `its command is not executable (${e.path ?? "EACCES"})`;
  if (err instanceof McpError && (err.code as ErrorCode) === ErrorCode.ConnectionClosed) return `it exited before answering${exit ? ` (${exit})` : ""}`;
  return `${errorMessage(err)}${exit ? ` (${exit})` : ""}`;
}
