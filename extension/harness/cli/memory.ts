/**
 * Long-term memory from the command line (issues 15, 21):
 * - `deerflow memory show [--workspace DIR] [--data-dir DIR]` prints the stored memory as JSON,
 *   scopes and all; with `--workspace`, what that folder's threads are given (the global part and
 *   the folder's own, in DeerFlow's plain shape). Exit 1 with the reason when the file is broken
 *   (it is left as it is);
 * - `deerflow memory clear [--data-dir DIR]` empties it and drops every queued extraction;
 * - `deerflow memory promote --fact ID` makes a fact global (every workspace's threads get it);
 *   `deerflow memory promote --workspace DIR --section user.workContext` makes a folder's own
 *   section the global one. Promoting is the user's act; extraction never does it (scope.ts).
 * Each takes `--database URL` (a postgres:// URL) to work on the memory a `deerflow serve
 * --database URL` keeps in that database instead of the data directory's (memory/storage.ts), so
 * an operator can look at, clear or promote in a server's memory; `--database sqlite` (or none)
 * is the data directory's.
 * And what `run`/`approve`/`compact` use: the data directory's memory for one run, drained before
 * the process exits (a one-shot CLI cannot wait out the debounce), with one line on stderr.
 *
 * The CLI has no Restricted Mode: the folder given with `--workspace` is one the person at the
 * shell chose to run an agent in, so it counts as trusted (as VS Code's trusted workspaces do)
 * and its conversations are extracted, into that folder's scope. `--no-memory` keeps a run out
 * of memory entirely (no injection, no extraction).
 */
import { parse, workspaceArg, writeJsonLine, UsageError, valueUsageError } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { HarnessError } from "../errors.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { runKeys, type KeyFor } from "../models/factory.js";
import type { ResolvedModel } from "../models/resolvedModel.js";
import { MemoryService } from "../memory/service.js";
import type { MemoryWiring } from "../memory/hooks.js";
import { MemoryStorage } from "../memory/storage.js";
import { isSectionName, promote, SECTION_NAMES, viewFor } from "../memory/scope.js";
import { chooseDatabase } from "../store/postgres/config.js";
import { redactUrl } from "../store/postgres/url.js";

const storageOptions = { "data-dir": { type: "string" }, database: { type: "string" } } as const;

/** The memory a command works on: the data directory's, or with `--database` a Postgres database's. */
function openStorage(v: { "data-dir"?: string | undefined; database?: string | undefined }, command: string): MemoryStorage {
  let database;
  try {
    database = chooseDatabase(v.database, undefined);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError(`memory ${command}`, redactUrl(err.message));
    throw err;
  }
  return new MemoryStorage({ dataDir: v["data-dir"] ?? defaultDataDir(), ...(database.url ? { database: database.url } : {}) });
}

export function memoryCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub === "show") return show(rest);
  if (sub === "clear") return clear(rest);
  if (sub === "promote") return promoteCommand(rest);
  throw new UsageError("deerflow memory: use show, clear or promote");
}

/** A broken memory file: the reason on stderr, exit 1, the file left as it is. */
function reportInvalid(command: string, err: unknown): number {
  if (err instanceof HarnessError && err.code === "memory_invalid") {
    process.stderr.write(`deerflow memory ${command}: ${err.message}\n`);
    return 1;
  }
  throw err;
}

function show(argv: string[]): number {
  const v = parse(argv, { ...storageOptions, workspace: { type: "string" } }, "memory show");
  const workspace = v.workspace !== undefined ? workspaceArg(v.workspace, "memory show") : undefined;
  const storage = openStorage(v, "show");
  try {
    const doc = storage.document.read();
    writeJsonLine(workspace ? viewFor(doc, workspace) : doc);
    return 0;
  } catch (err) {
    return reportInvalid("show", err);
  } finally {
    storage.close();
  }
}

function clear(argv: string[]): number {
  const v = parse(argv, storageOptions, "memory clear");
  const storage = openStorage(v, "clear");
  try {
    const dropped = storage.clear();
    process.stderr.write(`deerflow memory clear: cleared ${storage.document.location}${dropped > 0 ? ` and ${dropped} queued update(s)` : ""}\n`);
    return 0;
  } finally {
    storage.close();
  }
}

function promoteCommand(argv: string[]): number {
  const v = parse(argv, { ...storageOptions, fact: { type: "string" }, workspace: { type: "string" }, section: { type: "string" } }, "memory promote");
  if ((v.fact === undefined) === (v.section === undefined)) throw new UsageError("deerflow memory promote: give --fact ID, or --workspace DIR --section NAME");
  let what: Parameters<typeof promote>[1];
  if (v.fact !== undefined) {
    if (v.workspace !== undefined) throw new UsageError("deerflow memory promote: --fact takes no --workspace (a fact knows where it came from)");
    what = { factId: v.fact };
  } else {
    const section = v.section!;
    if (!isSectionName(section)) throw new UsageError(`deerflow memory promote: --section is one of ${SECTION_NAMES.join(", ")}`);
    what = { workspace: workspaceArg(v.workspace, "memory promote"), section };
  }
  const storage = openStorage(v, "promote");
  try {
    // An explicit user change: threads render their memory snapshot again (DynamicContext).
    storage.document.update((doc) => promote(doc, what), { userChange: true });
  } catch (err) {
    if (err instanceof HarnessError && err.code === "memory_not_found") {
      process.stderr.write(`deerflow memory promote: ${err.message}\n`);
      return 1;
    }
    return reportInvalid("promote", err);
  } finally {
    storage.close();
  }
  process.stderr.write(`deerflow memory promote: ${"factId" in what ? `fact ${what.factId}` : `${what.section} of ${what.workspace}`} is now given to every workspace\n`);
  return 0;
}

const stderrLog = {
  info: (m: string) => process.stderr.write(`${m}\n`),
  warn: (m: string) => process.stderr.write(`${m}\n`),
};

export interface RunMemory {
  wiring: MemoryWiring;
  /** The run's own model and key: the key goes only to that same model, never to another endpoint. */
  useRunKey(model: ResolvedModel, apiKey: string | undefined): void;
  /** Extract everything queued, then say on stderr what happened. Never throws. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The data directory's memory for one CLI run in `workspace` (its real path, args.ts
 * workspaceArg); undefined when memory is off (`--no-memory`, `memory.enabled: false`).
 */
export function openRunMemory(config: HarnessConfig, dataDir: string, disabled: boolean | undefined, workspace: string): RunMemory | undefined {
  if (disabled || !config.memory.enabled) return undefined;
  // runKeys (models/factory.ts), the one rule: the run's key to its own model only, none to an
  // ad-hoc endpoint it was not given for; otherwise the environment.
  let keyFor: KeyFor | undefined;
  const service = new MemoryService({
    dataDir,
    config: () => config,
    apiKeyFor: (m) => keyFor?.(m),
    log: stderrLog,
  });
  return {
    // Trusted: see the header (the CLI has no Restricted Mode).
    wiring: { service: service.forWorkspace(workspace) },
    useRunKey: (model, apiKey) => {
      keyFor = runKeys(model, apiKey);
    },
    drain: async () => {
      try {
        const r = await service.process({ all: true });
        if (r.busy) process.stderr.write(`memory: another process is updating memory; ${r.remaining} update(s) stay queued\n`);
        else if (r.processed > 0) process.stderr.write(`memory: updated (${r.facts} facts)${r.failed > 0 ? `; ${r.failed} failed, queued for retry` : ""}\n`);
        else if (r.failed > 0) process.stderr.write(`memory: not updated; ${r.failed} extraction(s) failed, queued for retry\n`);
      } catch (err) {
        process.stderr.write(`memory: not updated: ${(err as Error).message}\n`);
      }
    },
    close: () => service.close(),
  };
}
