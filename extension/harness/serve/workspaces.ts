/**
 * The workspaces one `deerflow serve` process serves: `--workspace [NAME=]DIR`, each a folder this
 * machine can reach, with its store (the folder's SQLite file, or the shared Postgres database)
 * and its run system. A thread belongs to one workspace (`metadata.workspace`, the first one by
 * default); a request for a thread finds it in whichever workspace holds it.
 */
import { basename } from "node:path";
import { HarnessError } from "../errors.js";
import { openWorkspaceStore, type WorkspaceStore } from "../store/db.js";
import { openRunSystem } from "../runs/services.js";
import type { RunManager } from "../runs/manager.js";
import type { ThreadRecord } from "../store/threads.js";

export interface ServedWorkspace {
  name: string;
  folder: string;
  store: WorkspaceStore;
  manager: RunManager;
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

export class Workspaces {
  readonly list: readonly ServedWorkspace[];

  constructor(specs: ReadonlyArray<{ name: string; folder: string }>, o: { dataDir: string; database?: string; leaseTtlMs?: number }) {
    const names = new Set<string>();
    const opened: ServedWorkspace[] = [];
    try {
      for (const s of specs) {
        if (names.has(s.name)) throw new HarnessError("usage", `Two workspaces are named ${s.name}: name them with NAME=DIR.`);
        names.add(s.name);
        const store = openWorkspaceStore({ dataDir: o.dataDir, workspaceFolder: s.folder, ...(o.database ? { database: o.database } : {}) });
        const manager = openRunSystem(store, o.leaseTtlMs ? { leaseTtlMs: o.leaseTtlMs } : {});
        opened.push({ name: s.name, folder: store.workspaceFolder, store, manager });
      }
    } catch (err) {
      for (const w of opened) w.store.close();
      throw err;
    }
    this.list = opened;
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

  close(): void {
    for (const w of this.list) w.store.close();
  }
}
