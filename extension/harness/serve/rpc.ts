/**
 * `deerflow serve`'s `/rpc`: the harness's own JSON-RPC protocol (extension/protocol/rpc.ts, LSP
 * framing) over a WebSocket, so VS Code can use a server as its harness (issue 26 item 4, the
 * host's `deerflow.harness.url`). The same handlers as the editor's harness process (server/
 * handlers.ts) over the same services as the HTTP API: one Session, one set of workspaces (the
 * served folders only), one Runs, one memory. What differs is said here:
 *
 * - The upgrade needs the bearer token, like every HTTP route; without it the answer is a 401 and
 *   no socket. Before the token, the same Origin and Host check as every HTTP route (origin.ts):
 *   a browser page of another origin (cross-site WebSocket hijacking) or a host name the server
 *   does not answer to (DNS rebinding) gets a 403. VS Code's socket sends no Origin. The token is the operator's trust: a client holding it may approve a served
 *   folder's dev container or MCP servers (code that runs on the server, never on the client).
 * - `harness/initialize` does not take the client's data directory or settings: the server keeps
 *   its own configuration, models and sandbox, and answers with what it serves (`remote`).
 *   `harness/configure` takes no API keys: the server's models use the server's environment, and
 *   a user's key must not end up on a shared machine.
 * - Per client: its event subscriptions (they end with its socket), and `runs/ended` only for the
 *   threads it follows (one it subscribed to or ran on): a team's other threads are not announced
 *   to everyone. Sandbox status and memory changes concern every client and go to all.
 * - Runs do not depend on a client: one whose socket closes goes on (the client's next connection
 *   replays the journal). Server logs stay on the server (stderr), never sent to clients.
 * - A client attaches files by their bytes (`uploads/put`), never by a path of the server:
 *   `runs/start` `files` is refused here (trust/attachments.ts says who may name what).
 * - A socket that stops answering pings is closed, so a sleeping laptop does not hold subscriptions.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, createWebSocketStream, type WebSocket } from "ws";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-languageserver/node.js";
import type { HarnessToHost, RemoteHarnessInfo } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { handlers, registerHandlers, type HarnessServices, type Handlers } from "../server/handlers.js";
import { Subscriptions } from "../server/subscriptions.js";
import { bearerMatches } from "./auth.js";
import { checkOrigin, type OriginPolicy } from "./origin.js";
import { ValidatingReader } from "./rpcFrames.js";

export const RPC_PATH = "/rpc";
/** A ping every interval; a socket that did not answer the previous one is closed. */
const KEEPALIVE_MS = Number(process.env.DEERFLOW_RPC_KEEPALIVE_MS) || 30_000;
/** One message at most: files/read's 50 MB in base64, with room for the envelope. */
const MAX_MESSAGE_BYTES = 80 * 1024 * 1024;

export interface RpcServices {
  /** Everything but the per-client subscriptions. */
  services: Omit<HarnessServices, "subscriptions">;
  remote: () => RemoteHarnessInfo;
}

interface RpcClient {
  /** Threads this client follows: its `runs/ended` filter. */
  readonly threads: Set<string>;
  notify(method: string, params: unknown): void;
  close(): void;
}

export class RpcHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly clients = new Set<RpcClient>();
  private readonly keepalive: NodeJS.Timeout;
  private readonly alive = new WeakMap<WebSocket, boolean>();

  private o: RpcServices | undefined;

  /** The hub exists before the services that notify through it; `serve` hands them over. */
  constructor(
    private readonly token: string,
    private readonly origins: OriginPolicy,
  ) {
    this.keepalive = setInterval(() => this.ping(), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** Takes the `/rpc` upgrades of the server's HTTP listener, answered by these services. */
  serve(server: Pick<Server, "on">, services: RpcServices): void {
    this.o = services;
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** `runs/ended` to the clients following the thread. */
  ended(p: HarnessToHost["runs/ended"]): void {
    for (const c of this.clients) if (c.threads.has(p.threadId)) c.notify("runs/ended", p);
  }

  broadcast<K extends "sandbox/status" | "memory/changed">(method: K, params: HarnessToHost[K]): void {
    for (const c of this.clients) c.notify(method, params);
  }

  get clientCount(): number {
    return this.clients.size;
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const c of [...this.clients]) c.close();
    this.wss.close();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== RPC_PATH) return refuse(socket, 404, "not_found", `No WebSocket endpoint at ${path}; the harness protocol is at ${RPC_PATH}.`);
    const refused = checkOrigin((name) => headerOf(req, name), this.origins);
    if (refused) return refuse(socket, 403, refused.code, refused.message);
    if (!bearerMatches(req.headers.authorization, this.token)) {
      return refuse(socket, 401, "unauthorized", "This server needs its bearer token: Authorization: Bearer <token>.");
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connect(ws));
  }

  private connect(ws: WebSocket): void {
    const { services, remote } = this.o!;
    const log = services.log;
    const stream = createWebSocketStream(ws);
    // A reset socket is a closed client, not a server error.
    stream.on("error", () => undefined);
    const writer = new StreamMessageWriter(stream);
    // Frames that are not JSON-RPC are answered with its errors, not dropped (./rpcFrames.ts).
    const conn = createMessageConnection(new ValidatingReader(new StreamMessageReader(stream), writer), writer);
    let closed = false;
    const client: RpcClient = {
      threads: new Set(),
      notify: (method, params) => {
        if (!closed) conn.sendNotification(method, params).catch(() => undefined);
      },
      close: () => ws.terminate(),
    };
    const subscriptions = new Subscriptions(
      (p) => client.notify("events/event", p),
      (w, e) => services.runs.foreignEvent(w, e),
    );
    const s: HarnessServices = { ...services, subscriptions };
    const base = handlers(s);
    const follow = (threadId: string): void => void client.threads.add(threadId);
    const overrides: Partial<Handlers> = {
      "harness/initialize": () => ({ version: services.version, pid: process.pid, remote: remote() }),
      "harness/configure": (p) => {
        if (Object.values(p.apiKeys ?? {}).some((k) => k !== "")) {
          throw new HarnessError("invalid_params", "This is a remote harness: its models use the server's own API keys, and it takes none from the editor.");
        }
        return null;
      },
      "runs/start": (p) => {
        // A remote client never names a host path of the server: it attaches by bytes (uploads/put).
        if ((p.files ?? []).length > 0) {
          throw new HarnessError("invalid_params", "This is a remote harness: attach files by sending their bytes with uploads/put, then name them in runs/start's uploaded.");
        }
        follow(p.threadId);
        return base["runs/start"](p);
      },
      "runs/decide": (p) => {
        follow(p.threadId);
        return base["runs/decide"](p);
      },
      "events/subscribe": (p) => {
        follow(p.threadId);
        return base["events/subscribe"](p);
      },
    };
    registerHandlers(conn, s, overrides);
    // The language client's own handshake: answered, and `exit` closes this socket (never the process).
    conn.onRequest("initialize", () => ({ capabilities: {}, serverInfo: { name: "deerflow-serve", version: services.version } }));
    conn.onRequest("shutdown", () => null);
    conn.onNotification("exit", () => ws.close());
    const end = () => {
      if (closed) return;
      closed = true;
      this.clients.delete(client);
      subscriptions.unsubscribeAll();
      conn.dispose();
      log.info(`A remote client disconnected (${this.clients.size} connected).`);
    };
    conn.onClose(end);
    ws.on("close", end);
    this.alive.set(ws, true);
    ws.on("pong", () => this.alive.set(ws, true));
    this.clients.add(client);
    conn.listen();
    log.info(`A remote client connected (${this.clients.size} connected).`);
  }

  private ping(): void {
    for (const ws of this.wss.clients) {
      if (this.alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      this.alive.set(ws, false);
      ws.ping();
    }
  }
}

/** One request header as a string (Node joins repeated ones; Host and Origin come once). */
function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(", ") : v;
}

const REASONS = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" } as const;

/** An HTTP answer to an upgrade we do not take, JSON like every other refusal, then the socket closes. */
function refuse(socket: Duplex, status: 401 | 403 | 404, error: string, message: string): void {
  const body = JSON.stringify({ error, message });
  const reason = REASONS[status];
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${status === 401 ? 'WWW-Authenticate: Bearer realm="deerflow"\r\n' : ""}Connection: close\r\n\r\n${body}`,
  );
}
