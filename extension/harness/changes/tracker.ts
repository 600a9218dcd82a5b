/**
 * Which files a run changed, and what they held before (issue 13, "Changed files, reviewable and
 * revertible"). A decorator around the host file operations the agent's file tools use
 * (`SandboxFiles`, sandbox/files.ts), created per run by the worker: write_file and str_replace
 * go through it; reads, listings and searches pass straight through.
 *
 * Around each write to a virtual path, under a lock of its own per (run, path):
 * 1. the run's FIRST write to the path keeps the file's current bytes in the blob store (or
 *    "absent"), with the protected-path rule the path falls under, before anything is written;
 * 2. the write itself, unchanged (HostFiles: the trust boundary, the path lock, openChecked);
 * 3. the file's after-state sha256, read back, whether the write succeeded or not. So a process
 *    that dies mid-run still leaves rows that say what the file held after the last write.
 * When the run ends (any status) the worker calls `settle()`, which reads every after-state again.
 *
 * Not tracked: what bash changes. A command can touch any file in many ways (and in a dev
 * container, outside the file tools entirely); recording those needs a snapshot of the whole tree.
 * Shell runs ask for the user's approval by default (issue 13), and a file bash changed after a
 * file tool wrote it is caught at settle (its after-state is re-read), so a revert never undoes
 * more than the file tools did without saying so. Directories a write created are not tracked
 * either: a revert removes an added file, not the folders made for it.
 *
 * A provider whose files are not the host's (`Sandbox.files`, none today) is not wrapped: the
 * before-state is read here from the host path.
 */
import { posix } from "node:path";
import type { GrepMatch, GrepOptions, SandboxFiles, SearchResult } from "../sandbox/files.js";
import { mapVirtualPath, isNodeError, VIRTUAL_PATH_PREFIX } from "../sandbox/paths.js";
import { withPathLock } from "../sandbox/pathLock.js";
import { readFileChecked } from "../trust/openChecked.js";
import { classifyWrite } from "../trust/protectedPaths.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { sha256Hex } from "../store/blobs.js";
import { changedFiles, type ChangedFile, type ChangeKey, type FileChangeStore } from "../store/fileChanges.js";

/** The virtual path a change is recorded under, or undefined for one the tools refuse anyway. */
export function changePath(path: string): string | undefined {
  if (typeof path !== "string" || !path.startsWith(`${VIRTUAL_PATH_PREFIX}/`)) return undefined;
  const normal = posix.normalize(path).replace(/\/+$/, "");
  return normal.startsWith(`${VIRTUAL_PATH_PREFIX}/`) ? normal : undefined;
}

/**
 * A file's bytes through the trust boundary (containment, thread folders, no link followed at
 * open), or null when it does not exist. Throws for anything else (a directory, a refusal).
 */
export async function readCurrent(path: string, dirs: ThreadDirs): Promise<Buffer | null> {
  const real = resolveReadPath(path, dirs);
  try {
    return await readFileChecked(real);
  } catch (err) {
    if (isNodeError(err) && (err.code === "ENOENT" || err.code === "ENOTDIR")) return null;
    throw err;
  }
}

export interface TrackedFilesOptions {
  store: FileChangeStore;
  dirs: ThreadDirs;
  runId: string;
}

export class TrackedFiles implements SandboxFiles {
  constructor(
    private readonly inner: SandboxFiles,
    private readonly o: TrackedFilesOptions,
  ) {}

  readFile(path: string, startLine?: number, endLine?: number): Promise<string> {
    return this.inner.readFile(path, startLine, endLine);
  }

  // The writes are forwarded exactly as called (whatever options the tool passes, e.g. an
  // approved protected write), with the path they write recorded around them.
  writeFile(...args: Parameters<SandboxFiles["writeFile"]>): Promise<void> {
    return this.tracked(args[0], () => this.inner.writeFile(...args));
  }

  replaceInFile(...args: Parameters<SandboxFiles["replaceInFile"]>): Promise<boolean> {
    return this.tracked(args[0], () => this.inner.replaceInFile(...args));
  }

  listDir(path: string, maxDepth?: number, signal?: AbortSignal): Promise<string[]> {
    return this.inner.listDir(path, maxDepth, signal);
  }

  glob(path: string, pattern: string, includeDirs: boolean, maxResults: number, signal?: AbortSignal): Promise<SearchResult<string>> {
    return this.inner.glob(path, pattern, includeDirs, maxResults, signal);
  }

  grep(path: string, pattern: string, options: GrepOptions): Promise<SearchResult<GrepMatch>> {
    return this.inner.grep(path, pattern, options);
  }

  /**
   * The run ended: every path it wrote gets its after-state read again (bash may have changed or
   * deleted it since the last write). Never throws: a path that cannot be read now keeps the
   * after-state its last write recorded. Returns the run's changed files.
   */
  async settle(): Promise<ChangedFile[]> {
    for (const row of this.o.store.listRun(this.o.runId)) {
      if (row.thread_id !== this.o.dirs.threadId) continue;
      await this.recordAfter(this.key(row.path));
    }
    return changedFiles(this.o.store, this.o.runId);
  }

  private key(path: string): ChangeKey {
    return { threadId: this.o.dirs.threadId, runId: this.o.runId, path };
  }

  private tracked<T>(path: string, write: () => Promise<T>): Promise<T> {
    const normal = changePath(path);
    if (normal === undefined) return write();
    const key = this.key(normal);
    // Its own key space: HostFiles takes the real path's lock inside `write`, not reentrant.
    return withPathLock(`run-changes\0${this.o.runId}\0${normal}`, async () => {
      await this.recordBefore(key);
      try {
        return await write();
      } finally {
        await this.recordAfter(key);
      }
    });
  }

  private async recordBefore(key: ChangeKey): Promise<void> {
    const { store, dirs } = this.o;
    if (store.has(key)) return;
    let before: Buffer | null;
    let rule: string | null;
    try {
      before = await readCurrent(key.path, dirs);
      const verdict = classifyWrite(mapVirtualPath(key.path, dirs), dirs);
      rule = verdict.protected ? verdict.rule.id : null;
    } catch {
      // A path the boundary refuses, a directory, a FIFO: the write fails on it too, with the
      // error the tool reports. Nothing to record.
      return;
    }
    store.recordBefore(key, before, rule);
  }

  private async recordAfter(key: ChangeKey): Promise<void> {
    if (!this.o.store.has(key)) return;
    let after: Buffer | null;
    try {
      after = await readCurrent(key.path, this.o.dirs);
    } catch {
      return;
    }
    this.o.store.recordAfter(key, after === null ? null : sha256Hex(after));
  }
}
