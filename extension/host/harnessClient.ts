/**
 * The harness process, supervised: `node dist/server.js --stdio` behind vscode-languageclient.
 *
 * Why a language client when there is no language: it gives us a JSON-RPC link with
 * cancellation, a process we can kill, and a restart path that re-registers notification
 * handlers. We use custom requests only (`documentSelector: []`), typed by extension/protocol/rpc.ts.
 *
 * Lifecycle, per generation of the process: LSP `initialize` (the client) → `harness/initialize`
 * (dataDir, settings) → `harness/configure` (settings + API keys) → `ready`. Requests wait for
 * `ready`, so a caller never races a restart. When the process dies, `closed()` backs off and
 * asks the client to restart; `onDidStart` then fires again and owners of per-process state
 * (the panel's event subscription) re-create it.
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
} from "vscode-languageclient/node.js";
import type {
  HarnessSettings,
  HarnessToHost,
  HarnessToHostRequests,
  HostRequest,
  HostToHarnessNotifications,
  RequestParams,
  RequestResult,
  RpcErrorData,
} from "../protocol/rpc.js";

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
}

/** Crashes within this window count towards giving up. */
const CRASH_WINDOW_MS = 180_000;
const MAX_CRASHES = 5;

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
  settled: boolean;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (v) => {
      d.settled = true;
      resolve(v);
    },
    reject: (e) => {
      d.settled = true;
      reject(e);
    },
  };
  // A generation nobody waited for must not become an unhandled rejection.
  promise.catch(() => undefined);
  return d;
}

export class HarnessClient implements vscode.Disposable {
  private readonly client: LanguageClient;
  private ready = deferred<HarnessStart>();
  private generation = 0;
  private crashes: number[] = [];
  private disposed = false;
  private current: HarnessStart | undefined;
  private readonly started = new vscode.EventEmitter<HarnessStart>();
  private readonly configured = new vscode.EventEmitter<HarnessConfigured>();
  private readonly failed = new vscode.EventEmitter<string>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly listeners = new Map<string, Set<(params: never) => void>>();
  /** Fires after every (re)start, once the harness is initialized and configured. */
  readonly onDidStart = this.started.event;
  /** Fires after every successful `harness/configure`. */
  readonly onDidConfigure = this.configured.event;
  /** Fires with a message when the harness could not be started (and will not be retried). */
  readonly onDidFail = this.failed.event;

  constructor(private readonly options: HarnessClientOptions) {
    const serverOptions: ServerOptions = {
      // The extension host's own Node (in desktop VS Code that is Electron, hence
      // ELECTRON_RUN_AS_NODE). The environment passes through: OPENAI_BASE_URL/OPENAI_API_KEY/
      // OPENAI_MODEL are the harness's defaults when no models are configured.
      command: process.execPath,
      args: [options.serverModule, "--stdio"],
      options: { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: options.log,
      // Protocol tracing would print harness/configure's params, which carry the API keys.
      // Whatever `deerflow.trace.server` says, traces go nowhere.
      traceOutputChannel: nullOutputChannel(),
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.onClosed(),
      },
      initializationFailedHandler: (error) => {
        options.log.error(`DeerFlow harness failed to initialize: ${String(error)}`);
        return false;
      },
    };
    this.client = new LanguageClient("deerflowHarness", "DeerFlow Harness", serverOptions, clientOptions);
    this.subscriptions.push(
      this.started,
      this.configured,
      this.failed,
      this.client.onDidChangeState((e) => {
        if (e.newState === State.Running) void this.initializeGeneration();
        else if (e.newState === State.Starting) this.nextGeneration();
        else this.current = undefined;
      }),
    );
  }

  /** Starts the process; resolves when the harness is initialized and configured. */
  async start(): Promise<HarnessStart> {
    try {
      await this.client.start();
    } catch (err) {
      const message = `The DeerFlow harness did not start: ${errorText(err)}`;
      const error = new Error(message, { cause: err });
      this.ready.reject(error);
      this.failed.fire(message);
      throw error;
    }
    return this.ready.promise;
  }

  /** The running process, if any (tests kill it by pid). */
  get process(): HarnessStart | undefined {
    return this.current;
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
   * this fans out to any number of listeners; handlers survive restarts.
   */
  onNotification<K extends keyof HarnessToHost>(method: K, handler: (params: HarnessToHost[K]) => void): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) {
      const listeners = new Set<(params: never) => void>();
      set = listeners;
      this.listeners.set(method, listeners);
      this.subscriptions.push(
        this.client.onNotification(method, (params: HarnessToHost[K]) => {
          for (const l of [...listeners]) {
            try {
              (l as (p: HarnessToHost[K]) => void)(params);
            } catch (err) {
              this.options.log.error(`Handling ${method}: ${errorText(err)}`);
            }
          }
        }),
      );
    }
    const listener = handler as (params: never) => void;
    set.add(listener);
    return new vscode.Disposable(() => set.delete(listener));
  }

  /**
   * Answers a harness → host request (vscode.lm model calls, issue 25). The language client keeps
   * the handler across restarts; the token is cancelled when the harness cancels the request.
   */
  onRequest<K extends keyof HarnessToHostRequests>(
    method: K,
    handler: (params: HarnessToHostRequests[K]["params"], token: vscode.CancellationToken) => Promise<HarnessToHostRequests[K]["result"]>,
  ): vscode.Disposable {
    const d = this.client.onRequest(method, handler);
    this.subscriptions.push(d);
    return d;
  }

  /** A host → harness notification; dropped when no harness runs (its request is gone with it). */
  notify<K extends keyof HostToHarnessNotifications>(method: K, params: HostToHarnessNotifications[K]): void {
    if (this.client.state !== State.Running) return;
    this.client.sendNotification(method, params).catch((err: unknown) => this.options.log.warn(`Sending ${method}: ${errorText(err)}`));
  }

  /** Pushes current settings and keys (after a settings change or a new API key). */
  async configure(): Promise<void> {
    await this.ready.promise;
    await this.pushConfiguration();
  }

  /** Stop and start again (the Restart Harness command); crash history is forgotten. */
  async restart(): Promise<HarnessStart> {
    this.crashes = [];
    if (this.client.state === State.Stopped || this.client.state === State.Starting) return this.start();
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
   * Shutting it down here would interrupt them.
   */
  leaveRunning(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.subscriptions.splice(0)) d.dispose();
    this.options.log.info(`Leaving the harness (pid ${this.current?.pid ?? "?"}) to finish its runs.`);
  }

  async stop(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.subscriptions.splice(0)) d.dispose();
    try {
      if (this.client.state !== State.Stopped) await this.client.stop(2000);
    } catch (err) {
      this.options.log.warn(`Stopping the harness: ${errorText(err)}`);
    }
  }

  /** Requests made from now on wait for the next process's initialization. */
  private nextGeneration(): void {
    if (this.ready.settled) this.ready = deferred<HarnessStart>();
  }

  private async send<M extends HostRequest>(method: M, params: RequestParams<M>, token?: vscode.CancellationToken): Promise<RequestResult<M>> {
    try {
      return await this.client.sendRequest<RequestResult<M>>(method, params, token);
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
    try {
      const { settings } = await this.options.configuration();
      const init = await this.send("harness/initialize", { dataDir: this.options.dataDir, settings });
      await this.pushConfiguration();
      this.generation += 1;
      this.current = { pid: init.pid, version: init.version, generation: this.generation };
      this.options.log.info(`Harness ${init.version} ready (pid ${init.pid}, start #${this.generation}).`);
      ready.resolve(this.current);
      this.started.fire(this.current);
    } catch (err) {
      const message = `The DeerFlow harness did not initialize: ${errorText(err)}`;
      this.options.log.error(message);
      ready.reject(new Error(message));
      this.failed.fire(message);
    }
  }

  /** The process is gone. Back off (0.5 s, 1 s, 2 s … 8 s) and restart, unless it keeps dying. */
  private async onClosed(): Promise<CloseHandlerResult> {
    this.current = undefined;
    this.nextGeneration();
    if (this.disposed) return { action: CloseAction.DoNotRestart, handled: true };
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

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An output channel that drops everything (see traceOutputChannel above). */
function nullOutputChannel(): vscode.OutputChannel {
  const noop = (): void => undefined;
  return {
    name: "DeerFlow Harness (trace off)",
    append: noop,
    appendLine: noop,
    replace: noop,
    clear: noop,
    show: noop,
    hide: noop,
    dispose: noop,
  };
}
