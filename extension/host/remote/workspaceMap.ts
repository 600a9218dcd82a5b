/**
 * Local workspace folders ↔ the workspaces a remote harness serves (issue 26 item 4). The one
 * module that owns the mapping: the harness client rewrites every request's `workspaceFolder`
 * (local → server) and every notification's back (server → local) through here, and the host
 * paths in answers (artifacts, changed files, a dev container config) likewise.
 *
 * A local folder maps to a served workspace by, in this order:
 * 1. the same real path: the server reaches the very folder (the same machine, a shared mount).
 *    Then the folder is *shared*: a host path the server names is a file this window can open.
 * 2. the served workspace's name equals the folder's basename (`deerflow serve --workspace
 *    app=/srv/app` serves `app`; a bare `--workspace /srv/app` is named after its basename too).
 *    Not shared: the server's files reach this window only through `files/read` (downloads.ts).
 * A folder with neither is not served; a request for it fails with `workspace_unserved`, whose
 * message names what the server does serve.
 *
 * No `vscode` import: the unit tests drive it with plain paths.
 */
import { realpathSync } from "node:fs";
import { basename, isAbsolute, relative, sep } from "node:path";
import type { RemoteHarnessInfo } from "../../protocol/rpc.js";

export interface LocalFolder {
  /** As the window names it (`uri.fsPath`): what the rest of the host compares. */
  path: string;
  /** Symlinks resolved; equal to `path` when it cannot be resolved. */
  realPath: string;
  /** The folder's basename (VS Code's `WorkspaceFolder.name` can differ; the basename is what a server's name follows). */
  name: string;
}

export interface ServedFolder {
  name: string;
  /** The server's path. */
  folder: string;
  /** The server's path resolved on this machine, when it exists here (a shared mount under a symlink). */
  realPath?: string;
}

export interface FolderMapping {
  local: string;
  server: string;
  name: string;
  shared: boolean;
}

/** A request for a local folder the remote harness serves no workspace for. */
export class WorkspaceUnservedError extends Error {
  readonly code = "workspace_unserved";
  constructor(message: string) {
    super(message);
    this.name = "WorkspaceUnservedError";
  }
}

export class WorkspaceMap {
  private readonly byLocal = new Map<string, FolderMapping>();
  private readonly byServer = new Map<string, FolderMapping>();

  constructor(
    local: readonly LocalFolder[],
    private readonly served: readonly ServedFolder[],
    /** For messages: the server as the user configured it (no token). */
    private readonly serverLabel: string,
  ) {
    const taken = new Set<string>();
    // Shared folders first, over all local folders, so a basename match never takes a workspace
    // that another local folder reaches by path.
    for (const l of local) {
      const s = served.find((w) => !taken.has(w.folder) && (w.folder === l.path || w.folder === l.realPath || (w.realPath !== undefined && w.realPath === l.realPath)));
      if (s) this.add({ local: l.path, server: s.folder, name: s.name, shared: true }, taken);
    }
    for (const l of local) {
      if (this.byLocal.has(l.path)) continue;
      const s = served.find((w) => !taken.has(w.folder) && w.name === l.name);
      if (s) this.add({ local: l.path, server: s.folder, name: s.name, shared: false }, taken);
    }
  }

  private add(m: FolderMapping, taken: Set<string>): void {
    taken.add(m.server);
    this.byLocal.set(m.local, m);
    this.byServer.set(m.server, m);
  }

  /** The mapping of a local folder, if the server serves it. */
  of(localFolder: string): FolderMapping | undefined {
    return this.byLocal.get(localFolder);
  }

  get mappings(): FolderMapping[] {
    return [...this.byLocal.values()];
  }

  /** The server's path for a local folder; throws `workspace_unserved` (naming what is served) when none. */
  toServer(localFolder: string): string {
    const m = this.byLocal.get(localFolder);
    if (m) return m.server;
    throw new WorkspaceUnservedError(this.unservedMessage(localFolder));
  }

  /** The local folder for a server path, if one maps to it. */
  toLocal(serverFolder: string): string | undefined {
    return this.byServer.get(serverFolder)?.local;
  }

  /**
   * A host path the server named (a file inside one of its workspaces) as a path in this
   * window: only for a shared folder; undefined otherwise (the file is not reachable here).
   */
  localPath(serverPath: string): string | undefined {
    if (!serverPath) return undefined;
    for (const m of this.byServer.values()) {
      if (!m.shared || !inside(m.server, serverPath)) continue;
      const rel = relative(m.server, serverPath);
      return rel === "" ? m.local : `${m.local}${sep}${rel}`;
    }
    return undefined;
  }

  /** A local path (an attachment) as the server's path: only inside a shared folder. */
  serverPath(localPath: string): string | undefined {
    for (const m of this.byLocal.values()) {
      if (!m.shared || !inside(m.local, localPath)) continue;
      const rel = relative(m.local, localPath);
      return rel === "" ? m.server : `${m.server}${sep}${rel}`;
    }
    return undefined;
  }

  unservedMessage(localFolder: string): string {
    const name = localFolder.split(/[\\/]/).filter(Boolean).pop() ?? localFolder;
    const list = this.served.length === 0 ? "no workspaces at all" : `these workspaces: ${this.served.map((w) => `${w.name} (${w.folder})`).join(", ")}`;
    return (
      `The remote harness at ${this.serverLabel} serves no workspace for the folder "${name}" (${localFolder}): it serves ${list}. ` +
      `Open one of those folders (the same path, or a folder with the same name), or serve this one with deerflow serve --workspace ${name}=DIR.`
    );
  }
}

/** The served workspaces of an `harness/initialize` answer, with their paths resolved here when they exist here. */
export function servedFolders(info: RemoteHarnessInfo, resolveReal: (path: string) => string | undefined): ServedFolder[] {
  return info.workspaces.map((w) => {
    const real = resolveReal(w.folder);
    return real === undefined ? { name: w.name, folder: w.folder } : { name: w.name, folder: w.folder, realPath: real };
  });
}

/** This window's folders (as it names them) mapped onto what a remote harness serves, symlinks resolved here. */
export function mapFolders(localPaths: readonly string[], info: RemoteHarnessInfo, serverLabel: string): WorkspaceMap {
  const local = localPaths.map((path) => ({ path, realPath: realOrUndefined(path) ?? path, name: basename(path) }));
  return new WorkspaceMap(local, servedFolders(info, realOrUndefined), serverLabel);
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}
