/**
 * Copying user files into a thread's uploads folder (`/mnt/user-data/uploads`), shared by the CLI's
 * `--upload` and the panel's attachments.
 *
 * Differs from DeerFlow on purpose: the same name uploaded again with OTHER content does not
 * overwrite the earlier file (an earlier message still points at it); the new one gets a free name
 * (`report-1.pdf`). The same bytes again reuse the existing file.
 *
 * The uploads folder is writable from the sandbox, so the copy goes through the trust boundary:
 * the thread folders are checked at this use (a folder replaced with a link is refused), a name
 * taken by anything but a regular file (a planted link, dangling or not) counts as taken and is
 * never written through, and the copy is a new file opened with checks (trust/openChecked.ts).
 */
import { lstatSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { ThreadDirs } from "./threadDirs.js";
import type { UploadedFile } from "../state/threadState.js";
import { copyToNewFileSync, createFileSync } from "../trust/openChecked.js";
import { ensureThreadFolders } from "../trust/threadFolders.js";
import { isNodeError } from "../sandbox/paths.js";

/** What is at `path`, without following a link. */
function entryAt(path: string): "none" | "file" | "other" {
  try {
    return lstatSync(path).isFile() ? "file" : "other";
  } catch (err) {
    if (isNodeError(err) && err.code === "ENOENT") return "none";
    throw err;
  }
}

function sameBytes(existing: string, src: string | Buffer): boolean {
  const size = typeof src === "string" ? statSync(src).size : src.length;
  return statSync(existing).size === size && readFileSync(existing).equals(typeof src === "string" ? readFileSync(src) : src);
}

/** A name in `dir` for `src` (a file or bytes) named `name`: its own, or `stem-N.ext` when that name holds something else. */
function freeName(dir: string, name: string, src: string | Buffer): { name: string; exists: boolean } {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${stem}-${i}${ext}`;
    const at = entryAt(join(dir, candidate));
    if (at === "none") return { name: candidate, exists: false };
    if (at === "file" && sameBytes(join(dir, candidate), src)) return { name: candidate, exists: true };
  }
}

const uploaded = (name: string, size: number): UploadedFile => ({ filename: name, size, path: `/mnt/user-data/uploads/${name}`, extension: extname(name) });

/**
 * Copies of `sources` (real paths the caller may attach: trust/attachments.ts), each named as the
 * caller named it (`names[i]`'s base name; the source's own by default). Copies are 0600.
 */
export function copyUploads(dirs: ThreadDirs, sources: readonly string[], names: readonly string[] = sources): UploadedFile[] {
  if (sources.length === 0) return [];
  ensureThreadFolders(dirs, ["uploads"]);
  return sources.map((src, i) => {
    const { name, exists } = freeName(dirs.uploads, basename(names[i] ?? src), src);
    const target = join(dirs.uploads, name);
    if (!exists) copyToNewFileSync(src, target);
    return uploaded(name, statSync(src).size);
  });
}

/** Bytes a remote client sent (`uploads/put`) as a new 0600 file named `name` (trust/attachments.ts uploadName), or the same bytes already there. */
export function putUpload(dirs: ThreadDirs, name: string, bytes: Buffer): UploadedFile {
  ensureThreadFolders(dirs, ["uploads"]);
  const free = freeName(dirs.uploads, name, bytes);
  if (!free.exists) createFileSync(join(dirs.uploads, free.name), bytes, 0o600);
  return uploaded(free.name, bytes.length);
}

/** A file `uploads/put` left in the thread's uploads folder, by its name there; undefined when there is no such regular file. */
export function existingUpload(dirs: ThreadDirs, name: string): UploadedFile | undefined {
  if (name !== basename(name) || name === "." || name === "..") return undefined;
  const path = join(dirs.uploads, name);
  return entryAt(path) === "file" ? uploaded(name, statSync(path).size) : undefined;
}
