/**
 * Copying user files into a thread's uploads folder (`/mnt/user-data/uploads`), shared by the CLI's
 * `--upload` and the panel's attachments.
 *
 * Differs from DeerFlow on purpose: the same name uploaded again with OTHER content does not
 * overwrite the earlier file (an earlier message still points at it); the new one gets a free name
 * (`report-1.pdf`). The same bytes again reuse the existing file.
 */
import { copyFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { ThreadDirs } from "./threadDirs.js";
import type { UploadedFile } from "../state/threadState.js";

function sameBytes(a: string, b: string): boolean {
  return statSync(a).size === statSync(b).size && readFileSync(a).equals(readFileSync(b));
}

/** A name in `dir` for `src`: its own, or `stem-N.ext` when that name holds other content. */
function freeName(dir: string, src: string): string {
  const name = basename(src);
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${stem}-${i}${ext}`;
    const target = join(dir, candidate);
    if (!existsSync(target) || sameBytes(target, src)) return candidate;
  }
}

export function copyUploads(dirs: ThreadDirs, sources: readonly string[]): UploadedFile[] {
  return sources.map((src) => {
    const name = freeName(dirs.uploads, src);
    const target = join(dirs.uploads, name);
    if (!existsSync(target)) copyFileSync(src, target);
    return { filename: name, size: statSync(target).size, path: `/mnt/user-data/uploads/${name}`, extension: extname(name) };
  });
}
