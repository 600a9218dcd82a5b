/**
 * Drive the real, built harness process (`dist/server.js --stdio`) the way the extension's
 * language client does: JSON-RPC over the child's stdio (vscode-jsonrpc). Notifications are
 * recorded and waited on as events, never with timers.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { once } from "node:events";
import { resolve } from "node:path";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node.js";
import type { HarnessSettings, HarnessToHost, HostRequest, JournalEvent, RequestParams, RequestResult } from "../../../extension/protocol/rpc.js";

export const SERVER = resolve("dist/server.js");

type Note = { method: string; params: any };

export interface HarnessProcess {
  child: ChildProcess;
  conn: MessageConnection;
  notes: Note[];
  stderr(): string;
  request<M extends HostRequest>(method: M, params: RequestParams<M>): Promise<RequestResult<M>>;
  /** Any request, params unchecked: for the bad-input tests. */
  raw(method: string, params?: unknown): Promise<unknown>;
  /** Resolves with the first notification (past or future) matching. */
  waitNote<K extends keyof HarnessToHost>(method: K, pred?: (p: HarnessToHost[K]) => boolean): Promise<HarnessToHost[K]>;
  /** Events delivered to one subscription, in arrival order. */
  events(subscriptionId: string): JournalEvent[];
  /** Resolves once the subscription has received an event matching `pred`. */
  waitEvent(subscriptionId: string, pred: (e: JournalEvent) => boolean): Promise<JournalEvent>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  close(): Promise<void>;
}

/** `script`: another copy of the built server (default dist/server.js). */
export function startHarness(env: NodeJS.ProcessEnv = {}, script: string = SERVER): HarnessProcess {
  if (!existsSync(script)) throw new Error(`${script} is missing: run "npm run build" first`);
  const child = spawn(process.execPath, [script, "--stdio"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = once(child, "exit").then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const notes: Note[] = [];
  const waiters: Array<{ match: (n: Note) => boolean; resolve: (n: Note) => void }> = [];
  conn.onNotification((method: string, params: unknown) => {
    const note = { method, params };
    notes.push(note);
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!.match(note)) waiters.splice(i, 1)[0]!.resolve(note);
  });
  conn.onError(() => undefined);
  conn.onClose(() => undefined);
  conn.listen();
  const waitFor = (match: (n: Note) => boolean): Promise<Note> => {
    const seen = notes.find(match);
    return seen ? Promise.resolve(seen) : new Promise((res) => waiters.push({ match, resolve: res }));
  };
  const events = (id: string) => notes.filter((n) => n.method === "events/event" && n.params.subscriptionId === id).flatMap((n) => n.params.events as JournalEvent[]);
  return {
    child,
    conn,
    notes,
    stderr: () => stderr,
    request: (method, params) => conn.sendRequest(method, params),
    raw: (method, params) => (params === undefined ? conn.sendRequest(method) : conn.sendRequest(method, params)),
    waitNote: (method, pred = () => true) => waitFor((n) => n.method === method && pred(n.params)).then((n) => n.params),
    events,
    waitEvent: (id, pred) =>
      waitFor((n) => n.method === "events/event" && n.params.subscriptionId === id && (n.params.events as JournalEvent[]).some(pred)).then(
        () => events(id).find(pred)!,
      ),
    exited,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      await exited;
      conn.dispose();
    },
  };
}

export function settings(modelUrl: string, overrides: Partial<HarnessSettings> = {}): HarnessSettings {
  return {
    models: [{ name: "scripted", model: "scripted", base_url: modelUrl, supports_vision: true }],
    default_model: "scripted",
    sandbox: { provider: "local", allow_host_commands: false },
    workspace_trusted: true,
    ...overrides,
  };
}

/** The JSON-RPC error a request was answered with (fails the test if it succeeded). */
export async function errorOf(p: Promise<unknown>): Promise<{ code: number; message: string; data?: { code: string } }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string; data?: { code: string } };
  }
  assert.fail("expected a JSON-RPC error");
}
