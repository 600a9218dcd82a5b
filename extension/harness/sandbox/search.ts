/**
 * Ignore rules and glob matching for ls / glob / grep (DeerFlow's `sandbox/search.py` and
 * `sandbox/local/list_dir.py`), with Node built-ins only. The walk itself is the trust
 * boundary's (`trust/treeWalk.ts`: no followed links, cycle-safe, async, abortable).
 *
 * Glob semantics follow DeerFlow's `PurePosixPath.match`: a relative pattern is anchored at the
 * right, so `*.py` finds Python files at any depth and `src/*.py` matches `app/src/x.py`; `**`
 * matches any number of segments (including none), so `**\/*.py` also finds a top-level `a.py`.
 * The matcher is `globMatch.ts`: linear in the name, never a backtracking regular expression.
 */
import { compileGlob, compileNamePattern, type CompiledGlob } from "./globMatch.js";

export const IGNORE_PATTERNS = [
  ".git", ".svn", ".hg", ".bzr", "node_modules", "__pycache__", ".venv", "venv", ".env", "env", ".tox",
  ".nox", ".eggs", "*.egg-info", "site-packages", "dist", "build", ".next", ".nuxt", ".output", ".turbo",
  "target", "out", ".idea", ".vscode", "*.swp", "*.swo", "*~", ".project", ".classpath", ".settings",
  ".DS_Store", "Thumbs.db", "desktop.ini", "*.lnk", "*.log", "*.tmp", "*.temp", ".upload-*.part", "*.bak",
  "*.cache", ".cache", "logs", ".coverage", "coverage", ".nyc_output", "htmlcov", ".pytest_cache",
  ".mypy_cache", ".ruff_cache",
  // Ours: the thread-data folder inside the workspace. Its own uploads/outputs are reachable as
  // /mnt/user-data/{uploads,outputs}; other threads' data must not show up in workspace walks.
  ".deerflow",
];

const EXACT_IGNORES = new Set(IGNORE_PATTERNS.filter((p) => !/[*?[]/.test(p)));
const GLOB_IGNORES = IGNORE_PATTERNS.filter((p) => /[*?[]/.test(p)).map((p) => compileNamePattern(p));

export function shouldIgnoreName(name: string): boolean {
  return EXACT_IGNORES.has(name) || GLOB_IGNORES.some((matches) => matches(name));
}

const compiledGlobs = new Map<string, CompiledGlob>();

/**
 * The compiled pattern, cached (a walk asks once per entry). Throws GlobPatternError over the caps:
 * the tools compile up front (files.ts), so the model hears it before any walk.
 */
export function globMatcher(pattern: string): CompiledGlob {
  let compiled = compiledGlobs.get(pattern);
  if (!compiled) {
    compiled = compileGlob(pattern);
    if (compiledGlobs.size > 512) compiledGlobs.clear();
    compiledGlobs.set(pattern, compiled);
  }
  return compiled;
}

/** Does `relPath` (POSIX separators, relative to the search root) match the glob? */
export function pathMatches(pattern: string, relPath: string): boolean {
  return globMatcher(pattern).matches(relPath);
}
