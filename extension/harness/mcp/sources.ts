/**
 * Where a workspace's MCP servers are configured (issue 23), in precedence order: the user's own
 * files first, so a workspace file can never shadow a user's server of the same name (and borrow
 * its `always_allow`).
 *
 * 1. the user's `extensions_config.json`, located by the one rule skills use too
 *    (trust/extensionsConfig.ts: the file `DEER_FLOW_EXTENSIONS_CONFIG_PATH` names, a missing one
 *    reported as DeerFlow raises; else `<data-dir>/extensions_config.json`; else the legacy
 *    `mcp_config.json`) — user;
 * 2. VS Code's profile `mcp.json` — user. The extension host knows the active profile's path and
 *    sends it; the CLI reads the default profile's file of a desktop VS Code, and says so;
 * 3. the workspace's `.deerflow/extensions_config.json` — workspace;
 * 4. the workspace's `.vscode/mcp.json` — workspace.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { userExtensionsConfig, workspaceExtensionsConfigFile } from "../trust/extensionsConfig.js";
import type { McpDiagnostic, McpSource } from "./types.js";

export interface SourceOptions {
  readonly dataDir: string;
  readonly workspaceFolder: string;
  /** The VS Code profile's mcp.json (from the host); absent: none is read. */
  readonly userMcpJson?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export function mcpSources(o: SourceOptions): { sources: McpSource[]; diagnostics: McpDiagnostic[] } {
  const env = o.env ?? process.env;
  const diagnostics: McpDiagnostic[] = [];
  const sources: McpSource[] = [];
  const user = userExtensionsConfig(o.dataDir, env);
  if (user.missing) diagnostics.push({ file: user.file, message: `DEER_FLOW_EXTENSIONS_CONFIG_PATH names a file that does not exist: ${user.file}` });
  const label = { env: "DEER_FLOW_EXTENSIONS_CONFIG_PATH", legacy: "the data directory's mcp_config.json", "data-dir": "the data directory's extensions_config.json" }[user.via];
  sources.push({ file: user.file, format: "deerflow", scope: "user", label });
  if (o.userMcpJson) sources.push({ file: o.userMcpJson, format: "vscode", scope: "user", label: "VS Code's user mcp.json" });
  sources.push(
    { file: workspaceExtensionsConfigFile(o.workspaceFolder), format: "deerflow", scope: "workspace", label: ".deerflow/extensions_config.json" },
    { file: join(o.workspaceFolder, ".vscode", "mcp.json"), format: "vscode", scope: "workspace", label: ".vscode/mcp.json" },
  );
  return { sources, diagnostics };
}

/**
 * The default profile's mcp.json of a desktop VS Code, for the CLI (the extension sends the
 * active profile's). `DEERFLOW_VSCODE_USER_MCP` names another file; "" reads none.
 */
export function defaultUserMcpJson(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  const named = env.DEERFLOW_VSCODE_USER_MCP;
  if (named !== undefined) return named === "" ? undefined : named;
  const home = env.HOME ?? homedir();
  const base =
    platform === "darwin"
      ? join(home, "Library", "Application Support")
      : platform === "win32"
        ? (env.APPDATA ?? join(home, "AppData", "Roaming"))
        : (env.XDG_CONFIG_HOME ?? join(home, ".config"));
  return join(base, "Code", "User", "mcp.json");
}
