/**
 * Chooses the SQLite driver once per process and opens connections with it.
 *
 * Order: better-sqlite3 when its native binary loads for this runtime (the design's package,
 * and the faster of the two), else Node's built-in node:sqlite (Node ≥ 22.13; Electron's Node on
 * desktop). `DEERFLOW_SQLITE_DRIVER=better-sqlite3|node:sqlite` forces one (tests, benches).
 * When neither works the error says which runtime ran, what failed and what to do: the CLI
 * prints it and exits 1, the panel shows it and Show Logs has it (issue 9: never a blank panel
 * or a stack trace).
 */
import { createRequire } from "node:module";
import { HarnessError, errorMessage } from "../../errors.js";
import { BetterSqliteDb } from "./betterSqlite.js";
import { NodeSqliteDb, type NodeSqliteModule } from "./nodeSqlite.js";
import type { Db, SqliteDriverName } from "./types.js";

export interface StorageDriver {
  readonly name: SqliteDriverName;
  /** e.g. "Node 24.11.1" or "Electron 37.2.0 (Node 22.17.0)" */
  readonly runtime: string;
  /** Why the preferred driver was not taken, when it was not. */
  readonly fallbackReason?: string;
  open(file: string): Db;
}

export const DRIVER_ENV = "DEERFLOW_SQLITE_DRIVER";
const DRIVERS: readonly SqliteDriverName[] = ["better-sqlite3", "node:sqlite"];

const loadModule = createRequire(import.meta.url);

export function runtimeDescription(versions: NodeJS.ProcessVersions = process.versions): string {
  const electron = (versions as { electron?: string }).electron;
  return electron ? `Electron ${electron} (Node ${versions.node})` : `Node ${versions.node}`;
}

type Probe = { ok: true; open: (file: string) => Db } | { ok: false; reason: string };

function probeBetterSqlite(): Probe {
  try {
    const ctor = loadModule("better-sqlite3") as Parameters<typeof BetterSqliteDb.open>[0];
    // The native binary is loaded by the first connection, not by require: open one in memory.
    BetterSqliteDb.open(ctor, ":memory:").close();
    return { ok: true, open: (file) => BetterSqliteDb.open(ctor, file) };
  } catch (err) {
    return { ok: false, reason: firstLine(errorMessage(err)) };
  }
}

function probeNodeSqlite(): Probe {
  const mod = loadNodeSqlite();
  if (!mod) {
    return { ok: false, reason: `node:sqlite is not available in Node ${process.versions.node} (it needs Node 22.13 or later)` };
  }
  try {
    NodeSqliteDb.open(mod, ":memory:").close();
    return { ok: true, open: (file) => NodeSqliteDb.open(mod, file) };
  } catch (err) {
    return { ok: false, reason: firstLine(errorMessage(err)) };
  }
}

/**
 * `process.getBuiltinModule` (Node ≥ 20.16) returns undefined for a module this Node lacks, and
 * for node:sqlite behind --experimental-sqlite (Node 22.5–22.12). Node 22/24 print an
 * ExperimentalWarning on first load; it is dropped here (the CLI's stderr is for errors, and the
 * choice is logged on its own).
 */
function loadNodeSqlite(): NodeSqliteModule | undefined {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof get !== "function") return undefined;
  const saved = Object.getOwnPropertyDescriptor(process, "emitWarning");
  const emit = process.emitWarning.bind(process) as (...a: unknown[]) => void;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    if (!/SQLite/i.test(typeof warning === "string" ? warning : warning.message)) emit(warning, ...rest);
  };
  try {
    const mod = get.call(process, "node:sqlite") as NodeSqliteModule | undefined;
    return mod && typeof mod.DatabaseSync === "function" ? mod : undefined;
  } catch {
    return undefined;
  } finally {
    if (saved) Object.defineProperty(process, "emitWarning", saved);
  }
}

/** Whether this runtime has node:sqlite unflagged (Node ≥ 22.13; Electron's Node 22). */
export function nodeSqliteAvailable(): boolean {
  return loadNodeSqlite() !== undefined;
}

const firstLine = (s: string): string => s.split("\n", 1)[0]!.trim();

/** Chooses a driver (no caching: see {@link storageDriver}). Exported for tests. */
export function chooseStorageDriver(env: NodeJS.ProcessEnv = process.env): StorageDriver {
  const runtime = runtimeDescription();
  const forced = env[DRIVER_ENV]?.trim();
  if (forced) {
    if (!DRIVERS.includes(forced as SqliteDriverName)) {
      throw new HarnessError("storage_unavailable", `${DRIVER_ENV}=${forced} is not a SQLite driver; use ${DRIVERS.join(" or ")}.`);
    }
    const name = forced as SqliteDriverName;
    const probe = name === "better-sqlite3" ? probeBetterSqlite() : probeNodeSqlite();
    if (!probe.ok) {
      throw new HarnessError(
        "storage_unavailable",
        `Cannot open the harness database: ${DRIVER_ENV} asks for ${name}, which does not work on ${runtime}: ${probe.reason}.\n` +
          `What to do: unset ${DRIVER_ENV} to let DeerFlow choose the driver that works here.`,
      );
    }
    return { name, runtime, open: probe.open };
  }
  const better = probeBetterSqlite();
  if (better.ok) return { name: "better-sqlite3", runtime, open: better.open };
  const node = probeNodeSqlite();
  if (node.ok) return { name: "node:sqlite", runtime, fallbackReason: `better-sqlite3 did not load: ${better.reason}`, open: node.open };
  throw new HarnessError(
    "storage_unavailable",
    [
      `Cannot open the harness database: no SQLite driver works on ${runtime} (${process.platform}-${process.arch}, ABI ${process.versions.modules}).`,
      `better-sqlite3: ${better.reason}.`,
      `node:sqlite: ${node.reason}.`,
      "What to do: run DeerFlow on Node 22.13 or later (a current VS Code server, code-server 4.139), " +
        "or rebuild better-sqlite3 for this runtime (npm rebuild better-sqlite3).",
    ].join("\n"),
  );
}

let chosen: StorageDriver | undefined;

/** The process's driver, chosen on first use and kept (a failed choice is retried next time). */
export function storageDriver(): StorageDriver {
  return (chosen ??= chooseStorageDriver());
}

/** One line for the log: "storage: node:sqlite on Node 24.11.1 (better-sqlite3 did not load: …)". */
export function describeStorageDriver(d: StorageDriver = storageDriver()): string {
  return `storage: ${d.name} on ${d.runtime}${d.fallbackReason ? ` (${d.fallbackReason})` : ""}`;
}
