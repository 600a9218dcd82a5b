/**
 * One folder's MCP registry, as an entry point opens it (issue 23): the CLI per invocation, the
 * harness server per open folder. It puts the pieces in their places under the data directory
 * (`<data-dir>/workspaces/<key>/mcp/`: the consents, the panel's on/off state, the per-server
 * logs, each host stdio server's working folder under `run/`) and picks where stdio servers run from the run's sandbox: inside the folder's dev
 * container when that is the sandbox, else on this machine. The caller disposes it.
 */
import { join } from "node:path";
import type { SandboxProvider } from "../sandbox/provider.js";
import { DevContainerSandboxProvider } from "../sandbox/devcontainer/provider.js";
import { ContainerLauncher, HostLauncher, type McpLauncher } from "./launch.js";
import { McpServerLogs } from "./logs.js";
import { McpOverrides } from "./overrides.js";
import { McpRegistry, type RegistryContext } from "./registry.js";
import { McpApprovals } from "./trust.js";
import { DEFAULT_AUTO_PROMOTE_TOP_K, DEFAULT_AUTO_THRESHOLD, clampTopK, type ToolSearchSettings } from "./deferred.js";

export interface OpenMcpOptions {
  readonly workspaceFolder: string;
  readonly dataDir: string;
  /** The run's sandbox: a dev container provider runs stdio servers inside its container. */
  readonly sandbox?: SandboxProvider;
  readonly env?: NodeJS.ProcessEnv;
  /** VS Code's Restricted Mode is false; the CLI runs in a folder its user chose (true). */
  readonly workspaceTrusted?: boolean;
  readonly userMcpJson?: string;
  readonly secrets?: (key: string) => string | undefined;
  readonly log?: (level: "info" | "warn", message: string) => void;
  readonly notes?: readonly string[];
}

export function openMcpRegistry(o: OpenMcpOptions): McpRegistry {
  const env = o.env ?? process.env;
  const approvals = new McpApprovals(o.dataDir, o.workspaceFolder);
  const dir = approvals.dir;
  const launcher: McpLauncher =
    o.sandbox instanceof DevContainerSandboxProvider ? new ContainerLauncher(o.sandbox, approvals.workspaceFolder) : new HostLauncher(o.workspaceFolder, join(dir, "run"), env);
  const context = (): RegistryContext => ({
    workspaceTrusted: o.workspaceTrusted ?? true,
    ...(o.userMcpJson ? { userMcpJson: o.userMcpJson } : {}),
    // The CLI has no secret storage: config.ts then reads DEERFLOW_MCP_INPUT_<ID>.
    secrets: o.secrets ?? (() => undefined),
    env,
  });
  return new McpRegistry({
    workspaceFolder: o.workspaceFolder,
    dataDir: o.dataDir,
    launcher,
    logs: new McpServerLogs(join(dir, "logs")),
    approvals,
    overrides: new McpOverrides(dir),
    context,
    ...(o.log ? { log: o.log } : {}),
    ...(o.notes ? { notes: o.notes } : {}),
  });
}

/** DeerFlow's `tool_search` config section, as the run's deferral settings. */
export function toolSearchSettings(section: { enabled?: boolean; auto_threshold?: number; auto_promote_top_k?: number } | undefined): ToolSearchSettings {
  return {
    ...(section?.enabled !== undefined ? { enabled: section.enabled } : {}),
    autoThreshold: section?.auto_threshold ?? DEFAULT_AUTO_THRESHOLD,
    autoPromoteTopK: clampTopK(section?.auto_promote_top_k ?? DEFAULT_AUTO_PROMOTE_TOP_K),
  };
}
