/**
 * `deerflow serve`: DeerFlow's LangGraph-compatible HTTP API over the run system (app.ts).
 *
 *   deerflow serve --workspace [NAME=]DIR … [--data-dir DIR] [--database URL|sqlite] [--port N]
 *                  [--host H] [--token-file F] [--model NAME] [--base-url URL] [--sandbox CHOICE]
 *
 * Listens on 127.0.0.1 unless --host says otherwise. Prints one JSON line on stdout once it
 * listens: {"event":"listening","url":…,"database":…} (the database without its password); a
 * generated token is printed once, on stderr. Several processes on one Postgres each execute
 * the runs they admitted (a lease each) and any of them streams any run. SIGTERM/SIGINT: this
 * process's runs are cancelled (their end journaled), then it exits.
 */
import { serve } from "@hono/node-server";
import { parse, workspaceArg, writeJsonLine, UsageError } from "../cli/args.js";
import { defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { HarnessError } from "../errors.js";
import { parseSandboxChoice, type SandboxChoice } from "../sandbox/select.js";
import { chooseDatabase } from "../store/postgres/config.js";
import { redactUrl } from "../store/postgres/url.js";
import { createApp } from "./app.js";
import { loadToken } from "./auth.js";
import { parseWorkspaceSpec, Workspaces } from "./workspaces.js";

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
  try {
    if (v.sandbox !== undefined) sandbox = parseSandboxChoice(v.sandbox);
    config = loadHarnessConfig(dataDir);
    database = chooseDatabase(v.database, config.database);
    token = loadToken(v["token-file"]);
  } catch (err) {
    if (err instanceof HarnessError) throw new UsageError(`deerflow serve: ${redactUrl(err.message)}`);
    throw err;
  }
  const folders = specs.map((s) => ({ name: s.name, folder: workspaceArg(s.dir, "serve") }));
  const workspaces = new Workspaces(folders, { dataDir, ...(database.url ? { database: database.url } : {}) });
  // Runs left behind by a process that died (a lease no one renews) end `interrupted` now.
  for (const ws of workspaces.list) ws.manager.recover();
  const log = (line: string) => process.stderr.write(`deerflow serve: ${line}\n`);
  const app = createApp({
    workspaces,
    config,
    dataDir,
    token: token.token,
    ...(sandbox ? { sandbox } : {}),
    ...(v.model ? { model: v.model } : {}),
    ...(v["base-url"] ? { baseURL: v["base-url"] } : {}),
    log,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s));
    s.once("error", reject);
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
      server.close();
      workspaces.close();
      resolve(0);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}
