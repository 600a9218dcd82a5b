/**
 * Long-term memory from the command line (issue 15):
 * - `deerflow memory show [--data-dir DIR]` prints the stored memory as JSON (exit 1 with the
 *   reason when the file is broken; it is left as it is);
 * - `deerflow memory clear [--data-dir DIR]` empties it and drops every queued extraction.
 * And what `run`/`approve` use: the data directory's memory for one run, drained before the
 * process exits (a one-shot CLI cannot wait out the debounce), with one line on stderr.
 */
import { parse, writeJsonLine, UsageError } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { HarnessError } from "../errors.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { runKeys, type KeyFor } from "../models/factory.js";
import type { ResolvedModel } from "../models/resolvedModel.js";
import { clearMemory, memoryFile, readMemory } from "../memory/store.js";
import { MemoryService } from "../memory/service.js";
import type { MemoryWiring } from "../memory/hooks.js";
import { MemoryQueue } from "../memory/queue.js";

const options = { "data-dir": { type: "string" } } as const;

export function memoryCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub !== "show" && sub !== "clear") throw new UsageError("deerflow memory: use show or clear (deerflow memory show|clear [--data-dir DIR])");
  const v = parse(rest, options, `memory ${sub}`);
  const dataDir = v["data-dir"] ?? defaultDataDir();
  if (sub === "show") {
    try {
      writeJsonLine(readMemory(dataDir));
      return 0;
    } catch (err) {
      if (err instanceof HarnessError && err.code === "memory_invalid") {
        process.stderr.write(`deerflow memory show: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  }
  const queue = MemoryQueue.open(dataDir);
  try {
    const dropped = queue.clear();
    clearMemory(dataDir);
    process.stderr.write(`deerflow memory clear: cleared ${memoryFile(dataDir)}${dropped > 0 ? ` and ${dropped} queued update(s)` : ""}\n`);
    return 0;
  } finally {
    queue.close();
  }
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

/** The data directory's memory for one CLI run; undefined when memory is off (`--no-memory`, `memory.enabled: false`). */
export function openRunMemory(config: HarnessConfig, dataDir: string, disabled: boolean | undefined): RunMemory | undefined {
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
    wiring: { service },
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
