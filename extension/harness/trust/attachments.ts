/**
 * Which host files a caller may attach to a run, and under which name bytes may be put into a
 * thread's uploads (issue 31 item 2). The one rule, for every entry point:
 *
 * - The CLI (`deerflow run --upload`) is the user on their own machine: any file they can read.
 * - The editor's harness process attaches files inside the workspace folders it serves only
 *   (`roots`): the panel and `@deerflow` pick files of the window's folders.
 * - A remote client (`deerflow serve`'s `/rpc`, HTTP) never names a host path: it sends bytes
 *   through `uploads/put` (uploadName below), and `runs/start` `files` is refused for it
 *   (serve/rpc.ts), so no token holder reads a file of the server.
 *
 * A refusal reads the same whether the path is missing, unreadable, not a regular file or outside
 * the roots: an answer must not tell a caller which paths exist.
 */
import { constants, accessSync, realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, relative, sep } from "node:path";
import { HarnessError } from "../errors.js";

/** Everything a caller may attach: `"any"` (the CLI's user) or only files under these real folders. */
export type AttachRoots = "any" | readonly string[];

export const attachRefusal = (path: string): string =>
  `Cannot attach ${basename(path) || path}: only readable files inside the workspace folders can be attached.`;

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/**
 * The real path of an attachable file and its size; one `usage` refusal for anything else. The
 * copy opens this real path (no link between the check and the open is followed by the name).
 */
export function attachableFile(path: string, roots: AttachRoots): { real: string; size: number } {
  try {
    const real = realpathSync(path);
    if (roots !== "any" && !roots.some((r) => inside(realpathSync(r), real))) throw new Error("outside");
    const st = statSync(real);
    if (!st.isFile()) throw new Error("not a file");
    accessSync(real, constants.R_OK);
    return { real, size: st.size };
  } catch {
    throw new HarnessError("usage", attachRefusal(path));
  }
}

/** The longest upload name (bytes of UTF-8): what every common file system takes. */
const MAX_NAME_BYTES = 255;

/**
 * A name a remote client gives an upload, as the file's name in the thread's uploads folder: one
 * plain path segment (no separator, no `.`/`..`, no control character, not hidden-only dots).
 */
export function uploadName(name: string): string {
  const ok =
    name.length > 0 &&
    Buffer.byteLength(name, "utf8") <= MAX_NAME_BYTES &&
    name !== "." &&
    name !== ".." &&
    !/[/\\]/.test(name) &&
    // eslint-disable-next-line no-control-regex
    !/[\u0000-\u001f\u007f]/.test(name);
  if (!ok) throw new HarnessError("invalid_params", "An upload's name must be a plain file name (no folders, at most 255 bytes).");
  return name;
}
