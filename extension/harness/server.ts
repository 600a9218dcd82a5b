/**
 * The harness process: what the VS Code extension starts (through vscode-languageclient) and
 * supervises, speaking JSON-RPC over stdio (`node dist/server.js --stdio`). It owns SQLite and the
 * agent loop so the extension host never does; the contract is extension/protocol/rpc.ts.
 *
 * Lifecycle: the LSP handshake (initialize/shutdown/exit) is answered for the language client;
 * the harness's own `harness/initialize` brings the data directory and settings. On `shutdown`,
 * SIGTERM or SIGINT, this process's runs are stopped with a reason and their `end` journaled
 * before it exits. When stdin closes with runs still going (the extension host went away: a
 * window reload), they are finished first, so the next window's harness can follow them; a run of
 * a process killed outright is recovered (marked interrupted) when the next harness opens its folder.
 */
import { createConnection, StreamMessageReader, StreamMessageWriter } from "vscode-languageserver/node.js";
import { HARNESS_VERSION } from "./version.js";
import { errorMessage } from "./errors.js";
import { createLogger, type Logger } from "./server/logger.js";
import { Session } from "./server/session.js";
import { Workspaces } from "./server/workspaces.js";
import { Runs } from "./server/runs.js";
import { Subscriptions } from "./server/subscriptions.js";
import { registerHandlers } from "./server/handlers.js";
import { ServerMemory } from "./server/memory.js";
import { setDiagnostics } from "./diagnostics.js";
import { setLmTransport } from "./models/vscodeLm/port.js";
import { connectionLmTransport } from "./server/lmTransport.js";

const reader = new StreamMessageReader(process.stdin);
const writer = new StreamMessageWriter(process.stdout);
// Once the host is gone its pipe is too: writes fail with EPIPE. That is expected while orphaned
// runs finish, and must not become an uncaught error (which is logged... to the same pipe).
process.stdout.on("error", () => undefined);
// Runs must survive a window reload, which restarts the extension host: this process outlives its
// host while it still has runs (see the stdin close handler below). vscode-languageserver would
// instead exit within 3 s of the host's death (its parent-process watchdog, armed by the
// `processId` of `initialize`), so that id is withheld from the library; the close handler is
// the watchdog now (a dead parent closes the pipe).
const listen = reader.listen.bind(reader);
reader.listen = (callback) =>
  listen((message) => {
    const m = message as { method?: string; params?: { processId?: unknown } };
    if (m.method === "initialize" && m.params) m.params.processId = null;
    callback(message);
  });
// A reader and writer rather than the raw streams: with streams, vscode-languageserver exits the
// process the moment stdin ends, before this process could stop its runs.
const connection = createConnection(reader, writer);

/** How long runs may go on after the host disconnected (a reload's new window follows them). */
const ORPHAN_RUN_LIMIT_MS = Number(process.env.DEERFLOW_ORPHAN_RUN_LIMIT_MS) || 30 * 60_000;

/** A notification to the host; failing to send (the host is gone) is not an error here. */
function notify(method: string, params: unknown): void {
  connection.sendNotification(method, params).catch(() => undefined);
}

const log = createLogger((p) => notify("log/message", p));
routeConsole(log);
// Diagnostics of code far from a logger (token counting, summarization) go to the host's log too.
setDiagnostics(log);
// vscode.lm models (issue 25): their requests go to the extension host over this connection.
setLmTransport(connectionLmTransport(connection));

const session = new Session();
const workspaces = new Workspaces(session, log, (p) => notify("sandbox/status", p));
const memory = new ServerMemory(session, log, {
  notify: (p) => notify("memory/changed", p),
  hostPathOf: (folder) => workspaces.all().find((w) => w.folder === folder)?.hostPath,
});
const runs = new Runs(session, workspaces, log, (p) => notify("runs/ended", p), memory);
const subscriptions = new Subscriptions(
  (p) => notify("events/event", p),
  (ws, e) => runs.foreignEvent(ws, e),
);
registerHandlers(connection, { session, workspaces, runs, subscriptions, log, version: HARNESS_VERSION, memory });

connection.onInitialize(() => ({ capabilities: {}, serverInfo: { name: "deerflow-harness", version: HARNESS_VERSION } }));

let stopping: Promise<void> | undefined;
/** Stops runs (each journals its end), ends subscriptions, releases sandboxes, closes stores. */
function stop(why: string): Promise<void> {
  stopping ??= (async () => {
    log.info(`Harness stopping: ${why}.`);
    subscriptions.unsubscribeAll();
    await runs.shutdown();
    await memory.close();
    await workspaces.close();
  })();
  return stopping;
}

function stopAndExit(why: string, code: number): void {
  stop(why).then(
    () => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`deerflow harness: stopping failed: ${errorMessage(err)}\n`);
      process.exit(1);
    },
  );
}

// LSP `shutdown` then `exit`: the library exits right after the exit handler, so the work is
// done in shutdown; the exit hook below covers an `exit` without `shutdown`.
connection.onShutdown(() => stop("shutdown requested"));
reader.onClose(() => {
  if (runs.activeCount === 0) {
    stopAndExit("the host closed the connection", 0);
    return;
  }
  // The host is gone but runs are going: finish them (bounded), then stop.
  log.info(`Host disconnected with ${runs.activeCount} run(s) going: finishing them before exiting.`);
  subscriptions.unsubscribeAll();
  runs.finishAll(ORPHAN_RUN_LIMIT_MS).then(
    (finished) => stopAndExit(finished ? "the host closed the connection; its runs finished" : "runs outlived the orphan limit", 0),
    () => stopAndExit("the host closed the connection", 0),
  );
});
process.once("SIGTERM", () => stopAndExit("SIGTERM", 0));
process.once("SIGINT", () => stopAndExit("SIGINT", 0));
// Whatever path leads to exit (the language server's parent-process watchdog, `exit`), runs
// still open get their end journaled synchronously: nothing asynchronous runs past this point.
process.on("exit", () => {
  runs.shutdownSync();
  workspaces.closeStores();
});
// Bad input is answered, never fatal; a bug elsewhere is logged rather than taking every run down.
process.on("uncaughtException", (err) => log.error(`Uncaught exception: ${err.stack ?? err.message}`));
process.on("unhandledRejection", (reason) => log.error(`Unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));

connection.listen();

/**
 * stdout carries the JSON-RPC stream: a dependency's console.log there would corrupt it. Console
 * output becomes log messages instead (the harness itself never uses the console).
 */
function routeConsole(logger: Logger): void {
  const text = (args: unknown[]) => args.map((a) => (typeof a === "string" ? a : a instanceof Error ? (a.stack ?? a.message) : safeJson(a))).join(" ");
  const target = globalThis.console as unknown as Record<string, (...args: unknown[]) => void>;
  target.log = target.info = (...args) => logger.info(text(args));
  target.debug = (...args) => logger.debug(text(args));
  target.trace = (...args) => logger.trace(text(args));
  target.warn = (...args) => logger.warn(text(args));
  target.error = (...args) => logger.error(text(args));
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
