/**
 * A client of `deerflow serve`'s `/rpc` WebSocket for tests: the `ws` package and vscode-jsonrpc's
 * message connection, the same two pieces the extension host uses, without VS Code. Notifications
 * are recorded, and a test awaits one by predicate (an event, not a timer).
 */
import { once } from "node:events";
import WebSocket, { createWebSocketStream } from "ws";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-languageserver/node.js";
import type { HarnessToHost, HostRequest, JournalEvent, RequestParams, RequestResult } from "../../../extension/protocol/rpc.js";

export interface RpcClient {
  conn: MessageConnection;
  socket: WebSocket;
  request<M extends HostRequest>(method: M, params: RequestParams<M>): Promise<RequestResult<M>>;
  /** Every notification so far, in order. */
  notifications: Array<{ method: string; params: unknown }>;
  /** Resolves with the first notification (recorded or coming) the predicate accepts. */
  waitFor<K extends keyof HarnessToHost>(method: K, match?: (p: HarnessToHost[K]) => boolean): Promise<HarnessToHost[K]>;
  /** The events of one subscription so far, flattened. */
  events(subscriptionId: string): JournalEvent[];
  close(): Promise<void>;
}

/** The answer to an upgrade the server refused (status and JSON body), or undefined when it was accepted. */
export async function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string } | undefined> {
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once("open", () => {
      socket.close();
      resolve(undefined);
    });
    socket.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (s: string) => (body += s));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    socket.once("error", reject);
  });
}

export async function connectRpc(serveUrl: string, token: string): Promise<RpcClient> {
  const socket = new WebSocket(`${serveUrl.replace(/^http/, "ws")}/rpc`, { headers: { Authorization: `Bearer ${token}` } });
  await once(socket, "open");
  const stream = createWebSocketStream(socket);
  stream.on("error", () => undefined);
  const conn = createMessageConnection(new StreamMessageReader(stream), new StreamMessageWriter(stream));
  const notifications: RpcClient["notifications"] = [];
  const waiters: Array<{ method: string; match: (p: unknown) => boolean; resolve: (p: unknown) => void }> = [];
  conn.onNotification((method: string, params: unknown) => {
    notifications.push({ method, params });
    for (const w of [...waiters]) {
      if (w.method === method && w.match(params)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(params);
      }
    }
  });
  conn.listen();
  return {
    conn,
    socket,
    notifications,
    request: (method, params) => conn.sendRequest(method, params),
    waitFor: (method, match = () => true) =>
      new Promise((resolve) => {
        const m = match as (p: unknown) => boolean;
        const seen = notifications.find((n) => n.method === method && m(n.params));
        if (seen) return resolve(seen.params as never);
        waiters.push({ method, match: m, resolve: resolve as (p: unknown) => void });
      }),
    events: (id) =>
      notifications
        .filter((n) => n.method === "events/event" && (n.params as HarnessToHost["events/event"]).subscriptionId === id)
        .flatMap((n) => (n.params as HarnessToHost["events/event"]).events),
    async close() {
      conn.dispose();
      if (socket.readyState === WebSocket.CLOSED) return;
      const closed = once(socket, "close");
      socket.close();
      await closed;
    },
  };
}
