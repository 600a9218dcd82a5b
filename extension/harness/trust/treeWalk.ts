/**
 * Walking a tree the sandbox may have shaped: ls, glob, grep and the delivery scan all walk here.
 *
 * - Symlinked folders are reported but never entered (os.walk's default, which DeerFlow's
 *   search relies on), and every folder is entered at most once by device and inode, so neither
 *   a link loop nor a bind-mount loop makes the walk endless.
 * - Asynchronous, one folder at a time, with a yield to the event loop every few hundred entries:
 *   a huge tree never blocks the harness, so the run's lease heartbeat and Cancel keep working.
 * - The run's AbortSignal is checked before every folder and every entry; an aborted walk rejects
 *   with the signal's reason.
 * - A folder is checked with lstat right before it is read: one swapped for a link after it was
 *   listed is skipped, not followed.
 *
 * Order (DeerFlow's `os.walk` top-down): per folder its subfolders, then its files, each sorted by
 * name; then the walk descends into the subfolders in that order.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";

export interface TreeEntry {
  /** Absolute host path, as reached (never through a followed link). */
  readonly path: string;
  /** Relative to the walk root, POSIX separators. */
  readonly rel: string;
  /** A folder, or a symlink to one (reported, not entered). */
  readonly isDir: boolean;
  readonly isSymlink: boolean;
  /** A regular file (not a link, FIFO, socket or device): the only kind worth opening. */
  readonly isFile: boolean;
}

export interface TreeWalkOptions {
  /** 1 = the root's children only. */
  readonly maxDepth?: number;
  readonly signal?: AbortSignal;
  /** Entries skipped along with everything below them; `relDir` is their folder ("" = root). */
  readonly ignore?: (name: string, relDir: string) => boolean;
  /** Folders visited but not entered when this says no (the dev container's protected folders). */
  readonly enter?: (entry: TreeEntry) => boolean;
}

/** Return false to stop the walk. */
export type TreeVisitor = (entry: TreeEntry) => boolean | Promise<boolean>;

const YIELD_EVERY = 256;

interface Pending {
  readonly dir: string;
  readonly rel: string;
  readonly depth: number;
}

async function listFolder(dir: string, relDir: string, ignore: TreeWalkOptions["ignore"]): Promise<TreeEntry[]> {
  let dirents;
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const entries: TreeEntry[] = [];
  for (const d of dirents) {
    if (ignore?.(d.name, relDir)) continue;
    const path = join(dir, d.name);
    const rel = relDir ? `${relDir}/${d.name}` : d.name;
    let isSymlink = d.isSymbolicLink();
    let isDir = d.isDirectory();
    let isFile = d.isFile();
    if (!isSymlink && !isDir && !isFile && !d.isFIFO() && !d.isSocket() && !d.isBlockDevice() && !d.isCharacterDevice()) {
      // The file system gave no type (DT_UNKNOWN): ask, without following.
      try {
        const info = await lstat(path);
        [isSymlink, isDir, isFile] = [info.isSymbolicLink(), info.isDirectory(), info.isFile()];
      } catch {
        continue;
      }
    }
    if (isSymlink) {
      // Shown as a folder when it points at one; never entered.
      isDir = await stat(path).then((s) => s.isDirectory(), () => false);
      isFile = false;
    }
    entries.push({ path, rel, isDir, isSymlink, isFile });
  }
  return entries.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

export async function walkTree(root: string, visit: TreeVisitor, options: TreeWalkOptions = {}): Promise<void> {
  const { signal, ignore, enter } = options;
  const maxDepth = options.maxDepth ?? Infinity;
  const seen = new Set<string>();
  const stack: Pending[] = [{ dir: root, rel: "", depth: 1 }];
  let sinceYield = 0;
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const { dir, rel, depth } = stack.pop() as Pending;
    let info;
    try {
      info = await lstat(dir);
    } catch {
      continue;
    }
    if (!info.isDirectory()) continue; // swapped for a link (or a file) since it was listed
    const key = `${info.dev}:${info.ino}`;
    if (seen.has(key)) continue;
    seen.add(key);

    const entries = await listFolder(dir, rel, ignore);
    const folders = entries.filter((e) => e.isDir);
    for (const entry of [...folders, ...entries.filter((e) => !e.isDir)]) {
      signal?.throwIfAborted();
      if (!(await visit(entry))) return;
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
    if (depth >= maxDepth) continue;
    const descend = folders.filter((e) => !e.isSymlink && (enter?.(e) ?? true));
    for (let i = descend.length - 1; i >= 0; i -= 1) {
      const next = descend[i] as TreeEntry;
      stack.push({ dir: next.path, rel: next.rel, depth: depth + 1 });
    }
  }
}
