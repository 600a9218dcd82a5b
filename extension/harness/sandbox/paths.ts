/**
 * The virtual path scheme: what the model sees (`/mnt/user-data/...`) versus where a thread's
 * data really lives on the host (the workspace folder, and `.deerflow/threads/<id>/{uploads,outputs}`
 * inside it).
 *
 * DeerFlow (`sandbox/tools.py`: replace_virtual_path, validate_local_tool_path,
 * _resolve_and_validate_user_data_path, mask_local_paths_in_output, replace_virtual_paths_in_command)
 * keeps the three dirs side by side under one `user-data` parent. Here uploads and outputs sit
 * *inside* the workspace, next to other threads' data, which changes three things:
 *   - the bare root `/mnt/user-data` has no host directory (no common parent), so it is refused;
 *   - masking host → virtual must try the longest root first (outputs/uploads before workspace);
 *   - a path reached through the workspace that lands in `.deerflow/` is refused unless it is this
 *     thread's own uploads/outputs (other threads' data must stay invisible).
 *
 * A fourth root, read-only: `/mnt/skills` (DeerFlow's skills.container_path), when the run has
 * skills (issue 24). Its host folder is the run's enabled-only view of the skills (skills/view.ts),
 * outside the workspace, holding only regular files and folders: reads map there, a write under
 * `/mnt/skills` is refused with DeerFlow's text (trust/toolPaths.ts), and a real path in the view
 * is contained for reading only, so no link in the workspace can make it a write target.
 *
 * This is the mapping and the containment check; the rest of the trust boundary (protected
 * paths, thread folders that cannot be redirected, opening files so that a link swapped in after
 * the check is caught, bounded walks) is `trust/`, which builds on it. Tools call `trust/`.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { HarnessError } from "../errors.js";
import type { ThreadDirs } from "../threads/threadDirs.js";

export const VIRTUAL_PATH_PREFIX = "/mnt/user-data";
export const WORKSPACE_VIRTUAL_PATH = `${VIRTUAL_PATH_PREFIX}/workspace`;
export const UPLOADS_VIRTUAL_PATH = `${VIRTUAL_PATH_PREFIX}/uploads`;
export const OUTPUTS_VIRTUAL_PATH = `${VIRTUAL_PATH_PREFIX}/outputs`;
/** DeerFlow's OUTPUTS_VIRTUAL_PREFIX: the only place present_files accepts. */
export const OUTPUTS_VIRTUAL_PREFIX = OUTPUTS_VIRTUAL_PATH;
/** The thread-data folder inside the workspace; hidden from listings and refused (except own dirs). */
export const THREAD_DATA_DIR_NAME = ".deerflow";

export const PATH_TRAVERSAL_MESSAGE = "Access denied: path traversal detected";
export const ONLY_USER_DATA_MESSAGE = `Only paths under ${VIRTUAL_PATH_PREFIX}/ are allowed`;
export const UNMAPPED_VIRTUAL_MESSAGE =
  `Only paths under ${WORKSPACE_VIRTUAL_PATH}, ${UPLOADS_VIRTUAL_PATH} or ${OUTPUTS_VIRTUAL_PATH} are allowed`;
/** DeerFlow's `skills.container_path` default (`constants.py`): the read-only skills root (issue 24). */
export const SKILLS_VIRTUAL_PATH = "/mnt/skills";
/** DeerFlow's `validate_local_tool_path` refusal for any write under the skills root. */
export const SKILLS_WRITE_MESSAGE = (path: string): string => `Write access to skills path is not allowed: ${path}`;

/** `/mnt/skills` itself or a path below it (segment boundary). */
export function isSkillsPath(path: string): boolean {
  return path === SKILLS_VIRTUAL_PATH || path.startsWith(`${SKILLS_VIRTUAL_PATH}/`);
}

type RootName = "workspace" | "uploads" | "outputs" | "skills";

/** What a real path is checked for: the skills root may be read, never written. */
export type PathAccess = "read" | "write";

interface Root {
  readonly name: RootName;
  readonly virtual: string;
  readonly host: string;
}

/** Roots ordered longest host path first: uploads/outputs live inside the workspace. */
function rootsOf(dirs: ThreadDirs): Root[] {
  const roots: Root[] = [
    { name: "workspace", virtual: WORKSPACE_VIRTUAL_PATH, host: dirs.workspace },
    { name: "uploads", virtual: UPLOADS_VIRTUAL_PATH, host: dirs.uploads },
    { name: "outputs", virtual: OUTPUTS_VIRTUAL_PATH, host: dirs.outputs },
  ];
  if (dirs.skills) roots.push({ name: "skills", virtual: SKILLS_VIRTUAL_PATH, host: dirs.skills.root });
  return roots.sort((a, b) => b.host.length - a.host.length);
}

function deny(message: string): HarnessError {
  return new HarnessError("path_denied", message);
}

/** Any `..` segment (either separator) is refused outright, before any mapping. */
export function rejectPathTraversal(path: string): void {
  for (const segment of path.replace(/\\/g, "/").split("/")) {
    if (segment === "..") throw deny(PATH_TRAVERSAL_MESSAGE);
  }
}

/** True when `path` equals `root` or lies below it (segment boundary, not string prefix). */
export function isWithin(path: string, root: string): boolean {
  const [p, r] = caseFold(path, root);
  if (p === r) return true;
  const base = r.endsWith(sep) ? r : r + sep;
  return p.startsWith(base);
}

/** macOS and Windows volumes are usually case-insensitive: compare folded there. */
function caseFold(a: string, b: string): [string, string] {
  if (process.platform === "darwin" || process.platform === "win32") return [a.toLowerCase(), b.toLowerCase()];
  return [a, b];
}

/**
 * Lexical virtual → host mapping for one of the roots (no validation, no symlinks).
 * Returns undefined for anything that is not `/mnt/user-data/{workspace,uploads,outputs}[/...]`
 * (or `/mnt/skills[/...]` when the run has skills).
 * A trailing slash is kept, as DeerFlow's replace_virtual_path does.
 */
export function virtualToHost(virtualPath: string, dirs: ThreadDirs): string | undefined {
  for (const root of rootsOf(dirs)) {
    if (virtualPath === root.virtual) return root.host;
    if (virtualPath.startsWith(`${root.virtual}/`)) {
      const rest = virtualPath.slice(root.virtual.length).replace(/^\/+/, "");
      if (rest === "") return root.host + sep;
      const joined = join(root.host, rest);
      return virtualPath.endsWith("/") && !joined.endsWith(sep) ? joined + sep : joined;
    }
  }
  return undefined;
}

/**
 * Resolve a model-supplied path to a validated real host path.
 *
 * Order matters and mirrors DeerFlow: traversal first, then "is it virtual at all", then the
 * mapping, then symlink resolution and containment. Every refusal is a
 * `HarnessError("path_denied")` whose message names no host path.
 */
export function resolveVirtualPath(virtualPath: string, dirs: ThreadDirs): string {
  return containedRealPath(mapVirtualPath(virtualPath, dirs), dirs);
}

/** The lexical half of resolveVirtualPath: traversal, "is it virtual at all", the mapping. */
export function mapVirtualPath(virtualPath: string, dirs: ThreadDirs): string {
  rejectPathTraversal(virtualPath);
  // A NUL ends the path for the system call: refused here, in words, not as Node's error naming the host path.
  if (virtualPath.includes("\0")) throw deny("Access denied: the path contains a NUL character");
  if (!virtualPath.startsWith(`${VIRTUAL_PATH_PREFIX}/`) && !(dirs.skills && isSkillsPath(virtualPath))) throw deny(ONLY_USER_DATA_MESSAGE);
  const host = virtualToHost(virtualPath, dirs);
  if (host === undefined) throw deny(UNMAPPED_VIRTUAL_MESSAGE);
  return resolve(host);
}

/**
 * The real half: symlinks resolved, then containment in the thread's roots. A caller that has
 * already resolved `hostPath` passes `real`, so that what it checked is what is contained and
 * returned (resolving twice would let a link swapped in between slip through). `access` is
 * "write" unless the caller only reads: the skills view is contained for reading only.
 */
export function containedRealPath(hostPath: string, dirs: ThreadDirs, real = realPathAllowingMissing(hostPath), access: PathAccess = "write"): string {
  if (!isAllowedRealPath(real, dirs, access)) throw deny(PATH_TRAVERSAL_MESSAGE);
  return real;
}

/**
 * Where a real (symlink-free) host path may be: inside this thread's uploads or outputs, or inside
 * the workspace but not inside its `.deerflow/` (other threads' uploads and outputs live there);
 * for reading, also inside the run's skills view.
 */
export function isAllowedRealPath(real: string, dirs: ThreadDirs, access: PathAccess = "write"): boolean {
  if (access === "read" && dirs.skills && isWithin(real, dirs.skills.root)) return true;
  if (isWithin(real, dirs.uploads) || isWithin(real, dirs.outputs)) return true;
  if (!isWithin(real, dirs.workspace)) return false;
  return !isWithin(real, join(dirs.workspace, THREAD_DATA_DIR_NAME));
}

const MAX_SYMLINK_HOPS = 40;

/**
 * realpath for paths that may not exist yet (write_file to a new file): the realpath of the
 * nearest existing ancestor plus the missing tail. A dangling symlink is followed by hand, because
 * writing through it would create its target, wherever that is.
 */
export function realPathAllowingMissing(path: string, hops = 0): string {
  if (hops > MAX_SYMLINK_HOPS) throw deny(PATH_TRAVERSAL_MESSAGE);
  const tail: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = realpathSync(current);
      return tail.length === 0 ? real : join(real, ...tail.reverse());
    } catch (err) {
      if (!isNodeError(err) || (err.code !== "ENOENT" && err.code !== "ENOTDIR")) throw err;
    }
    const link = danglingLinkTarget(current);
    if (link !== undefined) {
      const target = isAbsolute(link) ? link : resolve(dirname(current), link);
      const rest = tail.length === 0 ? target : join(target, ...[...tail].reverse());
      return realPathAllowingMissing(rest, hops + 1);
    }
    const parent = dirname(current);
    if (parent === current) return join(current, ...tail.reverse());
    tail.push(current.slice(parent.length).replace(/^[/\\]+/, ""));
    current = parent;
  }
}

function danglingLinkTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink()) return undefined;
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

export function isNodeError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string";
}

// ---- host → virtual ---------------------------------------------------------------------------

/**
 * The boundary after a host root and the path tail, as in DeerFlow's path_patterns.py: the root
 * must end at a segment boundary (so `/ws` never matches inside `/ws-backup`), `$` lets output
 * that ends exactly at a root be masked, and the tail stops at whitespace and shell punctuation.
 */
const SEGMENT_BOUNDARY = String.raw`(?=/|$|[^\w./-])`;
const PATH_TAIL = String.raw`(?:/[^\s"';&|<>()]*)?`;
const VIRTUAL_ROOT_AT_START = new RegExp(String.raw`^(?:/mnt/user-data/(?:workspace|uploads|outputs)|/mnt/skills)(?=/|$|[^\w./-])`);

const maskCache = new Map<string, { pattern: RegExp; roots: Root[] }>();

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function maskPatternFor(dirs: ThreadDirs): { pattern: RegExp; roots: Root[] } {
  const key = `${dirs.workspace}\0${dirs.uploads}\0${dirs.outputs}\0${dirs.skills?.root ?? ""}`;
  let entry = maskCache.get(key);
  if (!entry) {
    const roots = rootsOf(dirs);
    // One alternation, longest root first, so a path inside outputs is never taken for a
    // workspace path and nothing is rewritten twice.
    const alternation = roots.map((r) => `(${escapeRegExp(r.host)})`).join("|");
    entry = { pattern: new RegExp(`(?:${alternation})${SEGMENT_BOUNDARY}${PATH_TAIL}`, "g"), roots };
    if (maskCache.size > 256) maskCache.clear();
    maskCache.set(key, entry);
  }
  return entry;
}

/**
 * DeerFlow's mask_local_paths_in_output: rewrite every host path of this thread in `output` to
 * its virtual form. Idempotent: an already-virtual path is left alone even if a host root happens
 * to be a prefix of `/mnt/user-data/...`.
 */
export function maskLocalPathsInOutput(output: string, dirs: ThreadDirs): string {
  if (output === "") return output;
  const { pattern, roots } = maskPatternFor(dirs);
  pattern.lastIndex = 0;
  return output.replace(pattern, (match: string, ...groups: unknown[]) => {
    const offset = groups[roots.length] as number;
    if (VIRTUAL_ROOT_AT_START.test(output.slice(offset))) return match;
    const index = groups.slice(0, roots.length).findIndex((g) => typeof g === "string");
    const root = roots[index];
    if (!root) return match;
    // The tail may hold another host path (`W/bin:W` in a PATH list): mask it as well.
    const relative = maskLocalPathsInOutput(match.slice(root.host.length).replace(/^[/\\]+/, ""), dirs);
    return relative ? `${root.virtual}/${relative}` : root.virtual;
  });
}

/** A single real host path to its virtual form (used for listings and search results). */
export function hostToVirtual(hostPath: string, dirs: ThreadDirs): string {
  for (const root of rootsOf(dirs)) {
    if (isWithin(hostPath, root.host)) {
      const relative = hostPath.slice(root.host.length).replace(/^[/\\]+/, "").split(sep).join("/");
      return relative ? `${root.virtual}/${relative}` : root.virtual;
    }
  }
  return maskLocalPathsInOutput(hostPath, dirs);
}

// ---- virtual → host inside bash commands -------------------------------------------------------

/**
 * Only genuine `/mnt/user-data` (and `/mnt/skills`) tokens: the lookahead keeps
 * `/mnt/user-data-backup`, `/mnt/user-data2`, `/mnt/user-data.bak` untouched (DeerFlow's
 * replace_virtual_paths_in_command).
 */
const COMMAND_VIRTUAL_PATTERN = new RegExp(String.raw`/mnt/(?:user-data|skills)(?=/|$|[^\w./-])(/[^\s"';&|<>()]*)?`, "g");

/**
 * Rewrite virtual paths in a command to host paths. Paths that have no host mapping (the bare
 * root) are left as they are; validateLocalBashCommandPaths refuses them before this runs.
 */
export function replaceVirtualPathsInCommand(command: string, dirs: ThreadDirs): string {
  if (!command.includes(VIRTUAL_PATH_PREFIX) && !(dirs.skills && command.includes(SKILLS_VIRTUAL_PATH))) return command;
  return command.replace(COMMAND_VIRTUAL_PATTERN, (match) => {
    // The tail class admits `,` and `:` (`/mnt/user-data/uploads, done`): map the root that ends
    // at a segment boundary and keep the rest verbatim.
    for (const root of rootsOf(dirs)) {
      if (!match.startsWith(root.virtual)) continue;
      const rest = match.slice(root.virtual.length);
      if (rest !== "" && !rest.startsWith("/") && /^[\w.-]/.test(rest)) continue;
      return (root.host + rest).replace(/\\/g, "/");
    }
    return match;
  });
}
