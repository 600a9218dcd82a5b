/**
 * The MCP servers of one workspace folder and one sandbox kind, for one harness process (issue
 * 23): the pool DeerFlow keeps in `mcp/session_pool.py`, as an object its owner creates and
 * disposes (the harness server per open folder, the CLI per invocation), never a module
 * singleton.
 *
 * - The configuration is read again on every use (DeerFlow re-reads `extensions_config.json`
 *   for each load): a server whose entry, resolved launch or consent (the workspace files it runs,
 *   trust.ts) changed is stopped and started anew; one that left the files is stopped. A
 *   workspace server's is read once more right before each of its processes starts (a thread's
 *   new session, the one after a crash): an edit since is gated like any other (`recheck`).
 * - Discovery (spawn, initialize, tools/list) runs per server in parallel, each bounded by its
 *   `session_init_timeout`: a hung or failing server is skipped alone, with its state and
 *   reason, while the others' tools are used.
 * - Calls go to a session per (server, thread), DeerFlow's pool key, so a stateful server keeps
 *   a thread's state and never mixes two threads'. The discovery session becomes the first
 *   thread's (no second spawn). At most MAX_SESSIONS per server stay open, least recently used
 *   first closed; a thread's close when it is deleted; all when the harness stops.
 * - A session that dies (the server crashed or exited) puts the server in `error` with the
 *   reason; the call gets a clear error result, the run goes on, and the thread's next call
 *   starts a new session.
 * Every state change is told to the listeners (the worker journals `mcp_status`, the server
 * notifies the host).
 */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { McpListView, McpServerState, McpServerView } from "../../protocol/mcp.js";
import { errorMessage } from "../errors.js";
import { loadDefinitions, canonicalJson } from "./config.js";
import { toolRoutingOf } from "./routing.js";
import { McpCallError, McpConnection } from "./connection.js";
import type { McpLauncher } from "./launch.js";
import type { McpServerLogs } from "./logs.js";
import { modelToolName, VALID_TOOL_NAME } from "./names.js";
import type { McpOverrides } from "./overrides.js";
import { mcpSources } from "./sources.js";
import { buildMcpTool, type McpToolInfo, type ResultContext } from "./tools.js";
import { describeLaunch, mcpTrust, McpNotApproved, type McpApprovals, type McpConsent } from "./trust.js";
import { type McpDiagnostic, type McpServerDefinition } from "./types.js";

/** Open sessions per server (one per thread that called it), least recently used closed first. */
const MAX_SESSIONS = 16;
/**
 * A server whose start failed is tried again by a later run only after this long: a hung server
 * must not cost every run its session_init_timeout. Restart tries at once.
 */
const RETRY_FAILED_START_MS = 60_000;

export interface RegistryContext {
  readonly workspaceTrusted: boolean;
  /** The VS Code profile's mcp.json, when known. */
  readonly userMcpJson?: string;
  /** `${input:…}` values held for this harness, by key. */
  readonly secrets: (key: string) => string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

export interface RegistryOptions {
  readonly workspaceFolder: string;
  readonly dataDir: string;
  readonly launcher: McpLauncher;
  readonly logs: McpServerLogs;
  readonly approvals: McpApprovals;
  readonly overrides: McpOverrides;
  /** Asked on every use: settings, trust and secrets may change while the harness runs. */
  readonly context: () => RegistryContext;
  /** Harness diagnostics (never a secret, never server stderr). */
  readonly log?: (level: "info" | "warn", message: string) => void;
  /** What the reader cannot read, said in `mcp list` (the CLI: VS Code's secret storage). */
  readonly notes?: readonly string[];
}

export interface McpRunTools {
  readonly tools: StructuredToolInterface[];
  /** The servers as the run found them. */
  readonly servers: McpServerView[];
  readonly diagnostics: McpDiagnostic[];
}

interface Session {
  connection: McpConnection;
  ready: Promise<McpConnection>;
  lastUsed: number;
}

interface Entry {
  def: McpServerDefinition;
  /** What approving it covers, as last read (trust.ts). */
  consent: McpConsent;
  /** Identity of what runs: the consent and the resolved launch (a new secret value restarts it). */
  key: string;
  state: McpServerState;
  reason?: string;
  changed?: boolean;
  tools: readonly Tool[];
  discovery?: Promise<void>;
  /** The discovery session, until a thread adopts it. */
  spare?: McpConnection;
  sessions: Map<string, Session>;
  exit?: string;
  /** When its last start failed (0: never, or it failed after being ready). */
  failedAt: number;
}

export type McpStatusListener = (view: McpServerView) => void;

export class McpRegistry {
  private readonly entries = new Map<string, Entry>();
  private diagnostics: McpDiagnostic[] = [];
  private readonly listeners = new Set<McpStatusListener>();
  private disposed = false;

  constructor(private readonly o: RegistryOptions) {}

  get where(): "host" | "container" {
    return this.o.launcher.where;
  }

  onStatus(listener: McpStatusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The servers as configured now, without starting any. */
  list(): McpListView {
    this.refresh();
    return this.view();
  }

  /** Starts every allowed server that is not running (in parallel, each bounded), then lists. */
  async start(signal?: AbortSignal): Promise<McpListView> {
    this.refresh();
    await Promise.all([...this.entries.values()].map((e) => this.discover(e, signal)));
    return this.view();
  }

  /**
   * The tools of every ready server for one run on `threadId`, named `<server>_<tool>` (a
   * collision is reported and the later tool left out). Servers that cannot start are skipped
   * with their state.
   */
  async toolsFor(threadId: string, ctx: ResultContext & { signal?: AbortSignal }): Promise<McpRunTools> {
    const listed = await this.start(ctx.signal);
    const tools: StructuredToolInterface[] = [];
    const diagnostics: McpDiagnostic[] = [...listed.diagnostics];
    const taken = new Set<string>();
    for (const entry of this.entries.values()) {
      if (entry.state !== "ready") continue;
      const d = entry.def;
      for (const t of entry.tools) {
        const name = modelToolName(d.name, t.name, d.toolNamePrefix);
        if (!VALID_TOOL_NAME.test(name)) {
          diagnostics.push({ file: d.source.file, server: d.name, message: `Dropping MCP tool from server '${d.name}' with invalid name ${JSON.stringify(t.name)}.` });
          continue;
        }
        if (taken.has(name)) {
          diagnostics.push({ file: d.source.file, server: d.name, message: `Duplicate tool name '${name}' detected and skipped (MCP server '${d.name}', tool '${t.name}').` });
          continue;
        }
        taken.add(name);
        const routing = toolRoutingOf(d, t.name);
        const info: McpToolInfo = {
          server: d.name,
          tool: t.name,
          scope: d.source.scope,
          alwaysAllowed: d.alwaysAllow.includes(t.name),
          annotations: annotationsOf(t),
          ...(routing.mode !== "off" ? { routing } : {}),
        };
        tools.push(buildMcpTool(name, t, info, (args, signal) => this.call(d.name, threadId, t.name, args, signal), ctx));
      }
    }
    for (const diag of diagnostics) this.o.log?.("warn", diag.message);
    return { tools, servers: listed.servers, diagnostics };
  }

  /** Stops the server's sessions and starts it again (the panel's Restart). */
  async restart(name: string, signal?: AbortSignal): Promise<McpServerView | undefined> {
    this.refresh();
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    await this.stopEntry(entry);
    entry.failedAt = 0;
    if (isStartable(entry.state)) this.setState(entry, "stopped");
    await this.discover(entry, signal);
    return this.viewOf(entry);
  }

  setEnabled(name: string, enabled: boolean): McpServerView | undefined {
    this.o.overrides.setEnabled(name, enabled);
    this.refresh();
    const entry = this.entries.get(name);
    return entry ? this.viewOf(entry) : undefined;
  }

  /** The user's yes to a workspace server as it is now (by fingerprint). */
  approve(name: string, expectedFingerprint?: string): McpServerView | undefined {
    this.refresh();
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    if (expectedFingerprint !== undefined && !entry.consent.fingerprint.startsWith(expectedFingerprint)) {
      throw new McpConfigChanged(entry.def, entry.consent.fingerprint);
    }
    this.o.approvals.approve(entry.def, entry.consent);
    this.refresh();
    return this.viewOf(entry);
  }

  /** A deleted thread's sessions end (their server processes with them). */
  async closeThread(threadId: string): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const entry of this.entries.values()) {
      const s = entry.sessions.get(threadId);
      if (!s) continue;
      entry.sessions.delete(threadId);
      closing.push(s.connection.close());
    }
    await Promise.allSettled(closing);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.allSettled([...this.entries.values()].map((e) => this.stopEntry(e)));
    this.entries.clear();
  }

  // ---------------------------------------------------------------------------------- internals

  private refresh(): void {
    const ctx = this.o.context();
    const { sources, diagnostics } = mcpSources({
      dataDir: this.o.dataDir,
      workspaceFolder: this.o.workspaceFolder,
      ...(ctx.userMcpJson ? { userMcpJson: ctx.userMcpJson } : {}),
      env: ctx.env,
    });
    const loaded = loadDefinitions(sources, {
      env: ctx.env,
      workspaceFolder: this.o.workspaceFolder,
      home: ctx.env.HOME ?? homedir(),
      secrets: ctx.secrets,
    });
    this.diagnostics = [...diagnostics, ...loaded.diagnostics];
    const disabled = this.o.overrides.disabled();
    const seen = new Set<string>();
    for (const def of loaded.servers) {
      seen.add(def.name);
      const consent = this.consentOf(def);
      const key = createHash("sha256").update(canonicalJson({ f: consent.fingerprint, l: def.launch })).digest("hex");
      let entry = this.entries.get(def.name);
      if (entry && entry.key !== key) {
        void this.stopEntry(entry);
        entry = undefined;
      }
      if (!entry) {
        entry = { def, consent, key, state: "stopped", tools: [], sessions: new Map(), failedAt: 0 };
        this.entries.set(def.name, entry);
      }
      entry.def = def;
      entry.consent = consent;
      const gate = this.gate(def, consent, ctx, disabled);
      if (gate) {
        if (entry.state !== gate.state || entry.reason !== gate.reason) {
          void this.stopEntry(entry);
          entry.changed = gate.changed ?? false;
          this.setState(entry, gate.state, gate.reason);
        }
      } else if (!isStartable(entry.state) && !isLive(entry.state)) {
        // It was gated and no longer is (approved, enabled, its secret set).
        entry.changed = false;
        this.setState(entry, "stopped");
      }
    }
    for (const [name, entry] of this.entries) {
      if (seen.has(name)) continue;
      void this.stopEntry(entry);
      this.entries.delete(name);
    }
  }

  /** The consent the server needs now, its relative words found from where the launcher starts it. */
  private consentOf(def: McpServerDefinition): McpConsent {
    return this.o.approvals.consentOf(def, def.launch.type === "stdio" ? this.o.launcher.cwdOf(def.name, def.launch) : undefined);
  }

  /**
   * Right before a workspace server's process starts: the configuration and its files read again
   * (`refresh`), so an edit made since the last read (the agent's write_file to the script, then a
   * call on a new thread) is gated as it would be at the next read, and nothing of it starts.
   */
  private recheck(entry: Entry): void {
    if (entry.def.source.scope !== "workspace") return;
    this.refresh();
    const now = this.entries.get(entry.def.name);
    if (now === entry && (isStartable(entry.state) || isLive(entry.state))) return;
    throw new McpNotApproved(entry.def.name, now?.reason ?? "it is no longer in the configuration");
  }

  /** Why the server may not start now, or undefined when it may. */
  private gate(def: McpServerDefinition, consent: McpConsent, ctx: RegistryContext, disabled: ReadonlySet<string>): { state: McpServerState; reason: string; changed?: boolean } | undefined {
    if (!def.enabled) return { state: "disabled", reason: "enabled is false in its configuration file" };
    if (disabled.has(def.name)) return { state: "disabled", reason: "turned off in DeerFlow (enable it in the MCP Servers section)" };
    const trust = mcpTrust(def, consent, { workspaceTrusted: ctx.workspaceTrusted, approvals: this.o.approvals });
    if (trust.decision === "refused") return { state: "refused", reason: trust.reason };
    if (trust.decision === "needs_approval") {
      return {
        state: "needs_approval",
        changed: trust.changed,
        reason: `${def.source.label} is a workspace file and this server ${trust.changed ? "changed since you approved it" : "is not approved yet"}: approve it with \`deerflow mcp approve --workspace ${shellWord(this.o.workspaceFolder)} --server ${shellWord(def.name)}\` or Allow in VS Code.`,
      };
    }
    if (def.missingInputs.length > 0) {
      const ids = def.inputs.filter((i) => def.missingInputs.includes(i.key)).map((i) => i.id);
      return { state: "needs_secret", reason: `needs ${ids.map((id) => `\${input:${id}}`).join(", ")}: set it with "DeerFlow: Set MCP Secret" (the CLI reads DEERFLOW_MCP_INPUT_<ID>)` };
    }
    return undefined;
  }

  private discover(entry: Entry, signal?: AbortSignal): Promise<void> {
    const retry = entry.state === "error" && Date.now() - entry.failedAt >= RETRY_FAILED_START_MS;
    if (this.disposed || (entry.state !== "stopped" && !retry)) return entry.discovery ?? Promise.resolve();
    const d = entry.def;
    const connection = this.connection(entry, "discovery");
    this.setState(entry, "starting");
    this.o.logs.append(d.name, `[deerflow] starting (${this.where === "container" && d.launch.type === "stdio" ? "in the dev container" : d.launch.type === "stdio" ? "on this machine" : d.launch.type})`);
    entry.discovery = connection
      .start(signal)
      .then(
        (tools) => {
          if (this.entries.get(d.name) !== entry) {
            void connection.close();
            return;
          }
          entry.tools = tools;
          entry.spare = connection;
          this.watch(entry, connection);
          this.o.logs.append(d.name, `[deerflow] ready: ${tools.length} tool(s)`);
          this.setState(entry, "ready");
        },
        (err: unknown) => {
          if (this.entries.get(d.name) !== entry) return;
          entry.failedAt = Date.now();
          this.setState(entry, "error", this.withTail(d.name, errorMessage(err)));
        },
      )
      .finally(() => {
        entry.discovery = undefined;
      });
    return entry.discovery;
  }

  private connection(entry: Entry, sessionKey: string): McpConnection {
    const d = entry.def;
    const timeout = d.sessionInitTimeoutS * 1000;
    return new McpConnection({
      server: d.name,
      initTimeoutMs: timeout,
      log: (line) => this.o.logs.append(d.name, line),
      exitReason: () => entry.exit,
      transport: (signal) => {
        this.recheck(entry);
        return this.o.launcher.transport(d.launch, {
          server: d.name,
          sessionKey: `${d.name}\0${sessionKey}`,
          signal,
          onStderr: (text) => this.o.logs.append(d.name, text),
          onExit: (how) => {
            entry.exit = how;
            this.o.logs.append(d.name, `[deerflow] the server process ended: ${how}`);
          },
        });
      },
    });
  }

  /** A ready session that dies puts the server in error (the next call starts a new one). */
  private watch(entry: Entry, connection: McpConnection): void {
    connection.onState((s) => {
      if (s.kind !== "error" || this.entries.get(entry.def.name) !== entry) return;
      if (entry.spare === connection) entry.spare = undefined;
      for (const [thread, session] of entry.sessions) if (session.connection === connection) entry.sessions.delete(thread);
      this.setState(entry, "error", this.withTail(entry.def.name, s.reason));
    });
  }

  private sessionFor(entry: Entry, threadId: string, signal: AbortSignal | undefined): Promise<McpConnection> {
    const known = entry.sessions.get(threadId);
    if (known) {
      known.lastUsed = Date.now();
      return known.ready;
    }
    let session: Session;
    if (entry.spare && entry.spare.state.kind === "ready") {
      const connection = entry.spare;
      entry.spare = undefined;
      session = { connection, ready: Promise.resolve(connection), lastUsed: Date.now() };
    } else {
      const connection = this.connection(entry, threadId);
      session = {
        connection,
        lastUsed: Date.now(),
        ready: connection.start(signal).then(
          (tools) => {
            entry.tools = tools;
            this.watch(entry, connection);
            if (entry.state !== "ready") this.setState(entry, "ready");
            return connection;
          },
          (err: unknown) => {
            if (entry.sessions.get(threadId) === session) entry.sessions.delete(threadId);
            // Replaced meanwhile (recheck found it changed): the new entry has its own state.
            if (this.entries.get(entry.def.name) === entry) this.setState(entry, "error", this.withTail(entry.def.name, errorMessage(err)));
            throw err;
          },
        ),
      };
    }
    entry.sessions.set(threadId, session);
    this.evict(entry);
    return session.ready;
  }

  private evict(entry: Entry): void {
    while (entry.sessions.size > MAX_SESSIONS) {
      const [oldest] = [...entry.sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      if (!oldest) return;
      entry.sessions.delete(oldest[0]);
      void oldest[1].connection.close();
    }
  }

  /** One tools/call for the model; a failure becomes an error the model reads (its text never carries stderr). */
  private async call(server: string, threadId: string, tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined) {
    const entry = this.entries.get(server);
    if (!entry || this.disposed) throw new Error(`MCP server '${server}' is no longer configured; the call was not made.`);
    // Unset: no per-call limit (DeerFlow's default); config.ts keeps it off http/sse servers.
    const timeoutS = entry.def.toolCallTimeoutS;
    let connection: McpConnection;
    try {
      connection = await this.sessionFor(entry, threadId, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new Error(`MCP server '${server}' is not available: ${errorMessage(err)}. The tool '${tool}' was not called.`, { cause: err });
    }
    try {
      return await connection.callTool(tool, args, { ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}), ...(signal ? { signal } : {}) });
    } catch (err) {
      if (!(err instanceof McpCallError)) throw err;
      if (err.kind === "timeout") throw new Error(`MCP tool '${tool}' on server '${server}' gave ${err.message}; the call was cancelled.`, { cause: err });
      if (err.kind === "protocol") throw new Error(`MCP tool '${tool}' on server '${server}' failed: ${err.message}`, { cause: err });
      throw new Error(`MCP server '${server}' is not available: ${err.message}. The call to '${tool}' did not complete.`, { cause: err });
    }
  }

  private async stopEntry(entry: Entry): Promise<void> {
    const conns = [...entry.sessions.values()].map((s) => s.connection);
    if (entry.spare) conns.push(entry.spare);
    entry.sessions.clear();
    entry.spare = undefined;
    await entry.discovery?.catch(() => undefined);
    if (entry.spare) conns.push(entry.spare);
    entry.spare = undefined;
    await Promise.allSettled(conns.map((c) => c.close()));
    if (conns.length > 0) this.o.logs.append(entry.def.name, "[deerflow] stopped");
  }

  private setState(entry: Entry, state: McpServerState, reason?: string): void {
    entry.state = state;
    if (reason === undefined) delete entry.reason;
    else entry.reason = reason;
    if (state !== "ready") entry.tools = state === "error" ? entry.tools : [];
    const view = this.viewOf(entry);
    for (const l of this.listeners) l(view);
  }

  /** For the user (status, `mcp list`): the reason and the server's last stderr lines. */
  private withTail(server: string, reason: string): string {
    const tail = this.o.logs.tail(server, 3).filter((l) => !l.startsWith("[deerflow]"));
    return tail.length > 0 ? `${reason} — last output: ${tail.join(" | ")}` : reason;
  }

  private view(): McpListView {
    return {
      servers: [...this.entries.values()].map((e) => this.viewOf(e)),
      diagnostics: this.diagnostics.map((d) => ({ file: d.file, ...(d.server ? { server: d.server } : {}), message: d.message })),
      notes: [...(this.o.notes ?? [])],
      tool_search: { enabled: false, reason: "decided per run (tool_search.enabled, or more MCP tools than tool_search.auto_threshold)" },
    };
  }

  viewOf(entry: Entry): McpServerView {
    const d = entry.def;
    const where = d.launch.type === "stdio" ? this.where : "remote";
    const ctxSecrets = this.o.context().secrets;
    return {
      name: d.name,
      description: d.description,
      source: { file: d.source.file, label: d.source.label, scope: d.source.scope, format: d.source.format },
      state: entry.state,
      ...(entry.reason ? { reason: entry.reason } : {}),
      ...(entry.state === "needs_approval" ? { changed: entry.changed ?? false } : {}),
      fingerprint: entry.consent.fingerprint,
      transport: d.launch.type,
      where,
      launch: d.launch.type === "stdio" ? [d.launch.command, ...d.launch.args].join(" ") : d.launch.url,
      approval_text: describeLaunch(d, this.where, entry.consent.files),
      tools: (entry.state === "ready" ? entry.tools : []).map((t) => ({
        name: modelToolName(d.name, t.name, d.toolNamePrefix),
        tool: t.name,
        description: (t.description ?? "").slice(0, 500),
        ...(t.annotations ? { annotations: annotationsOf(t) } : {}),
      })),
      ...(d.inputs.length > 0
        ? { inputs: d.inputs.map((i) => ({ key: i.key, id: i.id, ...(i.description ? { description: i.description } : {}), set: ctxSecrets(i.key) !== undefined })) }
        : {}),
      log_file: this.o.logs.path(d.name),
    };
  }
}

export class McpConfigChanged extends Error {
  constructor(
    readonly def: McpServerDefinition,
    fingerprint: string,
  ) {
    super(`MCP server '${def.name}' changed after it was shown (fingerprint ${fingerprint.slice(0, 16)}): nothing was approved. Review it again.`);
    this.name = "McpConfigChanged";
  }
}

function isStartable(s: McpServerState): boolean {
  return s === "stopped" || s === "error";
}

function isLive(s: McpServerState): boolean {
  return s === "starting" || s === "ready";
}

function annotationsOf(t: Tool): McpToolInfo["annotations"] {
  const a = t.annotations ?? {};
  return {
    ...(a.title ? { title: a.title } : {}),
    ...(a.readOnlyHint !== undefined ? { readOnlyHint: a.readOnlyHint } : {}),
    ...(a.destructiveHint !== undefined ? { destructiveHint: a.destructiveHint } : {}),
    ...(a.idempotentHint !== undefined ? { idempotentHint: a.idempotentHint } : {}),
    ...(a.openWorldHint !== undefined ? { openWorldHint: a.openWorldHint } : {}),
  };
}

function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
