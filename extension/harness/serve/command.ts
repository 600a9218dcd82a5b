/**
 * `deerflow serve`: DeerFlow's LangGraph-compatible HTTP API over the run system (app.ts).
 *
 *   deerflow serve --workspace [NAME=]DIR … [--data-dir DIR] [--database URL|sqlite] [--port N]
 *                  [--host H] [--token-file F] [--model NAME] [--base-url URL] [--sandbox CHOICE]
 *                  [--allow-origin ORIGIN]…
 *
 * Listens on 127.0.0.1 unless --host says otherwise; answers the host names of its address and
 * pages of its own origin, and those of each --allow-origin (origin.ts). Prints one JSON line on stdout once it
 * listens: {"event":"listening","url":…,"database":…} (the database without its password); a
 * generated token is printed once, on stderr. Several processes on one Postgres each execute
 * the runs they admitted (a lease each) and any of them streams any run. SIGTERM/SIGINT: this
 * process's runs are cancelled (their end journaled), then it exits.
 */
import type { Server as HttpServer } from "node:http";
import { serve } from "@hono/node-server";
import { parse, workspaceArg, writeJsonLine, UsageError, valueUsageError } from "../cli/args.js";
import { defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { HarnessError, errorMessage } from "../errors.js";
import { parseSandboxChoice, type SandboxChoice } from "../sandbox/select.js";
import { chooseDatabase } from "../store/postgres/config.js";
import { redactUrl } from "../store/postgres/url.js";
import { createApp } from "./app.js";
import { originPolicy, parseAllowOrigin } from "./origin.js";
import { loadToken } from "./auth.js";
import { checkWorkspaceNames, parseWorkspaceSpec, Workspaces } from "./workspaces.js";
import { RpcHub } from "./rpc.js";
import { HARNESS_VERSION } from "../version.js";
import { createLogger } from "../server/logger.js";
import { setDiagnostics } from "../diagnostics.js";
import { Session } from "../server/session.js";
import { Workspaces as HarnessWorkspaces } from "../server/workspaces.js";
import { ServerMemory } from "../server/memory.js";
import { Runs } from "../server/runs.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import type { RemoteHarnessInfo } from "../../protocol/rpc.js";

const options = {
  workspace: { type: "string", multiple: true },
  "data-dir": { type: "string" },
  database: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "token-file": { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  sandbox: { type: "string" },
  "allow-origin": { type: "string", multiple: true },
} as const;

export async function serveCommand(argv: string[]): Promise<number> {
  const v = parse(argv, options, "serve");
  const specs = (v.workspace ?? []).map(parseWorkspaceSpec);
  if (specs.length === 0) throw new UsageError("deerflow serve: --workspace [NAME=]DIR is required (once per workspace)");
  const port = v.port === undefined ? 2024 : /^\d{1,5}$/.test(v.port) && Number(v.port) <= 65535 ? Number(v.port) : NaN;
  if (Number.isNaN(port)) throw new UsageError("deerflow serve: --port takes a port number (0 = any free port)");
  const host = v.host ?? "127.0.0.1";
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let sandbox: SandboxChoice | undefined;
  let config;
  let database;
  let token;
  let allowOrigins: string[];
  try {
    allowOrigins = (v["allow-origin"] ?? []).map(parseAllowOrigin);
    if (v.sandbox !== undefined) sandbox = parseSandboxChoice(v.sandbox);
    config = loadHarnessConfig(dataDir);
    database = chooseDatabase(v.database, config.database);
    token = loadToken(v["token-file"]);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError("serve", redactUrl(err.message));
    throw err;
  }
  const folders = specs.map((s) => ({ name: s.name, folder: workspaceArg(s.dir, "serve") }));
  checkWorkspaceNames(folders);
  const log = (line: string) => process.stderr.write(`deerflow serve: ${line}\n`);
  // Server logs stay on the server: debug and trace only with DEERFLOW_SERVE_DEBUG.
  const verbose = process.env.DEERFLOW_SERVE_DEBUG === "1";
  const logger = createLogger(({ level, message }) => {
    if (verbose || (level !== "debug" && level !== "trace")) log(`${level}: ${message}`);
  });
  setDiagnostics(logger);
  // The harness's services, as in the editor's harness process, with the server's own settings:
  // its configuration file's models, its sandbox choice, the served folders trusted (the operator
  // chose them). A remote client's settings never replace them (serve/rpc.ts).
  const session = new Session();
  try {
    session.initialize(dataDir, {
      models: [],
      sandbox: { provider: sandbox ?? config.sandbox.provider, allow_host_commands: config.sandbox.allow_host_commands, bash_timeout_seconds: config.sandbox.bash_timeout_seconds },
      workspace_trusted: true,
    });
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError("serve", redactUrl(err.message));
    throw err;
  }
  // Pages and host names answered (origin.ts): the bound address's names and the --allow-origin entries.
  const origins = originPolicy(host, allowOrigins);
  const hub = new RpcHub(token.token, origins);
  const harness = new HarnessWorkspaces(session, logger, (p) => hub.broadcast("sandbox/status", p), {
    folders,
    ...(database.url ? { database: database.url } : {}),
  });
  // On Postgres memory lives in the database too (memory/storage.ts): every worker shares one.
  const memory = new ServerMemory(session, logger, { notify: (p) => hub.broadcast("memory/changed", p), hostPathOf: (folder) => folder, ...(database.url ? { database: database.url } : {}) });
  const runs = new Runs(session, harness, logger, (p) => hub.ended(p), memory, {
    ...(v.model ? { model: v.model } : {}),
    ...(v["base-url"] ? { baseURL: v["base-url"] } : {}),
  });
  let workspaces: Workspaces;
  try {
    // Opening a folder's store settles the runs a dead process left behind (a lease no one renews: `interrupted`).
    workspaces = new Workspaces(harness, folders);
  } catch (err) {
    await harness.close();
    throw err;
  }
  memory.start();
  const app = createApp({
    workspaces,
    services: { session, log: logger, memory },
    runs,
    config: session.config,
    token: token.token,
    origins,
    debug: (line) => logger.debug(line),
    ...(v.model ? { model: v.model } : {}),
    ...(v["base-url"] ? { baseURL: v["base-url"] } : {}),
    log,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s));
    s.once("error", reject);
  });
  // What Node's HTTP parser refuses (an unknown method, raw bytes in the path, a broken header)
  // never reaches Hono: it gets the same JSON 400 as any bad request, not an empty one.
  (server as HttpServer).on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: "invalid_request", message: "The server could not read this HTTP request." });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  // @hono/node-server's listener is a node:http Server (no TLS options were given).
  hub.serve(server as HttpServer, {
    services: { session, workspaces: harness, runs, log: logger, version: HARNESS_VERSION, memory },
    remote: () => remoteInfo(session.config, workspaces, v.model),
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  if (token.generated) log(`token (shown once; pass it as Authorization: Bearer): ${token.token}`);
  writeJsonLine({ event: "listening", url: `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`, database: database.shown, workspaces: folders.map((f) => f.name) });

  return new Promise<number>((resolve) => {
    const stop = () => {
      // This process's runs end now, with their end journaled; another worker could not resume
      // them mid-turn anyway (the next run on the thread continues from the checkpoint).
      for (const ws of workspaces.list) {
        for (const run of ws.manager.runs.listActive()) if (run.lease_owner === ws.manager.owner) ws.manager.cancel(run.run_id);
      }
      hub.close();
      server.close();
      // Sandboxes this process brought up, MCP servers, memory, then the stores.
      void (async () => {
        await runs.shutdown();
        await memory.close();
        await harness.close();
      })().then(
        () => resolve(0),
        (err: unknown) => {
          log(`stopping: ${errorMessage(err)}`);
          resolve(1);
        },
      );
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}

/** What `/rpc` clients are told in harness/initialize: the served folders and the models a run may name. */
function remoteInfo(config: HarnessConfig, workspaces: Workspaces, adHocModel: string | undefined): RemoteHarnessInfo {
  const models: RemoteHarnessInfo["models"] = config.models.map((m) => ({
    name: m.name,
    ...(m.display_name ? { display_name: m.display_name } : {}),
    supports_vision: m.supports_vision === true,
  }));
  if (adHocModel && !models.some((m) => m.name === adHocModel)) models.push({ name: adHocModel, supports_vision: false });
  const fallback = adHocModel ?? config.default_model ?? models[0]?.name;
  return {
    workspaces: workspaces.list.map((w) => ({ name: w.name, folder: w.folder })),
    models,
    ...(fallback ? { default_model: fallback } : {}),
  };
}
