/**
 * File operations on a thread's data by virtual path, shared by the local and the dev container
 * providers (see provider.ts for why). Every path goes through the trust boundary first
 * (`trust/toolPaths.ts`: resolveReadPath / resolveWritePath), every file is opened through
 * `trust/openChecked.ts`, every walk is `trust/treeWalk.ts`, and every path handed back is virtual. Errors carry a `kind` the tools branch on; their messages
 * may hold host paths, so the tools never show them unmasked.
 */
import { mkdir, realpath, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { HarnessError } from "../errors.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { hostToVirtual, isAllowedRealPath, isNodeError, isWithin } from "./paths.js";
import { globMatcher, shouldIgnoreName } from "./search.js";
import { GlobPatternError, type CompiledGlob } from "./globMatch.js";
import { withPathLock } from "./pathLock.js";
import { readFileChecked, writeFileChecked } from "../trust/openChecked.js";
import { LineSearch, type GrepMatch, type SearchResult } from "./grepSearch.js";
import { RegexTimeoutError } from "./regexWorker.js";
import { isPathRefusal, resolveReadPath, resolveWritePath } from "../trust/toolPaths.js";
import { walkTree, type TreeEntry } from "../trust/treeWalk.js";

export type FileErrorKind =
  | "not_found"
  | "is_directory"
  | "not_directory"
  | "permission"
  | "not_text"
  | "invalid_regex"
  | "invalid_glob"
  | "regex_timeout";

export interface WriteOptions {
  /**
   * The user approved this write to a protected path (or chose `protected=auto`): the approval
   * middleware decided it for this one tool call. Every other path rule still applies.
   */
  readonly allowProtected?: boolean;
}

/**
 * str_replace's edit of a file's text, or undefined when `oldStr` is not in it. The file keeps its
 * own line endings: a LF-only `oldStr` still matches a CRLF file (and is written back as CRLF).
 * Also what an approval's "Open Diff" shows as the proposed content.
 */
export function replacedText(content: string, oldStr: string, newStr: string, replaceAll: boolean): string | undefined {
  let [from, to] = [oldStr, newStr];
  if (!content.includes(from) && content.includes("\r\n") && !from.includes("\r")) {
    [from, to] = [from.replace(/\n/g, "\r\n"), to.replace(/\r?\n/g, "\r\n")];
  }
  if (content === "" || from === "" || !content.includes(from)) return undefined;
  return replaceAll ? content.split(from).join(to) : content.replace(from, () => to);
}

export class SandboxFileError extends Error {
  constructor(
    readonly kind: FileErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "SandboxFileError";
  }
}

/** Map any error from a file operation to the kind the tools report, or "other". */
export function fileErrorKind(err: unknown): FileErrorKind | "other" {
  if (err instanceof SandboxFileError) return err.kind;
  if (isPathRefusal(err)) return "permission";
  if (err instanceof HarnessError) return "other";
  if (!isNodeError(err)) return "other";
  switch (err.code) {
    case "ENOENT":
      return "not_found";
    case "EISDIR":
      return "is_directory";
    case "ENOTDIR":
      return "not_directory";
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "permission";
    default:
      return "other";
  }
}

export type { GrepMatch, SearchResult };

export interface GrepOptions {
  readonly glob?: string | undefined;
  readonly literal?: boolean;
  readonly caseSensitive?: boolean;
  readonly maxResults: number;
  /** The run's signal: a walk stops when it aborts. */
  readonly signal?: AbortSignal | undefined;
}

/** The file half of DeerFlow's Sandbox, by virtual path. */
export interface SandboxFiles {
  readFile(path: string, startLine?: number, endLine?: number): Promise<string>;
  writeFile(path: string, content: string, append?: boolean, options?: WriteOptions): Promise<void>;
  /** Under the path lock: false when `oldStr` is not in the file. Empty `oldStr` is a no-op. */
  replaceInFile(path: string, oldStr: string, newStr: string, replaceAll: boolean, options?: WriteOptions): Promise<boolean>;
  listDir(path: string, maxDepth?: number, signal?: AbortSignal): Promise<string[]>;
  glob(path: string, pattern: string, includeDirs: boolean, maxResults: number, signal?: AbortSignal): Promise<SearchResult<string>>;
  grep(path: string, pattern: string, options: GrepOptions): Promise<SearchResult<GrepMatch>>;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new SandboxFileError("not_text", "file is not valid UTF-8 text");
  }
}

/** Python's text mode (universal newlines): `\r\n` and `\r` read as `\n`. */
function universalNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** The compiled glob, or the model's error: checked before any walk starts. */
function checkedGlob(pattern: string): CompiledGlob {
  try {
    return globMatcher(pattern);
  } catch (err) {
    if (err instanceof GlobPatternError) throw new SandboxFileError("invalid_glob", err.message);
    throw err;
  }
}

export class HostFiles implements SandboxFiles {
  constructor(readonly dirs: ThreadDirs) {}

  async readFile(path: string, startLine?: number, endLine?: number): Promise<string> {
    const real = resolveReadPath(path, this.dirs);
    const content = universalNewlines(decodeText(await readFileChecked(real)));
    if (startLine === undefined && endLine === undefined) return content;
    const lines = content.split("\n");
    if (content.endsWith("\n")) lines.pop();
    const start = Math.max(startLine ?? 1, 1);
    const end = endLine ?? lines.length;
    return lines.slice(start - 1, Math.max(end, start - 1)).join("\n");
  }

  async writeFile(path: string, content: string, append = false, options: WriteOptions = {}): Promise<void> {
    const real = resolveWritePath(path, this.dirs, options);
    await withPathLock(real, async () => {
      await mkdir(dirname(real), { recursive: true });
      await writeFileChecked(real, content, append ? "append" : "overwrite");
    });
  }

  async replaceInFile(path: string, oldStr: string, newStr: string, replaceAll: boolean, options: WriteOptions = {}): Promise<boolean> {
    const real = resolveWritePath(path, this.dirs, options);
    return withPathLock(real, async () => {
      // Raw text, not universal newlines: the file keeps its own line endings (DeerFlow rewrites
      // CRLF files as LF here; we do not). A LF-only old_str still matches a CRLF file.
      const content = decodeText(await readFileChecked(real));
      if (oldStr === "") return true;
      const next = replacedText(content, oldStr, newStr, replaceAll);
      if (next === undefined) return false;
      await writeFileChecked(real, next, "overwrite");
      return true;
    });
  }

  async listDir(path: string, maxDepth = 2, signal?: AbortSignal): Promise<string[]> {
    const rootReal = resolveReadPath(path, this.dirs);
    if (!(await stat(rootReal)).isDirectory()) throw new SandboxFileError("not_directory", "not a directory");
    const result: string[] = [];
    const visit = async (entry: TreeEntry): Promise<boolean> => {
      let real = entry.path;
      if (entry.isSymlink) {
        // DeerFlow shows a symlink by its resolved target, and only when that stays in the root.
        const target = await realpath(entry.path).catch(() => undefined);
        if (target === undefined || !isWithin(target, rootReal)) return true;
        real = target;
      }
      if (isAllowedRealPath(real, this.dirs, "read")) result.push(hostToVirtual(real, this.dirs) + (entry.isDir ? "/" : ""));
      return true;
    };
    await walkTree(rootReal, visit, { maxDepth, signal, ignore: shouldIgnoreName });
    return [...new Set(result)].sort();
  }

  async glob(path: string, pattern: string, includeDirs: boolean, maxResults: number, signal?: AbortSignal): Promise<SearchResult<string>> {
    const glob = checkedGlob(pattern);
    const rootReal = resolveReadPath(path, this.dirs);
    if (!(await stat(rootReal)).isDirectory()) throw new SandboxFileError("not_directory", "not a directory");
    const matches: string[] = [];
    let truncated = false;
    const visit = (entry: TreeEntry): boolean => {
      if (entry.isDir && !includeDirs) return true;
      if (!glob.matches(entry.rel)) return true;
      matches.push(hostToVirtual(entry.path, this.dirs));
      if (matches.length >= maxResults) {
        truncated = true;
        return false;
      }
      return true;
    };
    await walkTree(rootReal, visit, { signal, ignore: shouldIgnoreName });
    return { matches, truncated };
  }

  async grep(path: string, pattern: string, options: GrepOptions): Promise<SearchResult<GrepMatch>> {
    const glob = options.glob != null ? checkedGlob(options.glob) : undefined;
    const rootReal = resolveReadPath(path, this.dirs);
    const rootInfo = await stat(rootReal);
    if (!rootInfo.isFile() && !rootInfo.isDirectory()) throw new SandboxFileError("not_directory", "not a directory");
    const source = options.literal ? pattern.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&") : pattern;
    const flags = options.caseSensitive ? "" : "i";
    try {
      // Compiling checks the syntax here; the pattern runs only in the worker (grepSearch.ts).
      new RegExp(source, flags);
    } catch (err) {
      throw new SandboxFileError("invalid_regex", err instanceof Error ? err.message : String(err));
    }
    const search = new LineSearch({ source, flags, maxResults: options.maxResults, signal: options.signal });
    try {
      if (rootInfo.isFile()) {
        await search.offer(rootReal, hostToVirtual(rootReal, this.dirs));
      } else {
        const visit = (entry: TreeEntry): boolean | Promise<boolean> => {
          if (!entry.isFile) return true;
          if (glob && !glob.matches(entry.rel)) return true;
          return search.offer(entry.path, hostToVirtual(entry.path, this.dirs));
        };
        await walkTree(rootReal, visit, { signal: options.signal, ignore: shouldIgnoreName });
      }
      return await search.finish();
    } catch (err) {
      if (err instanceof RegexTimeoutError) throw new SandboxFileError("regex_timeout", err.message);
      throw err;
    } finally {
      search.close();
    }
  }
}
