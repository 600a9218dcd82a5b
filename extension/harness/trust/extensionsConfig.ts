/**
 * Where the user's `extensions_config.json` is: the one rule, for MCP (mcp/sources.ts) and skills
 * (skills/enabledState.ts) alike, for reading and for writing. DeerFlow keeps MCP servers
 * (`mcpServers`) and skills (`skills.<name>.enabled`) in the same file, so the two must never
 * disagree about which file that is: a toggle written where MCP does not read (or the reverse)
 * reports success and changes nothing.
 *
 * DeerFlow's `ExtensionsConfig.resolve_config_path`, with the data dir where DeerFlow looks in its
 * working directory:
 * 1. the file `DEER_FLOW_EXTENSIONS_CONFIG_PATH` names, and only it (DeerFlow raises when it does
 *    not exist; here it is `missing`, which MCP reports and a skills write creates);
 * 2. else `<data-dir>/extensions_config.json` when it exists;
 * 3. else `<data-dir>/mcp_config.json` when it exists (DeerFlow's backward compatibility);
 * 4. else `<data-dir>/extensions_config.json`, where a writer creates it.
 *
 * The workspace's `.deerflow/extensions_config.json` is another file with another trust (the
 * workspace's, read only when trusted and approved); `workspaceExtensionsConfigFile` names it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

export const EXTENSIONS_CONFIG_FILE = "extensions_config.json";
export const LEGACY_MCP_CONFIG_FILE = "mcp_config.json";

export interface UserExtensionsConfig {
  readonly file: string;
  /** How it was found: named by the environment, the data dir's file, or the legacy mcp_config.json. */
  readonly via: "env" | "data-dir" | "legacy";
  /** The environment names a file that does not exist. */
  readonly missing: boolean;
}

export function userExtensionsConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): UserExtensionsConfig {
  const named = env.DEER_FLOW_EXTENSIONS_CONFIG_PATH;
  if (named) return { file: named, via: "env", missing: !existsSync(named) };
  const primary = join(dataDir, EXTENSIONS_CONFIG_FILE);
  const legacy = join(dataDir, LEGACY_MCP_CONFIG_FILE);
  if (!existsSync(primary) && existsSync(legacy)) return { file: legacy, via: "legacy", missing: false };
  return { file: primary, via: "data-dir", missing: false };
}

export function workspaceExtensionsConfigFile(workspaceFolder: string): string {
  return join(workspaceFolder, ".deerflow", EXTENSIONS_CONFIG_FILE);
}
