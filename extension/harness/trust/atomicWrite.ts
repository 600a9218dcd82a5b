/**
 * The one atomic write of every file the harness keeps as a whole (consents, MCP overrides, the
 * skills' enabled state in extensions_config.json, the LLM circuit breaker's state, memory.json and
 * its generation). Readers, another harness process included, see the old file or the new one,
 * never half of one, and a crash leaves no stray temp file behind that a later write trips on.
 *
 * The order, and why:
 * 1. a temp file in the target's own folder (a rename across file systems is not atomic), created
 *    with O_EXCL (`wx`: never opens a file or link someone else put there) and a random name;
 * 2. its mode set exactly with fchmod (the create's mode is reduced by the umask), so a caller's
 *    0o600 or a kept 0o644 is what the file has, before a byte of content is in it;
 * 3. every byte written, then fsync: the content is on disk before the name points at it;
 * 4. rename over the target;
 * 5. fsync of the folder, so the rename itself survives a power loss (not on Windows, where a
 *    folder cannot be opened for it).
 * A failure at any step before the rename removes the temp file and throws the original error.
 *
 * The folder is the caller's to create (each has its own mode and its own check of where the
 * folder resolves); a target that is a symbolic link is replaced by the file, not written through
 * (a caller that means to write through resolves the link first, as skills/enabledState.ts does).
 */
import { randomBytes } from "node:crypto";
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /** The file's permission bits. Default 0o600: the harness's files are the user's alone. */
  readonly mode?: number;
}

export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const mode = options.mode ?? 0o600;
  const dir = dirname(file);
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let fd: number | undefined = openSync(temp, "wx", mode);
  try {
    if (process.platform !== "win32") fchmodSync(fd, mode);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, file);
  } catch (err) {
    if (fd !== undefined) closeQuietly(fd);
    removeQuietly(temp);
    throw err;
  }
  syncFolder(dir);
}

/** `value` as DeerFlow's and this harness's JSON files are written: two-space indent, a final newline. */
export function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, options);
}

/**
 * After the rename: makes the new name durable. Best effort: some file systems refuse a folder
 * fsync, and the rename has happened, so the write is not reported as failed for it.
 */
function syncFolder(dir: string): void {
  if (process.platform === "win32") return;
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Not supported here: the file is in place, only its durability across a power loss is weaker.
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed or never usable: nothing left to release.
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Not created, or already gone: nothing to clean up.
  }
}
