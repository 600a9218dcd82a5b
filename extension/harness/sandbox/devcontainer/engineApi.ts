/**
 * A minimal Docker Engine API client, with node:http(s) and nothing else: over the unix socket,
 * or TCP (with TLS) when DOCKER_HOST names a remote engine (./engineEndpoint.ts).
 *
 * Why not dockerode: we use six endpoints (ping, container list/inspect/stop/remove, exec
 * create/start/inspect); dockerode 4+ drags in ssh2 (with an optional native build), grpc and
 * protobufjs for features we never call, and its exec stream has no AbortSignal. Plain HTTP keeps
 * every timeout and abort in our hands, which is what "nothing hung" needs.
 *
 * Paths are unversioned on purpose: the engine then serves its own current API version. Our
 * request and response fields are stable since API 1.25, while newer engines (Docker 29) refuse
 * the old version prefixes a pinned client would send.
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { Agent as TlsAgent, request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { HarnessError } from "../../errors.js";
import { asError } from "./errors.js";
import { describeEndpoint, engineEndpoint, unixEndpoint, type EngineEndpoint } from "./engineEndpoint.js";

/** How long a plain API call (not an exec stream) may take before the engine counts as hung. */
const API_CALL_TIMEOUT_MS = 30_000;
/** Removing a container deletes its writable layer: on the vfs driver or a busy disk, a full copy of the image. */
const REMOVE_TIMEOUT_MS = 180_000;
const PING_TIMEOUT_MS = 5_000;

export class EngineHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = "EngineHttpError";
  }
}

export interface ExecCreateOptions {
  readonly cmd: readonly string[];
  readonly user?: string;
  readonly workingDir?: string;
  readonly env?: readonly string[];
  /** Keep the exec's stdin open for startExecAttached (an MCP server's stdio). */
  readonly attachStdin?: boolean;
}

export interface ExecInspect {
  readonly Running: boolean;
  readonly ExitCode: number | null;
  readonly Pid: number;
}

export interface ContainerSummary {
  readonly Id: string;
  readonly State: string;
  readonly Labels: Readonly<Record<string, string>>;
}

export interface ContainerMount {
  readonly Type: string;
  readonly Source: string;
  readonly Destination: string;
  readonly RW: boolean;
}

export interface ContainerInspect {
  readonly Id: string;
  readonly State: { readonly Running: boolean; readonly Status: string; readonly ExitCode: number };
  readonly Config: { readonly Env: readonly string[] | null; readonly Labels?: Readonly<Record<string, string>> | null };
  readonly Mounts?: readonly ContainerMount[] | null;
}

/** The engine the environment names (DOCKER_HOST, DOCKER_CONTEXT, …; ./engineEndpoint.ts). */
export function defaultEngine(env: NodeJS.ProcessEnv = process.env): EngineEndpoint {
  return engineEndpoint(env);
}

export class EngineApi {
  readonly endpoint: EngineEndpoint;
  /** Keep-alive for the short calls: an exec costs three of them, a new connection each adds up. */
  private readonly agent: Agent;

  constructor(endpoint: EngineEndpoint | string) {
    this.endpoint = typeof endpoint === "string" ? unixEndpoint(endpoint) : endpoint;
    const e = this.endpoint;
    this.agent =
      e.kind === "tcp" && e.tls
        ? new TlsAgent({ keepAlive: true, maxSockets: 16, ...tlsOptions(e.tls) })
        : new Agent({ keepAlive: true, maxSockets: 16 });
  }

  /** Where the engine is, as DOCKER_HOST names it (`unix:///var/run/docker.sock`, `tcp://host:2376`). */
  get url(): string {
    return this.endpoint.url;
  }

  /** Throws `sandbox_engine_unavailable` with a message a person can act on. */
  async ping(signal?: AbortSignal): Promise<void> {
    try {
      await this.call("GET", "/_ping", undefined, { timeoutMs: PING_TIMEOUT_MS, signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // call() already said which engine did not answer; an HTTP error answer is still not an engine.
      throw err instanceof HarnessError && err.code === "sandbox_engine_unavailable" ? err : this.unavailable(err);
    }
  }

  unavailable(err: unknown): HarnessError {
    const detail = err instanceof Error ? err.message : String(err);
    return new HarnessError(
      "sandbox_engine_unavailable",
      `No Docker engine answers at ${describeEndpoint(this.endpoint)} (${detail}). ` +
        "Start Docker there (or set DOCKER_HOST to one that runs), then run the command again; or use the local sandbox.",
      { cause: err },
    );
  }

  listContainers(labels: readonly string[], signal?: AbortSignal): Promise<ContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return this.json<ContainerSummary[]>("GET", `/containers/json?all=1&filters=${filters}`, undefined, signal);
  }

  inspectContainer(id: string, signal?: AbortSignal): Promise<ContainerInspect> {
    return this.json<ContainerInspect>("GET", `/containers/${encodeURIComponent(id)}/json`, undefined, signal);
  }

  /** Stopping a stopped container is fine (the engine answers 304). */
  async stopContainer(id: string, graceSeconds: number): Promise<void> {
    try {
      await this.call("POST", `/containers/${encodeURIComponent(id)}/stop?t=${graceSeconds}`, undefined, {
        timeoutMs: API_CALL_TIMEOUT_MS + graceSeconds * 1000,
      });
    } catch (err) {
      if (!(err instanceof EngineHttpError && err.statusCode === 304)) throw err;
    }
  }

  async removeContainer(id: string): Promise<void> {
    await this.call("DELETE", `/containers/${encodeURIComponent(id)}?force=1`, undefined, { timeoutMs: REMOVE_TIMEOUT_MS });
  }

  /**
   * True once the container is not running, false if it still runs after `withinMs`. The engine
   * records a container's death a little after the processes in it were killed, so "is it
   * running?" right after an exec lost its process needs this grace, not one inspect.
   */
  async waitNotRunning(id: string, withinMs: number): Promise<boolean> {
    try {
      await this.call("POST", `/containers/${encodeURIComponent(id)}/wait?condition=not-running`, undefined, {
        signal: AbortSignal.timeout(withinMs),
      });
      return true;
    } catch (err) {
      if (err instanceof EngineHttpError && err.statusCode === 404) return true;
      if (err instanceof HarnessError) throw err;
      return false;
    }
  }

  async createExec(containerId: string, options: ExecCreateOptions, signal?: AbortSignal): Promise<string> {
    const body = {
      Cmd: options.cmd,
      AttachStdin: options.attachStdin ?? false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      ...(options.user !== undefined ? { User: options.user } : {}),
      ...(options.workingDir !== undefined ? { WorkingDir: options.workingDir } : {}),
      ...(options.env !== undefined ? { Env: options.env } : {}),
    };
    const created = await this.json<{ Id: string }>(
      "POST",
      `/containers/${encodeURIComponent(containerId)}/exec`,
      body,
      signal,
    );
    return created.Id;
  }

  /**
   * Start an exec attached and return its multiplexed output stream. The engine hijacks the
   * connection, answers `200` without a length and closes it when the process's stdio closes,
   * so the body is read to the end of the connection (hence a fresh socket, never the pool).
   */
  startExec(execId: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const payload = JSON.stringify({ Detach: false, Tty: false });
      const req = this.request({
        path: `/exec/${encodeURIComponent(execId)}/start`,
        method: "POST",
        agent: false,
        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) },
      });
      req.once("error", (err) => reject(this.unavailable(err)));
      req.once("response", (res) => {
        if (res.statusCode !== 200) {
          void readBody(res).then(
            (text) => reject(new EngineHttpError(res.statusCode ?? 0, engineMessage(text))),
            reject,
          );
          return;
        }
        resolve(res);
      });
      req.end(payload);
    });
  }

  /**
   * Start an exec created with `attachStdin` and return the hijacked connection: writes are the
   * process's stdin (`end()` closes it), reads its multiplexed stdout/stderr. The engine upgrades
   * the connection (101) when asked, which is what lets us half-close it for stdin's EOF.
   */
  startExecAttached(execId: string, signal?: AbortSignal): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const payload = JSON.stringify({ Detach: false, Tty: false });
      const req = this.request({
        path: `/exec/${encodeURIComponent(execId)}/start`,
        method: "POST",
        agent: false,
        ...(signal ? { signal } : {}),
        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload), Connection: "Upgrade", Upgrade: "tcp" },
      });
      req.once("error", (err) => reject(signal?.aborted ? asError(signal.reason) : this.unavailable(err)));
      req.once("upgrade", (_res, socket, head) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      req.once("response", (res) => {
        void readBody(res).then((text) => reject(new EngineHttpError(res.statusCode ?? 0, engineMessage(text))), reject);
      });
      req.end(payload);
    });
  }

  inspectExec(execId: string, signal?: AbortSignal): Promise<ExecInspect> {
    return this.json<ExecInspect>("GET", `/exec/${encodeURIComponent(execId)}/json`, undefined, signal);
  }

  close(): void {
    this.agent.destroy();
  }

  /** One HTTP request to the engine: its socket, or its TCP address (TLS when it has TLS). */
  private request(options: RequestOptions): ClientRequest {
    const e = this.endpoint;
    if (e.kind === "unix") return httpRequest({ ...options, socketPath: e.socketPath });
    const at = { ...options, host: e.host, port: e.port };
    // A fresh connection (agent: false) still needs the TLS material the pooled agent has.
    return e.tls ? httpsRequest({ ...at, ...(options.agent === false ? tlsOptions(e.tls) : {}) }) : httpRequest(at);
  }

  private async json<T>(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const text = await this.call(method, path, body, { signal });
    return JSON.parse(text) as T;
  }

  /** One request; non-2xx becomes EngineHttpError, a socket failure `sandbox_engine_unavailable`. */
  private call(
    method: string,
    path: string,
    body: unknown,
    options: { timeoutMs?: number; signal?: AbortSignal | undefined },
  ): Promise<string> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = this.request({
        path,
        method,
        agent: this.agent,
        timeout: options.timeoutMs ?? API_CALL_TIMEOUT_MS,
        ...(options.signal ? { signal: options.signal } : {}),
        headers: payload
          ? { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) }
          : {},
      });
      req.once("timeout", () => req.destroy(new Error(`${method} ${path.split("?")[0]} timed out`)));
      req.once("error", (err) => {
        if (options.signal?.aborted) reject(asError(options.signal.reason));
        else reject(err instanceof EngineHttpError ? err : this.unavailable(err));
      });
      req.once("response", (res) => {
        readBody(res).then((text) => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(text);
          else reject(new EngineHttpError(status, engineMessage(text)));
        }, reject);
      });
      req.end(payload);
    });
  }
}

function tlsOptions(tls: NonNullable<Extract<EngineEndpoint, { kind: "tcp" }>["tls"]>): { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean } {
  return { ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert ? { cert: tls.cert } : {}), ...(tls.key ? { key: tls.key } : {}), rejectUnauthorized: tls.verify };
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.once("error", reject);
  });
}

/** The engine answers errors as `{"message": "..."}`. */
function engineMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.trim() || "empty response";
}
