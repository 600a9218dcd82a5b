/**
 * The harness, supervised: `node dist/server.js --stdio` behind vscode-languageclient, or a
 * remote `deerflow serve` over its `/rpc` WebSocket when `deerflow.harness.url` is set (issue 26
 * item 4; remote/). Both speak the same JSON-RPC with the same framing.
 *
 * Why a language client when there is no language: it gives us a JSON-RPC link with
 * cancellation, a process we can kill, and a restart path that re-registers notification
 * handlers. We use custom requests only (`documentSelector: []`), typed by extension/protocol/rpc.ts.
 *
 * Lifecycle, per generation of the process (or connection): LSP `initialize` (the client) →
 * `harness/initialize` (dataDir, settings) → `harness/configure` (settings + API keys; not sent
 * to a remote harness, which keeps its own models and keys: the user's keys never leave this
 * machine) → `ready`. Requests wait for `ready`, so a caller never races a restart. When the
 * process dies (the socket closes), `closed()` backs off and restarts (reconnects); `onDidStart`
 * then fires again and owners of per-process state (the panel's event subscription) re-create it.
 *
 * A remote harness names its own folders: every request's `workspaceFolder` and every path in
 * answers and notifications goes through the WorkspaceMap (remote/workspaceMap.ts, rewrite.ts),
 * so the rest of the host only ever sees this window's folders.
 */
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  ResponseError,
  State,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
  type StreamInfo,
} from "vscode-languageclient/node.js";
import type {
  HarnessSettings,
  HarnessToHost,
  HarnessToHostRequests,
  HostRequest,
  HostToHarnessNotifications,
  RemoteHarnessInfo,
  RequestParams,
  RequestResult,
  RpcErrorData,
} from "../protocol/rpc.js";
import type { Connected } from "./remote/connect.js";
import { RemoteLink, type LinkState, type RemoteTarget } from "./remote/link.js";
import { toLocalNotification, toLocalResult, toServerParams } from "./remote/rewrite.js";
import { uploadAttachments } from "./remote/attachments.js";
import { mapFolders, type WorkspaceMap } from "./remote/workspaceMap.js";
import { deferred, nullOutputChannel, type HarnessSource } from "./harnessSupport.js";
/** A request the harness answered with an error; `code` is the harness's stable error code. */
export class HarnessRequestError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "HarnessRequestError";
  }
}

export interface HarnessStart {
  pid: number;
  version: string;
  /** 1 for the first process, +1 per restart. */
  generation: number;
}

export interface HarnessConfigured {
  settings: HarnessSettings;
  /** Which keys the harness holds now (removed ones are sent as ""); never their values. */
  apiKeyNames: string[];
}

export interface HarnessClientOptions {
  /** Absolute path of dist/server.js. */
  serverModule: string;
  /** The extension's global storage: the harness's database lives here, never in the workspace. */
  dataDir: string;
  log: vscode.LogOutputChannel;
  /** Current settings and API keys; read afresh for every (re)start and configure. */
  configuration: () => Promise<{ settings: HarnessSettings; apiKeys: Record<string, string> }>;
  /** Where the harness is: undefined = the local process; read afresh for every start and retarget. */
  target?: () => Promise<RemoteTarget | undefined>;
  /** This window's folders, for the remote workspace mapping. */
  localFolders?: () => readonly string[];
}

/** What this window is connected to; the status bar and the log show it (never the token). */
export type HarnessConnection = { kind: "local" } | ({ kind: "remote"; shown: string } & LinkState);

/** A connected remote harness: what it serves, and how this window's folders map onto it. */
export interface RemoteHarness {
  url: string;
  shown: string;
  info: RemoteHarnessInfo;
  map: WorkspaceMap;
}

/** Crashes within this window count towards giving up. */
const CRASH_WINDOW_MS = 180_000;
const MAX_CRASHES = 5;

export class HarnessClient implements vscode.Disposable {
  private client: LanguageClient;
  private ready = deferred<HarnessStart>();
  private generation = 0;
  private crashes: number[] = [];
  private disposed = false;
  private current: HarnessStart | undefined;
  /** The remote target the current client speaks to (undefined: the local process). */
  private link: RemoteLink | undefined;
  /** Aborts the current target's connection attempts (a retarget, stop). */
  private linkAbort = new AbortController();
  /** The socket the next start of the remote client takes (opened by `link` beforehand). */
  private pendingSocket: Connected | undefined;
  private openSocket: Connected | undefined;
  private remoteState: RemoteHarness | undefined;
  private connectionState: HarnessConnection = { kind: "local" };
  private readonly started = new vscode.EventEmitter<HarnessStart>();
  private readonly configured = new vscode.EventEmitter<HarnessConfigured>();
  private readonly failed = new vscode.EventEmitter<string>();
  private readonly connection = new vscode.EventEmitter<HarnessConnection>();
  private readonly retargeted = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Per-client registrations (notification fan-outs, request handlers, the state listener). */
  private clientSubscriptions: vscode.Disposable[] = [];
  private readonly listeners = new Map<string, Set<(params: never) => void>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  /** Fires after every (re)start, once the harness is initialized and configured. */
  readonly onDidStart = this.started.event;
  /** Fires after every successful `harness/configure`. */
  readonly onDidConfigure = this.configured.event;
  /** Fires with a message when the harness could not be started (and will not be retried). */
  readonly onDidFail = this.failed.event;
  /** Fires when the connection to a remote harness changes (connecting, connected, unreachable, refused). */
  readonly onDidChangeConnection = this.connection.event;
  /** Fires when the client moved to another harness (local ↔ remote, another URL or token): whatever was shown came from the old one. */
  readonly onDidRetarget = this.retargeted.event;

  constructor(private readonly options: HarnessClientOptions) {
    this.subscriptions.push(this.started, this.configured, this.failed, this.connection, this.retargeted);
    this.client = this.createClient(undefined);
  }

  /** Starts the process (connects); resolves when the harness is initialized and configured. */
  async start(): Promise<HarnessStart> {
    let client = this.client;
    let signal = this.linkAbort.signal;
    try {
      const target = await this.options.target?.();
      if (!sameRemote(this.link?.target, target)) this.switchTo(target);
      client = this.client;
      signal = this.linkAbort.signal;
      if (this.link) this.pendingSocket = await this.link.connect(signal);
      if (client !== this.client || this.disposed) return await this.ready.promise;
      await client.start();
    } catch (err) {
      // Let go for another target (retarget, restart) or for good: the next start settles `ready`.
      if (client !== this.client || this.disposed || signal.aborted) return this.ready.promise;
      const message = this.link ? errorText(err) : `The DeerFlow harness did not start: ${errorText(err)}`;
      const error = new Error(message, { cause: err });
      this.ready.reject(error);
      this.failed.fire(message);
      throw error;
    }
    return this.ready.promise;
  }

  /** The running process, if any (tests kill it by pid; for a remote harness, the server's). */
  get process(): HarnessStart | undefined {
    return this.current;
  }

  /** The remote harness this window is connected to, once initialized; undefined for the local one. */
  get remote(): RemoteHarness | undefined {
    return this.remoteState;
  }

  /** Local or remote (and how the connection is): what the status bar shows. */
  get connectionStatus(): HarnessConnection {
    return this.connectionState;
  }

  /**
   * The settings or the token may name another harness now: when they do, the current one is let
   * go and the client starts on the new target (a new generation: subscriptions re-create).
   */
  retarget(): Promise<void> {
    // One at a time: a token command and the SecretStorage change event both ask.
    const next = this.retargeting.then(() => this.retargetNow());
    this.retargeting = next.catch(() => undefined);
    return next;
  }

  private retargeting: Promise<void> = Promise.resolve();

  private async retargetNow(): Promise<void> {
    if (this.disposed) return;
    let target: RemoteTarget | undefined;
    try {
      target = await this.options.target?.();
    } catch (err) {
      // An unusable URL: say so (start() does) rather than silently stay on the old harness.
      await this.stopClient();
      this.switchTo(undefined);
      this.ready.reject(err);
      this.failed.fire(errorText(err));
      this.retargeted.fire();
      return;
    }
    if (sameRemote(this.link?.target, target)) return;
    await this.stopClient();
    this.switchTo(target);
    this.retargeted.fire();
    await this.start().catch(() => undefined);
  }

  /** The window's folders changed: map them onto the remote harness's workspaces again. */
  remapFolders(): void {
    if (this.remoteState) this.remoteState = { ...this.remoteState, map: this.buildMap(this.remoteState.info, this.remoteState.shown) };
  }

  async request<M extends HostRequest>(method: M, params: RequestParams<M>, token?: vscode.CancellationToken): Promise<RequestResult<M>> {
    if (this.client.state === State.Stopped && this.ready.settled) {
      // Given up (or never started): fail now rather than wait for a process that is not coming.
      await this.ready.promise;
      throw new Error("The DeerFlow harness is not running. Run DeerFlow: Restart Harness.");
    }
    await this.ready.promise;
    return this.send(method, params, token);
  }

  /**
   * Listens to a harness notification. The language client keeps one handler per method, so
   * this fans out to any number of listeners; handlers survive restarts and retargets.
   */
  onNotification<K extends keyof HarnessToHost>(method: K, handler: (params: HarnessToHost[K]) => void): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) {
      set = new Set<(params: never) => void>();
      this.listeners.set(method, set);
      this.clientSubscriptions.push(this.fanOut(this.client, method, set));
    }
    const listener = handler as (params: never) => void;
    const listeners = set;
    listeners.add(listener);
    return new vscode.Disposable(() => listeners.delete(listener));
  }

  /**
   * Answers a harness → host request (vscode.lm model calls, issue 25). The language client keeps
   * the handler across restarts; the token is cancelled when the harness cancels the request.
   * `source` is the connection the request came on (each client is bound to its own target), so a
   * handler can refuse what a remote harness may not ask for (lm/share.ts).
   */
  onRequest<K extends keyof HarnessToHostRequests>(
    method: K,
    handler: (params: HarnessToHostRequests[K]["params"], token: vscode.CancellationToken, source: HarnessSource) => Promise<HarnessToHostRequests[K]["result"]>,
  ): vscode.Disposable {
    const bound = handler as RequestHandler;
    this.requestHandlers.set(method, bound);
    const d = this.client.onRequest(method, bindSource(bound, this.link?.target));
    this.clientSubscriptions.push(d);
    return new vscode.Disposable(() => {
      this.requestHandlers.delete(method);
      d.dispose();
    });
  }

  /** A host → harness notification; dropped when no harness runs (its request is gone with it). */
  notify<K extends keyof HostToHarnessNotifications>(method: K, params: HostToHarnessNotifications[K]): void {
    if (this.client.state !== State.Running) return;
    this.client.sendNotification(method, params).catch((err: unknown) => this.options.log.warn(`Sending ${method}: ${errorText(err)}`));
  }

  /** Pushes current settings and keys (after a settings change or a new API key); a remote harness keeps its own. */
  async configure(): Promise<void> {
    await this.ready.promise;
    if (this.link) return;
    await this.pushConfiguration();
  }

  /** Stop and start again (the Restart Harness command; a reconnect for a remote one); crash history is forgotten. */
  async restart(): Promise<HarnessStart> {
    this.crashes = [];
    if (this.link || this.client.state === State.Stopped || this.client.state === State.Starting) {
      await this.stopClient();
      this.switchTo(await this.options.target?.());
      return this.start();
    }
    await this.client.restart();
    return this.ready.promise;
  }

  dispose(): void {
    void this.stop();
  }

  /**
   * This extension host is going away (window reload or close) while runs are in flight: leave
   * the process be instead of shutting it down. It sees its stdin close when this host exits
   * and finishes those runs; the next window's harness follows them through the database.
   * Shutting it down here would interrupt them. A remote harness runs them whether or not a
   * window is connected: nothing here to leave running, the socket just closes.
   */
  leaveRunning(): void {
    if (this.disposed) return;
    if (this.link) {
      void this.stop();
      return;
    }
    this.disposed = true;
    this.disposeAll();
    this.options.log.info(`Leaving the harness (pid ${this.current?.pid ?? "?"}) to finish its runs.`);
  }

  async stop(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.linkAbort.abort();
    this.disposeAll();
    await this.stopClient();
  }

  private disposeAll(): void {
    for (const d of this.clientSubscriptions.splice(0)) d.dispose();
    for (const d of this.subscriptions.splice(0)) d.dispose();
  }

  private async stopClient(): Promise<void> {
    this.linkAbort.abort();
    try {
      if (this.client.state !== State.Stopped) await this.client.stop(2000);
    } catch (err) {
      this.options.log.warn(`Stopping the harness: ${errorText(err)}`);
    }
    this.openSocket?.socket.terminate();
    this.openSocket = undefined;
  }

  /** A new language client for `target` (the current one is stopped); listeners move over. */
  private switchTo(target: RemoteTarget | undefined): void {
    for (const d of this.clientSubscriptions.splice(0)) d.dispose();
    this.linkAbort = new AbortController();
    this.pendingSocket?.socket.terminate();
    this.pendingSocket = undefined;
    this.remoteState = undefined;
    this.current = undefined;
    this.nextGeneration();
    this.client = this.createClient(target);
    for (const [method, set] of this.listeners) this.clientSubscriptions.push(this.fanOut(this.client, method, set));
    for (const [method, handler] of this.requestHandlers) this.clientSubscriptions.push(this.client.onRequest(method, bindSource(handler, target)));
  }

  private createClient(target: RemoteTarget | undefined): LanguageClient {
    this.link = target ? new RemoteLink(target, (s) => this.linkState(target, s)) : undefined;
    this.setConnection(target ? { kind: "remote", shown: target.shown, state: "connecting" } : { kind: "local" });
    const serverOptions: ServerOptions = target
      ? () => this.takeSocket()
      : {
          // The extension host's own Node (in desktop VS Code that is Electron, hence
          // ELECTRON_RUN_AS_NODE). The environment passes through: OPENAI_BASE_URL/OPENAI_API_KEY/
          // OPENAI_MODEL are the harness's defaults when no models are configured.
          command: process.execPath,
          args: [this.options.serverModule, "--stdio"],
          options: { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } },
        };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.options.log,
      // Protocol tracing would print harness/configure's params, which carry the API keys.
      // Whatever `deerflow.trace.server` says, traces go nowhere.
      traceOutputChannel: nullOutputChannel(),
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => (client === this.client ? this.onClosed() : { action: CloseAction.DoNotRestart, handled: true }),
      },
      initializationFailedHandler: (error) => {
        this.options.log.error(`DeerFlow harness failed to initialize: ${String(error)}`);
        return false;
      },
    };
    const client = new LanguageClient("deerflowHarness", target ? `DeerFlow Harness (${target.shown})` : "DeerFlow Harness", serverOptions, clientOptions);
    this.clientSubscriptions.push(
      client.onDidChangeState((e) => {
        if (client !== this.client) return;
        if (e.newState === State.Running) void this.initializeGeneration();
        else if (e.newState === State.Starting) this.nextGeneration();
        else this.current = undefined;
      }),
    );
    return client;
  }

  /** The remote client's server: the socket `link` opened for this start (or one opened now). */
  private async takeSocket(): Promise<StreamInfo> {
    const link = this.link;
    if (!link) throw new Error("No remote harness is configured.");
    const socket = this.pendingSocket ?? (await link.connect(this.linkAbort.signal));
    this.pendingSocket = undefined;
    this.openSocket = socket;
    return { reader: socket.stream, writer: socket.stream };
  }

  private linkState(target: RemoteTarget, s: LinkState): void {
    if (this.link?.target !== target) return;
    if (s.state === "unreachable") {
      // Said once per outage in a toast (extension.ts), every attempt in the log.
      this.options.log.warn(`${s.message} Retrying in ${s.retryMs / 1000} s (attempt ${s.attempt}).`);
    } else if (s.state === "unauthorized") {
      this.options.log.error(s.message);
    }
    this.setConnection({ kind: "remote", shown: target.shown, ...s });
  }

  private setConnection(c: HarnessConnection): void {
    this.connectionState = c;
    this.connection.fire(c);
  }

  private fanOut(client: LanguageClient, method: string, listeners: Set<(params: never) => void>): vscode.Disposable {
    return client.onNotification(method, (raw: HarnessToHost[keyof HarnessToHost]) => {
      const remote = this.remoteState;
      const params = (remote ? toLocalNotification(method as keyof HarnessToHost, raw, remote.map) : raw) as never;
      for (const l of [...listeners]) {
        try {
          l(params);
        } catch (err) {
          this.options.log.error(`Handling ${method}: ${errorText(err)}`);
        }
      }
    });
  }

  /** Requests made from now on wait for the next process's initialization. */
  private nextGeneration(): void {
    if (this.ready.settled) this.ready = deferred<HarnessStart>();
  }

  private async send<M extends HostRequest>(method: M, params: RequestParams<M>, token?: vscode.CancellationToken): Promise<RequestResult<M>> {
    const remote = this.remoteState;
    let sent = params;
    if (remote) {
      try {
        if (method === "runs/start") {
          // Attachments go as bytes: a remote harness never reads a path this window names.
          sent = await uploadAttachments(params as RequestParams<"runs/start">, (p) => this.send("uploads/put", p, token));
        }
        sent = toServerParams(method, sent, remote.map);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        throw new HarnessRequestError(method, typeof code === "string" ? code : "usage", errorText(err));
      }
    }
    try {
      const result = await this.client.sendRequest<RequestResult<M>>(method, sent, token);
      return remote ? toLocalResult(method, result, remote.map) : result;
    } catch (err) {
      if (err instanceof ResponseError) {
        const data = err.data as Partial<RpcErrorData> | undefined;
        throw new HarnessRequestError(method, typeof data?.code === "string" ? data.code : String(err.code), err.message);
      }
      throw err;
    }
  }

  private async pushConfiguration(): Promise<void> {
    const { settings, apiKeys } = await this.options.configuration();
    await this.send("harness/configure", { settings, apiKeys });
    this.configured.fire({ settings, apiKeyNames: Object.keys(apiKeys).filter((k) => apiKeys[k] !== "").sort() });
  }

  private async initializeGeneration(): Promise<void> {
    const ready = this.ready;
    const link = this.link;
    try {
      const { settings } = await this.options.configuration();
      // A remote harness ignores dataDir and settings (it has its own); its answer says what it serves.
      // It is not told this machine's model endpoints.
      const init = await this.send("harness/initialize", { dataDir: this.options.dataDir, settings: link ? { ...settings, models: [] } : settings });
      if (link) {
        if (!init.remote) throw new Error(`${link.target.shown} answered as a local harness, not as deerflow serve (no list of served workspaces).`);
        this.remoteState = { url: link.target.url, shown: link.target.shown, info: init.remote, map: this.buildMap(init.remote, link.target.shown) };
        const served = init.remote.workspaces.map((w) => `${w.name} (${w.folder})`).join(", ") || "none";
        const mapped = this.remoteState.map.mappings.map((m) => `${m.local} → ${m.server}${m.shared ? " (shared)" : " (downloads)"}`).join(", ") || "none of this window's folders";
        this.options.log.info(`Remote harness ${link.target.shown}: serves ${served}; maps ${mapped}.`);
      } else {
        await this.pushConfiguration();
      }
      this.generation += 1;
      this.current = { pid: init.pid, version: init.version, generation: this.generation };
      this.options.log.info(
        link
          ? `Remote harness ${init.version} ready at ${link.target.shown} (server pid ${init.pid}, connection #${this.generation}).`
          : `Harness ${init.version} ready (pid ${init.pid}, start #${this.generation}).`,
      );
      ready.resolve(this.current);
      this.started.fire(this.current);
    } catch (err) {
      const message = `The DeerFlow harness did not initialize: ${errorText(err)}`;
      this.options.log.error(message);
      ready.reject(new Error(message));
      this.failed.fire(message);
    }
  }

  private buildMap(info: RemoteHarnessInfo, shown: string): WorkspaceMap {
    return mapFolders(this.options.localFolders?.() ?? [], info, shown);
  }

  /**
   * The process is gone (the socket closed). Back off (0.5 s, 1 s, 2 s … 8 s) and restart, unless
   * it keeps dying. A remote harness is reconnected for as long as it is the target (its link
   * backs off on its own; a server restart or a network hiccup is not a crash), unless it now
   * refuses the token.
   */
  private async onClosed(): Promise<CloseHandlerResult> {
    this.current = undefined;
    this.remoteState = undefined;
    this.openSocket = undefined;
    this.nextGeneration();
    if (this.disposed) return { action: CloseAction.DoNotRestart, handled: true };
    const link = this.link;
    if (link) {
      this.options.log.warn(`The connection to the remote harness at ${link.target.shown} closed; reconnecting.`);
      const client = this.client;
      const signal = this.linkAbort.signal;
      try {
        this.pendingSocket = await link.connect(signal);
      } catch (err) {
        if (client === this.client && !this.disposed && !signal.aborted) {
          this.ready.reject(new Error(errorText(err)));
          this.failed.fire(errorText(err));
        }
        return { action: CloseAction.DoNotRestart, handled: true };
      }
      return { action: client === this.client && !this.disposed ? CloseAction.Restart : CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length > MAX_CRASHES) {
      const message = `The DeerFlow harness stopped ${this.crashes.length} times in ${CRASH_WINDOW_MS / 60_000} minutes and will not be restarted. See DeerFlow: Show Logs, then DeerFlow: Restart Harness.`;
      this.ready.reject(new Error(message));
      this.failed.fire(message);
      return { action: CloseAction.DoNotRestart, handled: true, message };
    }
    const delay = Math.min(500 * 2 ** (this.crashes.length - 1), 8000);
    this.options.log.warn(`The harness process exited; restarting in ${delay} ms.`);
    await new Promise((r) => setTimeout(r, delay));
    return { action: this.disposed ? CloseAction.DoNotRestart : CloseAction.Restart, handled: true };
  }
}

type RequestHandler = (params: never, token: vscode.CancellationToken, source: HarnessSource) => Promise<unknown>;

/** The handler as one client registers it: told the target of THAT client, whatever the window targets by the time it runs. */
function bindSource(handler: RequestHandler, target: RemoteTarget | undefined): (params: never, token: vscode.CancellationToken) => Promise<unknown> {
  const source: HarnessSource = target ? { kind: "remote", url: target.url, shown: target.shown } : { kind: "local" };
  return (params, token) => handler(params, token, source);
}

function sameRemote(a: RemoteTarget | undefined, b: RemoteTarget | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.url === b.url && a.token === b.token;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
