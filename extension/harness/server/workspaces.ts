/**
 * The workspace folders this harness process serves: one store (SQLite file) and one RunManager
 * per folder, opened on first use and kept open for the life of the process, plus the folder's
 * sandbox provider(s).
 *
 * Opening a folder settles the runs a dead harness left behind (`manager.recover()`): a run whose
 * process was killed is marked `interrupted` at the next harness start, never left `running`.
 */
import { realpathSync, statSync } from "node:fs";
import type { HarnessToHost } from "../../protocol/rpc.js";
import { HarnessError, errorMessage } from "../errors.js";
import { openWorkspaceStore, type WorkspaceStore } from "../store/db.js";
import { openRunSystem } from "../runs/services.js";
import { DatabaseClock, startRunSweep } from "../runs/sweep.js";
import type { RunManager } from "../runs/manager.js";
import { createSandboxProvider, resolveSandboxKind, type SandboxKind } from "../sandbox/select.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import { openMcpRegistry } from "../mcp/open.js";
import type { McpRegistry } from "../mcp/registry.js";

export interface OpenWorkspace {
  /** The folder as the host first named it (used in notifications back to the host). */
  readonly hostPath: string;
  /** realpath of the folder: the store's identity. */
  readonly folder: string;
  readonly store: WorkspaceStore;
  readonly manager: RunManager;
  /** Threads whose viewed images are being cleared: a run may not start on them meanwhile. */
  readonly clearing: Set<string>;
}

export interface SandboxChoice {
  provider: SandboxProvider;
  kind: SandboxKind;
  /** Whether the run may execute commands on the host (local provider only). */
  allowHostCommands: boolean;
}

type SandboxStatus = HarnessToHost["sandbox/status"];

export class Workspaces {
  private readonly byFolder = new Map<string, OpenWorkspace>();
  /** The run sweeps of a server's workspaces (runs/sweep.ts), by folder. */
  private readonly sweeps = new Map<string, () => void>();
  /** `<folder>\0<kind>` → provider; a dev container is brought up once per folder and shared. */
  private readonly providers = new Map<string, SandboxProvider>();
  /** `<folder>\0<provider key>` → the folder's MCP servers for that sandbox (issue 23): sessions outlive a run, end with the process. */
  private readonly mcp = new Map<string, McpRegistry>();

  /** `deerflow serve`: the only folders it serves (real paths), by name. */
  private readonly served: ReadonlyMap<string, string> | undefined;

  constructor(
    private readonly session: Session,
    private readonly log: Logger,
    private readonly onSandboxStatus: (status: SandboxStatus) => void,
    /**
     * A server's workspaces (`deerflow serve --workspace`): a request naming any other folder is
     * refused (a client must not open the server's other folders), and the stores may be on Postgres.
     */
    private readonly server?: { folders: ReadonlyArray<{ name: string; folder: string }>; database?: string },
  ) {
    if (server) this.served = new Map(server.folders.map((f) => [realFolder(f.folder), f.name]));
  }

  /** A served folder's name (`deerflow serve`); undefined for the editor's harness. */
  nameOf(ws: OpenWorkspace): string | undefined {
    return this.served?.get(ws.folder);
  }

  get(hostPath: string): OpenWorkspace {
    const folder = this.served ? this.servedFolder(hostPath) : realFolder(hostPath);
    const known = this.byFolder.get(folder);
    if (known) return known;
    const database = this.server?.database;
    const store = openWorkspaceStore({ dataDir: this.session.dataDir, workspaceFolder: folder, ...(database ? { database } : {}) });
    try {
      // A server's workers share the database: lease times are its clock's, with DeerFlow's
      // run_ownership lease and grace (runs/sweep.ts). The editor's harness is alone on its file.
      const ownership = this.server ? this.session.config.run_ownership : undefined;
      const clock = this.server ? new DatabaseClock(store.db) : undefined;
      const manager = openRunSystem(store, ownership ? { leaseTtlMs: ownership.lease_seconds * 1000, graceMs: ownership.grace_seconds * 1000, ...(clock ? { clock } : {}) } : {});
      const recovered = manager.recover();
      if (recovered.length > 0) this.log.info(`${folder}: ${recovered.length} run(s) of a stopped harness marked interrupted.`);
      const ws: OpenWorkspace = { hostPath, folder: store.workspaceFolder, store, manager, clearing: new Set() };
      this.byFolder.set(folder, ws);
      // Each serve process settles orphaned runs by itself, touched or not (issue 32 item 4).
      if (this.server) this.sweeps.set(folder, startRunSweep(manager, clock, this.log, this.served?.get(folder) ?? folder));
      this.log.debug(`Opened the harness database of ${folder} (${store.file}).`);
      return ws;
    } catch (err) {
      store.close();
      throw err;
    }
  }

  /** The served folder a request names; workspace_mismatch for any other (its path is not resolved on the server). */
  private servedFolder(path: string): string {
    for (const folder of this.served!.keys()) if (folder === path) return folder;
    let real: string | undefined;
    try {
      real = realpathSync(path);
    } catch {
      /* not a folder of this machine: refused below */
    }
    if (real !== undefined && this.served!.has(real)) return real;
    const list = [...this.served!].map(([f, n]) => `${n} (${f})`).join(", ");
    throw new HarnessError("workspace_mismatch", `This server does not serve ${path}; its workspaces are ${list}.`);
  }

  all(): OpenWorkspace[] {
    return [...this.byFolder.values()];
  }

  /**
   * The sandbox for a run, from the settings. An untrusted workspace gets the local provider with
   * host commands off, whatever the settings say: bringing up its dev container would run its
   * devcontainer.json (build steps, lifecycle commands) before the user trusted it.
   */
  sandbox(ws: OpenWorkspace): SandboxChoice {
    const { sandbox, workspace_trusted } = this.session.settings;
    if (!workspace_trusted) return { provider: this.untrusted(ws), kind: "local", allowHostCommands: false };
    // No I/O beyond looking for devcontainer.json; a dev container comes up on the first command.
    const kind = resolveSandboxKind(sandbox.provider, { workspaceFolder: ws.folder });
    const key = `${ws.folder}\0${kind}`;
    let provider = this.providers.get(key);
    if (!provider) {
      // One provider per folder and kind, kept: it owns the folder's container and its lease.
      provider = createSandboxProvider(kind, {
        workspaceFolder: ws.folder,
        // Approvals of the folder's dev container configuration live beside its database.
        dataDir: this.session.dataDir,
        onEvent: (e) => {
          this.log.info(`Dev container of ${ws.folder}: ${e.status}${e.detail ? ` — ${e.detail}` : ""}`);
          this.onSandboxStatus({ workspaceFolder: ws.hostPath, status: e.status, ...(e.detail ? { detail: e.detail } : {}) });
        },
      }).provider;
      this.providers.set(key, provider);
    }
    return { provider, kind, allowHostCommands: kind === "local" && sandbox.allow_host_commands };
  }

  /**
   * The folder's MCP servers where its runs' sandbox is (mcp/open.ts): stdio servers inside its
   * dev container when that is the sandbox. Workspace-file servers never start in an untrusted
   * workspace (asked on every use: trust may change while the harness runs).
   */
  mcpRegistry(ws: OpenWorkspace, sandbox: SandboxChoice): McpRegistry {
    const key = `${ws.folder}\0${sandbox.kind}\0${this.session.settings.workspace_trusted ? "trusted" : "untrusted"}`;
    let registry = this.mcp.get(key);
    if (!registry) {
      registry = openMcpRegistry({
        workspaceFolder: ws.folder,
        dataDir: this.session.dataDir,
        sandbox: sandbox.provider,
        workspaceTrusted: this.session.settings.workspace_trusted,
        log: (level, message) => this.log[level](`MCP (${ws.folder}): ${message}`),
      });
      this.mcp.set(key, registry);
    }
    return registry;
  }

  /** A deleted thread's MCP sessions end, in every registry of its folder. */
  async closeMcpThread(ws: OpenWorkspace, threadId: string): Promise<void> {
    const mine = [...this.mcp.entries()].filter(([key]) => key.startsWith(`${ws.folder}\0`)).map(([, r]) => r);
    await Promise.allSettled(mine.map((r) => r.closeThread(threadId)));
  }

  private untrusted(ws: OpenWorkspace): SandboxProvider {
    const key = `${ws.folder}\0untrusted`;
    let p = this.providers.get(key);
    if (!p) this.providers.set(key, (p = new UntrustedLocalSandboxProvider({ workspaceFolder: ws.folder })));
    return p;
  }

  /** Stops sandboxes (dev containers this process started) and closes every store. */
  async close(): Promise<void> {
    // MCP servers first: those in a dev container go with it, the others are ours to stop.
    const registries = [...this.mcp.values()];
    this.mcp.clear();
    await Promise.allSettled(registries.map((r) => r.dispose()));
    const providers = [...this.providers.values()];
    this.providers.clear();
    const results = await Promise.allSettled(providers.map((p) => p.shutdown?.() ?? Promise.resolve()));
    for (const r of results) if (r.status === "rejected") this.log.warn(`Stopping a sandbox failed: ${errorMessage(r.reason)}`);
    this.closeStores();
  }

  /** Synchronous: for the process's `exit` hook, where nothing asynchronous runs any more. */
  closeStores(): void {
    for (const stop of this.sweeps.values()) stop();
    this.sweeps.clear();
    for (const ws of this.byFolder.values()) {
      try {
        ws.store.close();
      } catch {
        /* already closed */
      }
    }
    this.byFolder.clear();
  }
}

export const UNTRUSTED_COMMANDS_REASON =
  "Commands are disabled because this workspace is not trusted (VS Code workspace trust). " +
  "Files can still be read and written; trust the folder (Workspaces: Manage Workspace Trust) to let the agent run commands.";

/** The local provider of an untrusted workspace: the bash tool refuses every command, saying why. */
class UntrustedLocalSandboxProvider extends LocalSandboxProvider {
  readonly commandsDisabledReason = UNTRUSTED_COMMANDS_REASON;
}

/** The folder's realpath; a readable error when it is not an accessible directory. */
function realFolder(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    throw new HarnessError("storage", `Workspace folder ${path} is not accessible: ${errorMessage(err)}`, { cause: err });
  }
  if (!statSync(real).isDirectory()) throw new HarnessError("storage", `Workspace folder ${path} is not a directory.`);
  return real;
}
