/**
 * Where an MCP server runs, and the transport to it (issue 23; VS Code's `IMcpHostDelegate`).
 *
 * - stdio, folder with a dev container sandbox: INSIDE the container, as its remoteUser, in
 *   /mnt/user-data/workspace, with the container's environment and the server's configured
 *   `env` (sandbox/devcontainer/containerStdio.ts). A stdio server is code, so it belongs on
 *   the same side of the trust boundary as `bash`.
 * - stdio otherwise: on this machine, with the user's login-shell PATH (shellPath.ts), a few
 *   login basics and the configured `env`; nothing else of the harness's environment
 *   (hostTransport.ts). Where: the entry's `cwd`, else a folder of the server's own in the data
 *   directory (`<data-dir>/workspaces/<key>/mcp/run/<server>`, 0700), never the workspace (issue
 *   31 item 3): `npx pkg` started in the workspace reads its `.npmrc` (`node-options=--require
 *   …`) and runs a planted `node_modules/.bin/pkg` ahead of the registry's, `python -m` imports
 *   from it, uv and poetry read their project files there; the agent can write all of them. VS
 *   Code starts such a server in the home folder (`extHostMcpNode.ts`); a folder of its own keeps
 *   the user's home out of it too. For the same reason the PATH loses its relative entries and
 *   those inside the workspace (`withoutWorkspaceEntries`), and no `npm_config_*`, `NODE_OPTIONS`,
 *   `PIP_CONFIG_FILE`, `UV_CONFIG_FILE`, `YARN_RC_FILENAME`, … of the harness's environment
 *   reaches a server: only LOGIN_BASICS pass. What the entry sets itself (`cwd`, `env`, a `PATH`)
 *   is the user's configuration and kept; for a workspace file's server it is part of the
 *   entry its consent covers (trust.ts).
 * - http / sse: from the harness, with the configured headers (the SDK's streamable HTTP and SSE
 *   client transports).
 */
import { createHash } from "node:crypto";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { DevContainerSandboxProvider } from "../sandbox/devcontainer/provider.js";
import { hostStdioTransport } from "./hostTransport.js";
import { containerStdioTransport } from "./containerTransport.js";
import { HarnessError } from "../errors.js";
import { isWithin } from "../sandbox/paths.js";
import { sanitizeName } from "./names.js";
import { hostServerPath, withoutWorkspaceEntries } from "./shellPath.js";
import type { McpLaunch } from "./types.js";

type StdioLaunch = Extract<McpLaunch, { type: "stdio" }>;

export interface TransportRequest {
  /** The server's name (its own working folder on the host). */
  readonly server: string;
  /** A key unique to this session (server + thread), for the container's lease. */
  readonly sessionKey: string;
  readonly signal: AbortSignal;
  readonly onStderr: (text: string) => void;
  readonly onExit: (how: string) => void;
}

export interface McpLauncher {
  /** Where stdio servers run: said in `mcp list` and at approval. */
  readonly where: "host" | "container";
  /**
   * The host folder a stdio server's relative command and arguments are found from: what a
   * workspace server's consent reads the files it names from (trust.ts), the same folder the
   * server starts in.
   */
  cwdOf(server: string, launch: StdioLaunch): string;
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

  /** `runRoot`: where each server's own working folder is made (outside the workspace: open.ts). */
  constructor(
    private readonly workspaceFolder: string,
    private readonly runRoot: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  cwdOf(server: string, launch: StdioLaunch): string {
    return launch.cwd ?? join(this.runRoot, `${sanitizeName(server).slice(0, 64)}-${createHash("sha256").update(server).digest("hex").slice(0, 8)}`);
  }

  async transport(launch: McpLaunch, req: TransportRequest): Promise<Transport> {
    if (launch.type !== "stdio") return httpTransport(launch);
    const basics = Object.fromEntries(LOGIN_BASICS.flatMap((k) => (this.env[k] !== undefined ? [[k, this.env[k]]] : [])));
    const cwd = this.cwdOf(req.server, launch);
    if (launch.cwd === undefined) this.makeRunDir(cwd);
    return hostStdioTransport({
      command: launch.command,
      args: launch.args,
      env: { ...basics, PATH: withoutWorkspaceEntries(await hostServerPath(this.env), this.workspaceFolder), ...launch.env },
      cwd,
      onStderr: req.onStderr,
      onExit: req.onExit,
    });
  }

  /** The server's own folder, 0700; never one that resolves into the workspace (a data directory there is refused earlier, consents.ts). */
  private makeRunDir(dir: string): void {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const real = realpathSync(dir);
    if (isWithin(real, this.workspaceFolder) || isWithin(real, realpathSync(this.workspaceFolder))) {
      throw new HarnessError("storage", `The MCP servers' folder ${dir} resolves into the workspace ${this.workspaceFolder}; choose another data directory.`);
    }
  }
}

export class ContainerLauncher implements McpLauncher {
  readonly where = "container" as const;

  constructor(
    private readonly provider: DevContainerSandboxProvider,
    private readonly workspaceFolder: string,
  ) {}

  /** Its servers start in the container's workspace, which is this folder. */
  cwdOf(): string {
    return this.workspaceFolder;
  }

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
