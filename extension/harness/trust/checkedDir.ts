/**
 * Folders opened without following links, for a caller that creates or deletes a name inside a
 * checked folder (a revert removes a file the run added, or recreates one it deleted).
 *
 * A path check looks at a path; the sandbox can swap a parent folder for a link between the check
 * and the use, and `unlink(path)` would then delete whatever the link leads to. Node has no
 * `openat`/`unlinkat`, but on Linux `/proc/self/fd/N/name` resolves `name` inside the folder that
 * descriptor N holds, whatever happened to its path since. So:
 * - `openDirChain` opens the root, then each folder below it through the previous descriptor with
 *   O_NOFOLLOW | O_DIRECTORY: a link anywhere on the way is refused (ELOOP/ENOTDIR), never followed;
 * - every later use (open, create, rename, unlink) goes through the chain's last descriptor;
 * - `unlinkChecked` deletes only the very file the caller opened and checked: it renames the name
 *   to a random one in the same folder, compares that entry's inode with the open descriptor's,
 *   and only then unlinks it (a name swapped in the meantime is put back and refused).
 *
 * Where `/proc/self/fd` does not exist (macOS, Windows) the same steps run on absolute paths, each
 * folder opened without following a link at its last component and compared by inode with what
 * lstat saw; a swap of a folder higher up between two steps is then not caught.
 */
import { closeSync, constants, existsSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readlinkSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join, relative, sep } from "node:path";
import { HarnessError } from "../errors.js";
import { PATH_SWAPPED_MESSAGE, checkOpened } from "./openChecked.js";

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL } = constants;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

const PROC_FD = existsSync("/proc/self/fd");

export class CheckedDir {
  private closed = false;
  constructor(
    private readonly fd: number,
    /** Where the folder was when it was opened (absolute, link-free): for checks and messages. */
    readonly path: string,
  ) {}

  /** A path that reaches `name` inside THIS folder (Linux), or the plain path elsewhere. */
  at(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes(sep)) {
      throw new HarnessError("path_denied", `Not a single file name: ${JSON.stringify(name)}`);
    }
    return PROC_FD ? `/proc/self/fd/${this.fd}/${name}` : join(this.path, name);
  }

  /**
   * The folder opened is still the one at `path` (not moved since): checked before every use, so
   * that a folder moved away (into a place the checks never saw) is not written into at all.
   */
  private assertInPlace(): void {
    const held = fstatSync(this.fd);
    let now;
    try {
      now = PROC_FD ? undefined : lstatSync(this.path);
    } catch {
      throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
    }
    const moved = PROC_FD ? readlinkSync(`/proc/self/fd/${this.fd}`) !== this.path : now?.ino !== held.ino || now?.dev !== held.dev;
    if (moved) throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
  }

  /** An existing regular file, open for read and write, checked (one name only, see openChecked.ts). */
  openForUpdate(name: string): number {
    this.assertInPlace();
    const fd = openSync(this.at(name), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    return checkedOrClosed(fd, join(this.path, name));
  }

  /** A new file with `data`; EEXIST when the name is taken (by a link too). */
  createFile(name: string, data: Buffer): void {
    this.assertInPlace();
    const fd = checkedOrClosed(openSync(this.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o666), join(this.path, name));
    try {
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Delete `name` only if it is still the file open as `held` (the one the caller checked).
   * Throws HarnessError("path_denied") when the name now holds something else; that is put back.
   */
  unlinkChecked(name: string, held: number): void {
    this.assertInPlace();
    const parked = `.deerflow-revert-${randomUUID()}`;
    renameSync(this.at(name), this.at(parked));
    const moved = lstatSync(this.at(parked));
    const expected = fstatSync(held);
    if (moved.ino === expected.ino && moved.dev === expected.dev) {
      unlinkSync(this.at(parked));
      return;
    }
    // Not the file that was checked: give the name back without replacing anything made since.
    try {
      linkSync(this.at(parked), this.at(name));
      unlinkSync(this.at(parked));
    } catch {
      // The name was taken again meanwhile: the stranger stays under the parked name.
    }
    throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

function checkedOrClosed(fd: number, expected: string): number {
  try {
    checkOpened(fd, expected, "write");
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Opens one folder (through `parent` when given) without following a link; checks where it is. */
function openOne(path: string, via: string, expected: string): number {
  const fd = openSync(via, DIR_FLAGS);
  try {
    const info = fstatSync(fd);
    if (!info.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${expected}`), { code: "ENOTDIR" });
    if (PROC_FD) {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== expected) throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
    } else {
      const now = lstatSync(path);
      if (now.ino !== info.ino || now.dev !== info.dev) throw new HarnessError("path_denied", PATH_SWAPPED_MESSAGE);
    }
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * `target` (absolute, link-free, at or below `root`) opened folder by folder from `root` (which
 * the caller resolved once: the workspace folder may be a link the user chose). With `create`,
 * missing folders are made one level at a time inside the checked parent. Throws ENOENT when a
 * folder is missing (without `create`), ELOOP/ENOTDIR when one is a link or not a folder.
 */
export function openDirChain(root: string, target: string, options: { create?: boolean } = {}): CheckedDir {
  const rel = relative(root, target);
  if (rel.startsWith("..") || rel.includes(`${sep}..${sep}`)) {
    throw new HarnessError("path_denied", "The folder is outside the root it must be opened from");
  }
  let dir = new CheckedDir(openOne(root, root, root), root);
  try {
    for (const segment of rel.split(sep).filter((s) => s !== "")) {
      const path = join(dir.path, segment);
      if (options.create) {
        try {
          mkdirSync(dir.at(segment));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
      }
      const next = new CheckedDir(openOne(path, dir.at(segment), path), path);
      dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    dir.close();
    throw err;
  }
}
