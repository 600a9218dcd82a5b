/**
 * Ignore rules and glob matching for ls / glob / grep (DeerFlow's `sandbox/search.py` and
 * `sandbox/local/list_dir.py`), with Node built-ins only. The walk itself is the trust
 * boundary's (`trust/treeWalk.ts`: no followed links, cycle-safe, async, abortable).
 *
 * Glob semantics follow DeerFlow's `PurePosixPath.match`: a relative pattern is anchored at the
 * right, so `*.py` finds Python files at any depth and `src/*.py` matches `app/src/x.py`; `**`
 * matches any number of segments (including none), so `**\/*.py` also finds a top-level `a.py`.
 */

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
const GLOB_IGNORES = IGNORE_PATTERNS.filter((p) => /[*?[]/.test(p)).map((p) => segmentRegExp(p));

export function shouldIgnoreName(name: string): boolean {
  return EXACT_IGNORES.has(name) || GLOB_IGNORES.some((re) => re.test(name));
}

/** fnmatch for one path segment: `*`, `?`, `[...]` / `[!...]`; everything else literal. */
export function segmentRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i] as string;
    if (ch === "*") out += "[^/]*";
    else if (ch === "?") out += "[^/]";
    else if (ch === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) {
        out += "\\[";
        continue;
      }
      let body = pattern.slice(i + 1, close);
      if (body.startsWith("!")) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, "\\\\")}]`;
      i = close;
    } else out += ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

const compiledGlobs = new Map<string, Array<RegExp | "**">>();

function compileGlob(pattern: string): Array<RegExp | "**"> {
  let compiled = compiledGlobs.get(pattern);
  if (!compiled) {
    compiled = pattern
      .split("/")
      .filter((s) => s !== "" && s !== ".")
      .map((s) => (s === "**" ? "**" : segmentRegExp(s)));
    if (compiledGlobs.size > 512) compiledGlobs.clear();
    compiledGlobs.set(pattern, compiled);
  }
  return compiled;
}

function matchSegments(pattern: Array<RegExp | "**">, pi: number, parts: string[], si: number): boolean {
  if (pi === pattern.length) return si === parts.length;
  const seg = pattern[pi];
  if (seg === "**") {
    for (let k = si; k <= parts.length; k += 1) if (matchSegments(pattern, pi + 1, parts, k)) return true;
    return false;
  }
  const part = parts[si];
  return part !== undefined && seg !== undefined && seg.test(part) && matchSegments(pattern, pi + 1, parts, si + 1);
}

/** Does `relPath` (POSIX separators, relative to the search root) match the glob? */
export function pathMatches(pattern: string, relPath: string): boolean {
  const compiled = compileGlob(pattern);
  if (compiled.length === 0) return false;
  const parts = relPath.split("/").filter((s) => s !== "");
  if (pattern.startsWith("/")) return matchSegments(compiled, 0, parts, 0);
  // Anchored at the right: some suffix of the path must match the whole pattern.
  for (let start = 0; start <= parts.length; start += 1) if (matchSegments(compiled, 0, parts, start)) return true;
  return false;
}
