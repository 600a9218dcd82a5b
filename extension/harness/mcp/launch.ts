/**
 * Where an MCP server runs, and the transport to it (issue 23; VS Code's `IMcpHostDelegate`).
 *
 * - stdio, folder with a dev container sandbox: INSIDE the container, as its remoteUser, in
 *   /mnt/user-data/workspace, with the container's environment and the server's configured
 *   `env` (sandbox/devcontainer/containerStdio.ts). A stdio server is code, so it belongs on
 *   the same side of the trust boundary as `bash`.
 * - stdio otherwise: on this machine, in the workspace folder (or the entry's `cwd`), with the
 *   user's login-shell PATH (shellPath.ts), a few login basics and the configured `env`; nothing
 *   else of the harness's environment (hostTransport.ts).
 * - http / sse: from the harness, with the configured headers (the SDK's streamable HTTP and SSE
 *   client transports).
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { DevContainerSandboxProvider } from "../sandbox/devcontainer/provider.js";
import { hostStdioTransport } from "./hostTransport.js";
import { containerStdioTransport } from "./containerTransport.js";
import { hostServerPath } from "./shellPath.js";
import type { McpLaunch } from "./types.js";

export interface TransportRequest {
  /** A key unique to this session (server + thread), for the container's lease. */
  readonly sessionKey: string;
  readonly signal: AbortSignal;
  readonly onStderr: (text: string) => void;
  readonly onExit: (how: string) => void;
}

export interface McpLauncher {
  /** Where stdio servers run: said in `mcp list` and at approval. */
  readonly where: "host" | "container";
  transport(launch: McpLaunch, req: TransportRequest): Promise<Transport>;
}

/** What a host stdio server inherits (besides PATH): who it runs as, its terminal and locale. */
const LOGIN_BASICS = ["HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];

function httpTransport(launch: Extract<McpLaunch, { type: "http" | "sse" }>): Transport {
  const requestInit = { headers: { ...launch.headers } };
  const url = new URL(launch.url);
  return launch.type === "sse" ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
}

export class HostLauncher implements McpLauncher {
  readonly where = "host" as const;

  constructor(
    private readonly workspaceFolder: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  async transport(launch: McpLaunch, req: TransportRequest): Promise<Transport> {
    if (launch.type !== "stdio") return httpTransport(launch);
    const basics = Object.fromEntries(LOGIN_BASICS.flatMap((k) => (this.env[k] !== undefined ? [[k, this.env[k]]] : [])));
    return hostStdioTransport({
      command: launch.command,
      args: launch.args,
      env: { ...basics, PATH: await hostServerPath(this.env), ...launch.env },
      cwd: launch.cwd ?? this.workspaceFolder,
      onStderr: req.onStderr,
      onExit: req.onExit,
    });
  }
}

export class ContainerLauncher implements McpLauncher {
  readonly where = "container" as const;

  constructor(private readonly provider: DevContainerSandboxProvider) {}

  transport(launch: McpLaunch, req: TransportRequest): Promise<Transport> {
    if (launch.type !== "stdio") return Promise.resolve(httpTransport(launch));
    // A host `cwd` means nothing in the container: its servers start in the workspace.
    return Promise.resolve(
      containerStdioTransport({
        open: (handlers) =>
          this.provider.openStdio(`mcp\0${req.sessionKey}`, { cmd: [launch.command, ...launch.args], env: launch.env, signal: req.signal, ...handlers }),
        onStderr: req.onStderr,
        onExit: req.onExit,
      }),
    );
  }
}
