/**
 * The workspaces one `deerflow serve` process serves: `--workspace [NAME=]DIR`, each a folder this
 * machine can reach, with its store (the folder's SQLite file, or the shared Postgres database)
 * and its run system. A thread belongs to one workspace (`metadata.workspace`, the first one by
 * default); a request for a thread finds it in whichever workspace holds it.
 */
import { basename } from "node:path";
import { HarnessError } from "../errors.js";
import type { ThreadRecord } from "../store/threads.js";
import type { OpenWorkspace, Workspaces as HarnessWorkspaces } from "../server/workspaces.js";

/** A served folder: the harness's open workspace (store, run system, sandboxes, MCP) and its name. */
export interface ServedWorkspace extends OpenWorkspace {
  name: string;
}

export interface WorkspaceSpec {
  name: string;
  dir: string;
}

/** `NAME=DIR` or `DIR` (named after the folder). */
export function parseWorkspaceSpec(spec: string): WorkspaceSpec {
  const eq = spec.indexOf("=");
  const named = eq > 0 && /^[A-Za-z0-9._-]+$/.test(spec.slice(0, eq));
  const dir = named ? spec.slice(eq + 1) : spec;
  const name = named ? spec.slice(0, eq) : basename(dir.replace(/\/+$/, "")) || "workspace";
  return { name, dir };
}

/** Names must be unique: a thread's `metadata.workspace` and a remote client's mapping go by name. */
export function checkWorkspaceNames(specs: ReadonlyArray<{ name: string }>): void {
  const names = new Set<string>();
  for (const s of specs) {
    if (names.has(s.name)) throw new HarnessError("usage", `Two workspaces are named ${s.name}: name them with NAME=DIR.`);
    names.add(s.name);
  }
}

/**
 * The HTTP API's view of the served folders, by name. The folders are the harness's own
 * workspaces (server/workspaces.ts): the HTTP routes and the `/rpc` clients share one store, one
 * run system and one sandbox per folder.
 */
export class Workspaces {
  readonly list: readonly ServedWorkspace[];

  constructor(
    readonly harness: HarnessWorkspaces,
    specs: ReadonlyArray<{ name: string; folder: string }>,
  ) {
    checkWorkspaceNames(specs);
    this.list = specs.map((s) => ({ ...harness.get(s.folder), name: s.name }));
  }

  byName(name: string | undefined): ServedWorkspace {
    if (name === undefined) return this.list[0]!;
    const w = this.list.find((x) => x.name === name);
    if (!w) throw new HarnessError("usage", `No workspace named ${JSON.stringify(name)} here; this server has ${this.list.map((x) => x.name).join(", ")}.`);
    return w;
  }

  /** The workspace holding the thread, and its row; thread_not_found otherwise. */
  thread(threadId: string): { ws: ServedWorkspace; thread: ThreadRecord } {
    for (const ws of this.list) {
      const thread = ws.store.threads.get(threadId);
      if (thread) return { ws, thread };
    }
    throw new HarnessError("thread_not_found", `Thread ${threadId} does not exist.`);
  }
}
