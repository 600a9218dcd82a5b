/**
 * `deerflow config check [--data-dir DIR]` (issue 33 item 5): reads the data directory's
 * configuration (config.yaml, or the file DEERFLOW_CONFIG names) and the user's
 * extensions_config.json as a run would, so every key the port does not act on is said on
 * stderr, the same lines a run prints (config/harnessConfig.ts announceUnsupported, mcp/config.ts).
 * stdout: one JSON line, `{config, unsupported}`. Exit 0, or 1 when a value is invalid (the
 * message names the file and line, and what to fix).
 */
import { parse, UsageError, writeJsonLine } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { HarnessError } from "../errors.js";
import { loadConfigFile } from "../config/harnessConfig.js";
import { loadDefinitions } from "../mcp/config.js";
import { mcpSources } from "../mcp/sources.js";

const options = { "data-dir": { type: "string" } } as const;

export function configCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub !== "check") throw new UsageError("deerflow config: use check (deerflow config check [--data-dir DIR])");
  const v = parse(rest, options, "config check");
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let loaded;
  try {
    loaded = loadConfigFile(dataDir);
  } catch (err) {
    if (!(err instanceof HarnessError)) throw err;
    process.stderr.write(`deerflow config check: ${err.message}\n`);
    return 1;
  }
  // The user's extensions_config.json only: a workspace's files are checked where they are used.
  const { sources } = mcpSources({ dataDir, workspaceFolder: dataDir, env: process.env });
  loadDefinitions(sources.filter((s) => s.scope === "user" && s.format === "deerflow"), { env: process.env, workspaceFolder: dataDir, home: process.env.HOME ?? "", secrets: () => undefined });
  writeJsonLine({ config: loaded?.file ?? null, unsupported: loaded?.unsupported ?? [] });
  return 0;
}
