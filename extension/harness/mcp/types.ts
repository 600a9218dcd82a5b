/**
 * The MCP subsystem's vocabulary (issue 23), after VS Code's `mcpTypes.ts`: a configuration
 * SOURCE (one file), the server DEFINITIONS read from it, and how each is LAUNCHED. Definitions
 * are plain data: who may start one (./trust.ts), where it runs (./launch.ts) and its lifecycle
 * (./connection.ts) are decided elsewhere, each in its own file.
 */

/** Who wrote the file: the user's own configuration runs as configured; a workspace's needs the user's yes. */
export type McpTrustScope = "user" | "workspace";

/** The file formats read: DeerFlow's `extensions_config.json` (`mcpServers`) and VS Code's `mcp.json` (`servers`). */
export type McpSourceFormat = "deerflow" | "vscode";

export interface McpSource {
  /** Host path of the file. */
  readonly file: string;
  readonly format: McpSourceFormat;
  readonly scope: McpTrustScope;
  /** For people: "data dir extensions_config.json", ".vscode/mcp.json", … */
  readonly label: string;
}

/** A string the harness could not resolve from the file alone: a VS Code `${input:…}` value. */
export interface McpInputRef {
  /** The secret's key: the source and the input's id (SecretStorage holds it under this key). */
  readonly key: string;
  readonly id: string;
  readonly description?: string;
  readonly password: boolean;
}

export type McpLaunch =
  | {
      readonly type: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      /** Resolved values ($VAR, ${env:…}, ${input:…}); never journaled, logged or shown. */
      readonly env: Readonly<Record<string, string>>;
      readonly cwd?: string;
    }
  | {
      readonly type: "http" | "sse";
      readonly url: string;
      /** Resolved values; never journaled, logged or shown. */
      readonly headers: Readonly<Record<string, string>>;
    };

export interface McpRouting {
  readonly mode: "off" | "prefer";
  readonly priority: number;
  readonly keywords: readonly string[];
}

export interface McpServerDefinition {
  /** The name in the file: `<name>_<tool>` is how its tools are named. */
  readonly name: string;
  readonly source: McpSource;
  readonly enabled: boolean;
  readonly description: string;
  readonly launch: McpLaunch;
  /**
   * sha256 of the entry as written (before any variable is resolved), with its source: the
   * entry's part of what the user approves for a workspace server (trust.ts `consentOf` adds the
   * workspace files its command line names). A changed entry has another fingerprint and asks
   * again; a changed environment variable does not.
   */
  readonly fingerprint: string;
  readonly toolNamePrefix: boolean;
  /** Seconds; DeerFlow's keys. `toolCallTimeoutS` is a stdio server's only (config.ts); absent: no per-call limit. */
  readonly toolCallTimeoutS?: number;
  readonly sessionInitTimeoutS: number;
  /** Tools of a user-config server that run without asking (`always_allow`); a workspace server's list is ignored. */
  readonly alwaysAllow: readonly string[];
  readonly routing: McpRouting;
  /** Per original tool name (DeerFlow `tools.<name>.routing`). */
  readonly toolRouting: Readonly<Record<string, Partial<McpRouting>>>;
  /** `${input:…}` values this entry needs; a missing one keeps the server from starting. */
  readonly inputs: readonly McpInputRef[];
  /** The keys of `inputs` with no value held yet: the server waits for "Set MCP Secret". */
  readonly missingInputs: readonly string[];
  /** Environment variable names its `$VAR` / `${env:…}` values read (shown at approval). */
  readonly readsEnv: readonly string[];
}

/** A bad entry or file: reported, skipped, and the rest still load. */
export interface McpDiagnostic {
  readonly file: string;
  readonly server?: string;
  readonly message: string;
}

/** DeerFlow's DEFAULT_MCP_SESSION_INIT_TIMEOUT. */
export const DEFAULT_SESSION_INIT_TIMEOUT_S = 60;
