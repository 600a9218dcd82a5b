/**
 * Opening a checked path so that what was checked is what gets read or written.
 *
 * The path rules (containment, protected paths, thread folders) look at a path; the sandbox can
 * change the tree between that look and the open (a background loop in the container flipping a
 * folder to a symlink into `.git`). So every open here:
 * - never follows a link at the last component (O_NOFOLLOW), never truncates before the check
 *   (O_TRUNC would destroy the wrong file), and never blocks on a FIFO (O_NONBLOCK: opening a
 *   FIFO planted in the workspace would otherwise hang a thread-pool thread, or the event loop);
 * - then asks where the open file really is: on Linux the kernel says it (`/proc/self/fd/N`),
 *   elsewhere the path must still lead, without links, to the same inode. Anything else is refused
 *   before a byte is read or written;
 * - accepts only regular files (a directory is EISDIR, as the tools expect);
 * - for a write, accepts only a file with one name: a hard link planted in the workspace to
 *   `.git/hooks/pre-commit` is the same inode under an innocent name, and no path check can see
 *   the other names, so a file with more than one link is never written (or truncated).
 *
 * What remains: when a parent is swapped at the exact moment of a create, O_CREAT may leave an
 * empty, non-executable file where the link pointed; it is refused before anything is written.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync, realpathSync, writeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { HarnessError } from "../errors.js";

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_APPEND } = constants;
// Absent on Windows, where links are not the sandbox's tool (the container runs on Linux).
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const WRITE_FLAGS = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK;

export const PATH_SWAPPED_MESSAGE =
  "The path was replaced by a link while the harness opened it (something in the sandbox changed it); it was not used";
export const NOT_REGULAR_FILE_MESSAGE = "Only regular files can be read or written, not a FIFO, socket or device";
export const HARD_LINKED_MESSAGE =
  "The file has more than one hard link: writing it would also change its other names, which no path check can see " +
  "(one may be a git hook or a VS Code task). DeerFlow does not write through it; write a new file instead, or ask the user to remove the extra links";

/** Where the kernel says an open fd points (Linux); undefined where the platform does not say. */
function kernelPathOf(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

function isDirectoryError(): NodeJS.ErrnoException {
  return Object.assign(new Error("EISDIR: illegal operation on a directory"), { code: "EISDIR" });
}

/**
 * Throws unless `fd` is the regular file at `expected` (absolute, link-free) right now; for a
 * write (`purpose` "write"), also unless it is the file's only name.
 */
export function checkOpened(fd: number, expected: string, purpose: "read" | "write" = "read"): void {
  const info = fstatSync(fd);
  if (info.isDirectory()) throw isDirectoryError();
  if (!info.isFile()) throw new HarnessError("path_denied", NOT_REGULAR_FILE_MESSAGE);
  if (purpose === "write" && info.nlink > 1) throw new HarnessError("path_denied", HARD_LINKED_MESSAGE);
  const actual = kernelPathOf(fd);
  if (actual !== undefined) {
    if (actual !== expected) throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
    return;
  }
  let now;
  try {
    now = lstatSync(expected);
  } catch {
    throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
  }
  if (now.ino !== info.ino || now.dev !== info.dev || realpathSync(dirname(expected)) !== dirname(expected)) {
    throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
  }
}

async function openHandle(path: string, flags: number, purpose: "read" | "write"): Promise<FileHandle> {
  const handle = await open(path, flags, 0o666);
  try {
    checkOpened(handle.fd, path, purpose);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** An open, checked handle for reading (grep reads a prefix first); the caller closes it. */
export function openForRead(path: string): Promise<FileHandle> {
  return openHandle(path, READ_FLAGS, "read");
}

export async function readFileChecked(path: string): Promise<Buffer> {
  const handle = await openForRead(path);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Overwrite (truncated only after the check) or append; the file is created when missing. */
export async function writeFileChecked(path: string, data: string, mode: "overwrite" | "append"): Promise<void> {
  const handle = await openHandle(path, WRITE_FLAGS | (mode === "append" ? O_APPEND : 0), "write");
  try {
    if (mode === "overwrite") await handle.truncate(0);
    await handle.writeFile(data, "utf8");
  } finally {
    await handle.close();
  }
}

/**
 * For synchronous callers (view_image, the uploads outline): at most `maxBytes` of a checked
 * regular file. Never blocks on a FIFO, never follows a swapped-in link.
 */
export function readFileCheckedSync(path: string, maxBytes = Infinity): Buffer {
  const fd = openSync(path, READ_FLAGS);
  try {
    checkOpened(fd, path);
    const size = Math.min(fstatSync(fd).size, maxBytes);
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * An existing regular file at `path`, open for reading and writing, checked (never created, never
 * truncated before the check): for a caller that must read what is there and replace it through
 * the same descriptor (a revert compares the content with what the run left, then restores). The
 * caller closes it.
 */
export function openForUpdateSync(path: string): number {
  return checkedOrClosed(openSync(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK), path, "write");
}

/** A new file, created with `mode` (never chmod-ed afterwards: no moment where it is wider). */
function createChecked(path: string, mode = 0o666): number {
  return checkedOrClosed(openSync(path, WRITE_FLAGS | O_EXCL, mode), path, "write");
}

/** `fd` once checkOpened accepts it; closed (and the refusal thrown) otherwise. */
function checkedOrClosed(fd: number, path: string, purpose: "read" | "write"): number {
  try {
    checkOpened(fd, path, purpose);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** A new file (EEXIST when the name is taken, by a link too), checked, with `data`; `mode` at creation (before the umask). */
export function createFileSync(path: string, data: string | Buffer, mode = 0o666): void {
  const fd = createChecked(path, mode);
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copy `source` (a file the caller was allowed to name: trust/attachments.ts) into a new, checked
 * file at `path`, created 0600: a copy of someone's file is readable by its owner only, whatever
 * the source's mode (an upload on a shared server is not world-readable).
 */
export function copyToNewFileSync(source: string, path: string): void {
  const fd = createChecked(path, 0o600);
  const input = openSync(source, O_RDONLY | O_NONBLOCK);
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (;;) {
      const n = readSync(input, buffer, 0, buffer.length, null);
      if (n === 0) break;
      let written = 0;
      while (written < n) written += writeSync(fd, buffer, written, n - written);
    }
  } finally {
    closeSync(input);
    closeSync(fd);
  }
}
