/**
 * One WebSocket to a remote harness (`deerflow serve`'s `GET /rpc`, issue 26 item 4), as the
 * Duplex the language client speaks its Content-Length-framed JSON-RPC over.
 *
 * The token goes in the upgrade request's `Authorization: Bearer` header, never in the URL (a
 * URL ends up in logs, proxies and process listings). Failures are classified for the caller:
 * `unauthorized` (the server answered the upgrade with 401/403: retrying cannot help, the user
 * must set the token, or, when serve's Host/Origin check refused the name the URL uses, start
 * serve with --allow-origin: its message says which) and `unreachable` (refused, reset, timed out, DNS, any other answer: the
 * server may come back, so the caller retries with backoff).
 *
 * No `vscode` import: the unit tests connect it to a real `ws` server.
 */
import type { Duplex } from "node:stream";
import { WebSocket, createWebSocketStream } from "ws";

export type RemoteConnectCode = "unauthorized" | "unreachable";

export class RemoteConnectError extends Error {
  constructor(
    readonly code: RemoteConnectCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "RemoteConnectError";
  }
}

/** `http://h:p[/base]` → `ws://h:p[/base]/rpc` (https → wss); ws(s) URLs as given, with /rpc. */
export function rpcUrl(harnessUrl: string): string {
  const u = new URL(harnessUrl);
  if (u.protocol === "http:") u.protocol = "ws:";
  else if (u.protocol === "https:") u.protocol = "wss:";
  const path = u.pathname.replace(/\/+$/, "");
  u.pathname = path.endsWith("/rpc") ? path : `${path}/rpc`;
  u.search = "";
  u.hash = "";
  return u.toString();
}

/**
 * Why a `deerflow.harness.url` value cannot be used (undefined when it can). Credentials in the
 * URL are refused: the token belongs in the editor's secret storage.
 */
export function harnessUrlProblem(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `deerflow.harness.url "${value}" is not a URL (e.g. https://build-box:2024).`;
  }
  if (!["http:", "https:", "ws:", "wss:"].includes(u.protocol)) return `deerflow.harness.url must be an http(s):// URL, not ${u.protocol}//.`;
  if (u.username || u.password) return "deerflow.harness.url must not carry credentials: set the token with DeerFlow: Set Remote Harness Token.";
  if (u.search) return "deerflow.harness.url must not carry a query: set the token with DeerFlow: Set Remote Harness Token.";
  // The token travels in every upgrade: in clear text only to this machine.
  if ((u.protocol === "http:" || u.protocol === "ws:") && !isLoopback(u.hostname)) {
    return `deerflow.harness.url ${displayUrl(value)} would send the token unencrypted: use https:// (deerflow serve behind a TLS proxy) or a tunnel to this machine (ssh -L 2024:127.0.0.1:2024 host, then http://127.0.0.1:2024).`;
  }
  return undefined;
}

/** localhost, 127.0.0.0/8 and ::1: where a plain http:// URL keeps the token on this machine. */
function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** serve's message when its Host or Origin check refused the upgrade (a 403 `host_denied` / `origin_denied`). */
function hostRefusal(body: string): string | undefined {
  try {
    const b = JSON.parse(body) as { error?: unknown; message?: unknown };
    return (b.error === "host_denied" || b.error === "origin_denied") && typeof b.message === "string" ? b.message : undefined;
  } catch {
    return undefined;
  }
}

/** The URL as logs and the status bar show it (scheme, host, port, path: never a credential). */
export function displayUrl(harnessUrl: string): string {
  const u = new URL(harnessUrl);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

export interface Connected {
  socket: WebSocket;
  stream: Duplex;
}

/** How long the TCP connect plus upgrade may take before the server counts as unreachable. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/** A ping every interval; a server that did not answer the previous one is taken for gone (a half-open TCP connection after sleep or a network change never errors on its own). */
const KEEPALIVE_MS = 30_000;

export function connectRemote(harnessUrl: string, token: string | undefined, signal?: AbortSignal, keepaliveMs = KEEPALIVE_MS): Promise<Connected> {
  const target = rpcUrl(harnessUrl);
  const shown = displayUrl(harnessUrl);
  return new Promise<Connected>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new RemoteConnectError("unreachable", `Connecting to ${shown} was cancelled.`));
      return;
    }
    const socket = new WebSocket(target, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      // The harness protocol's messages are text frames of JSON; 64 MiB holds a 50 MB files/read answer in base64.
      maxPayload: 96 * 1024 * 1024,
    });
    let settled = false;
    const fail = (err: RemoteConnectError): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      socket.terminate();
      reject(err);
    };
    const onAbort = (): void => fail(new RemoteConnectError("unreachable", `Connecting to ${shown} was cancelled.`));
    signal?.addEventListener("abort", onAbort, { once: true });
    // 401/403: retrying cannot help. The token, unless serve's Host/Origin check (serve/origin.ts) says why in its 403's JSON body.
    const refused = (status: number, body = ""): RemoteConnectError => {
      const why = status === 403 ? hostRefusal(body) : undefined;
      if (why) return new RemoteConnectError("unauthorized", `The remote harness at ${shown} refused this connection: ${why}`, status);
      return new RemoteConnectError(
        "unauthorized",
        token
          ? `The remote harness at ${shown} refused the token (HTTP ${status}). Set the right one with DeerFlow: Set Remote Harness Token.`
          : `The remote harness at ${shown} needs a token (HTTP ${status}). Set it with DeerFlow: Set Remote Harness Token.`,
        status,
      );
    };
    socket.once("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      if (status === 403) {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => (body = (body + d).slice(0, 4096)));
        res.once("end", () => fail(refused(status, body)));
        res.once("error", () => fail(refused(status)));
        return;
      }
      res.resume();
      if (status === 401) fail(refused(status));
      else fail(new RemoteConnectError("unreachable", `The remote harness at ${shown} answered HTTP ${status} instead of opening /rpc (is it deerflow serve, and recent enough?).`, status));
    });
    socket.once("error", (err: NodeJS.ErrnoException) => {
      fail(new RemoteConnectError("unreachable", `Cannot reach the remote harness at ${shown}: ${err.code ?? err.message}.`));
    });
    socket.once("open", () => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      // After open, errors are the stream's (the language client sees the connection close).
      socket.removeAllListeners("error");
      socket.on("error", () => undefined);
      const stream = createWebSocketStream(socket);
      // ws's Duplex only *ends* when the socket closes (it emits 'close' once its writable side
      // finished too), and the JSON-RPC reader waits for 'close': without this a server that went
      // away would look connected forever.
      let answered = true;
      socket.on("pong", () => (answered = true));
      const keepalive = setInterval(() => {
        if (!answered) {
          socket.terminate();
          return;
        }
        answered = false;
        socket.ping();
      }, keepaliveMs);
      keepalive.unref();
      socket.once("close", () => {
        clearInterval(keepalive);
        stream.destroy();
      });
      resolve({ socket, stream });
    });
  });
}
