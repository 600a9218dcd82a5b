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
import { copyToNewFileSync } from "../sandbox/trust/openChecked.js";
import { ensureThreadFolders } from "../sandbox/trust/threadFolders.js";
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

function sameBytes(existing: string, src: string): boolean {
  return statSync(existing).size === statSync(src).size && readFileSync(existing).equals(readFileSync(src));
}

/** A name in `dir` for `src`: its own, or `stem-N.ext` when that name holds something else. */
function freeName(dir: string, src: string): { name: string; exists: boolean } {
  const name = basename(src);
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${stem}-${i}${ext}`;
    const at = entryAt(join(dir, candidate));
    if (at === "none") return { name: candidate, exists: false };
    if (at === "file" && sameBytes(join(dir, candidate), src)) return { name: candidate, exists: true };
  }
}

export function copyUploads(dirs: ThreadDirs, sources: readonly string[]): UploadedFile[] {
  if (sources.length === 0) return [];
  ensureThreadFolders(dirs, ["uploads"]);
  return sources.map((src) => {
    const { name, exists } = freeName(dirs.uploads, src);
    const target = join(dirs.uploads, name);
    if (!exists) copyToNewFileSync(src, target);
    return { filename: name, size: statSync(src).size, path: `/mnt/user-data/uploads/${name}`, extension: extname(name) };
  });
}
