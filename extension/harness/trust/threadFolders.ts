/**
 * Thread folders that cannot be redirected. A thread's uploads and outputs live inside the
 * workspace (`.deerflow/threads/<id>/{uploads,outputs}`), where the sandbox can write: bash in a
 * dev container can replace `outputs` with a symlink to `/` or to the harness's data dir. Were
 * that link followed, the host-side file tools, the upload copy and the output spill would all
 * write there.
 *
 * So every folder from the workspace down (`.deerflow`, `threads`, `<id>`, `uploads`/`outputs`)
 * is checked with lstat at every use: a missing one is created (one level at a time, `mkdir`
 * never follows a link at the last component), a symlink or a non-folder is refused with an error
 * that says which folder and what to do, and nothing is ever followed. The workspace folder itself
 * is the user's choice and may be reached through a link; ensureThreadDirs (below) resolves it once.
 *
 * A folder swapped between this check and a write is caught when the file is opened
 * (openChecked.ts), not here.
 */
import { existsSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { HarnessError } from "../errors.js";
import { threadDirs, type ThreadDirs } from "../threads/threadDirs.js";
import { THREAD_DATA_DIR_NAME, isNodeError, isWithin } from "../sandbox/paths.js";
import { createFileSync } from "./openChecked.js";

export type ThreadFolder = "uploads" | "outputs";

const BOTH: readonly ThreadFolder[] = ["uploads", "outputs"];

/** The folders to check, top-down, for the given thread folders. */
function chainOf(dirs: ThreadDirs, which: readonly ThreadFolder[]): string[] {
  const data = join(dirs.workspace, THREAD_DATA_DIR_NAME);
  const threads = join(data, "threads");
  const thread = join(threads, dirs.threadId);
  return [data, threads, thread, ...which.map((w) => dirs[w])];
}

function redirected(dir: string, dirs: ThreadDirs, what: string): HarnessError {
  const shown = relative(dirs.workspace, dir).split(sep).join("/");
  return new HarnessError(
    "thread_folder_redirected",
    `The thread folder ${shown} ${what}, not a real folder. DeerFlow never follows it, so that nothing in the ` +
      "sandbox can redirect where the harness reads and writes. Remove it (something in the sandbox may have " +
      "replaced the folder) and run again.",
  );
}

/** One folder inside the thread's data (a thread folder, or one the harness keeps in outputs). */
export function ensureRealFolder(dir: string, dirs: ThreadDirs): void {
  let info;
  try {
    info = lstatSync(dir);
  } catch (err) {
    if (!isNodeError(err) || err.code !== "ENOENT") throw err;
    try {
      mkdirSync(dir);
    } catch (mkdirErr) {
      if (!isNodeError(mkdirErr) || mkdirErr.code !== "EEXIST") throw mkdirErr;
    }
    info = lstatSync(dir);
  }
  if (info.isSymbolicLink()) throw redirected(dir, dirs, "is a symbolic link");
  if (!info.isDirectory()) throw redirected(dir, dirs, "is a file");
}

/**
 * Make sure the thread folders exist as real folders, from `.deerflow` down. Throws
 * HarnessError("thread_folder_redirected") at the first symlink or non-folder. Cheap (a handful
 * of lstat calls): callers run it at every use, not once per run.
 */
export function ensureThreadFolders(dirs: ThreadDirs, which: readonly ThreadFolder[] = BOTH): void {
  for (const dir of chainOf(dirs, which)) ensureRealFolder(dir, dirs);
}

/**
 * `.deerflow/.gitignore` (`*`) keeps thread data out of the user's repository. Created only when
 * nothing is there; never written through a link (O_EXCL fails on any existing name, O_NOFOLLOW
 * on a link), so a planted dangling link cannot make the harness create a file elsewhere.
 */
export function ensureThreadDataIgnore(dirs: ThreadDirs): void {
  const ignore = join(dirs.workspace, THREAD_DATA_DIR_NAME, ".gitignore");
  try {
    createFileSync(ignore, "*\n");
  } catch (err) {
    if (!isNodeError(err) || (err.code !== "EEXIST" && err.code !== "ELOOP")) throw err;
  }
}

/**
 * Create the thread's directories (idempotent) and return them as real paths, so that later
 * containment checks compare real paths with real paths.
 *
 * The workspace folder is the user's choice: a link to it is resolved, once. Below it nothing is
 * resolved: a symlink where `.deerflow`, `threads`, the thread's folder, `uploads` or `outputs`
 * should be is refused (HarnessError "thread_folder_redirected", ensureThreadFolders above),
 * because the sandbox can plant one (it used to be followed, and the next run wrote wherever it led).
 */
export function ensureThreadDirs(workspaceFolder: string, threadId: string): ThreadDirs {
  const given = threadDirs(workspaceFolder, threadId);
  if (!existsSync(given.workspace)) {
    throw new HarnessError("workspace_mismatch", `Workspace folder does not exist: ${given.workspace}`);
  }
  const dirs = threadDirs(realpathSync(given.workspace), threadId);
  ensureThreadFolders(dirs);
  ensureThreadDataIgnore(dirs);
  return dirs;
}

/** Which thread folder a host path lies in (lexically), if any. */
export function threadFolderOf(hostPath: string, dirs: ThreadDirs): ThreadFolder | undefined {
  return BOTH.find((w) => isWithin(hostPath, dirs[w]));
}
