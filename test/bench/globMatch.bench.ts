// Glob matching (issue 21): the linear matcher (sandbox/globMatch.ts) against the regex matcher it
// replaced (test/fixtures/legacyGlob.ts) on ordinary patterns over a realistic set of relative
// paths, so a slowdown on the patterns models really send shows here. The last rows are the
// patterns that froze the old matcher, run by the new one only (the old one does not return).
import { compileGlob } from "../../extension/harness/sandbox/globMatch.js";
import { legacyPathMatches } from "../fixtures/legacyGlob.js";
import type { Bench, Row } from "./run.js";

const PATHS = Number(process.env.BENCH_GLOB_PATHS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_GLOB_ROUNDS ?? 5);

function realisticPaths(n: number): string[] {
  const dirs = ["src", "src/lib", "src/lib/util", "test", "test/unit", "docs", "packages/core/src", "packages/cli/src/commands", "scripts"];
  const names = ["index", "main", "utils", "config", "test_parser", "parser_test", "README", "setup", "handler", "types"];
  const exts = [".ts", ".py", ".go", ".md", ".json", ".js", ".tsx", ".yaml"];
  const out: string[] = [];
  for (let i = 0; i < n; i += 1) {
    out.push(`${dirs[i % dirs.length]}/${names[(i * 7) % names.length]}${i % 13}${exts[(i * 3) % exts.length]}`);
  }
  return out;
}

/** Median ms of `rounds` passes of `fn` over every path, and how many matched (both matchers must agree). */
function time(paths: string[], fn: (p: string) => boolean): { ms: number; hits: number } {
  const runs: number[] = [];
  let hits = 0;
  for (let r = 0; r < ROUNDS; r += 1) {
    hits = 0;
    const t0 = performance.now();
    for (const p of paths) if (fn(p)) hits += 1;
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  return { ms: runs[Math.floor(runs.length / 2)] as number, hits };
}

const bench: Bench = {
  name: "glob matching",
  description: `linear matcher vs the old regex matcher, ${PATHS} paths, median of ${ROUNDS}`,
  run(): Promise<Row[]> {
    const paths = realisticPaths(PATHS);
    const rows: Row[] = [];
    for (const pattern of ["*.py", "**/*.ts", "src/**/test_*.py", "packages/*/src/**/*.ts", "[a-m]*.md", "*_test.go", "docs/*", "/src/lib/*"]) {
      const compiled = compileGlob(pattern);
      const linear = time(paths, (p) => compiled.matches(p));
      const legacy = time(paths, (p) => legacyPathMatches(pattern, p));
      if (linear.hits !== legacy.hits) throw new Error(`${pattern}: ${linear.hits} vs ${legacy.hits} matches`);
      rows.push({ pattern, matches: linear.hits, "old ms": legacy.ms, "new ms": linear.ms, "new ns/path": (linear.ms * 1e6) / paths.length });
    }
    const long = Array.from({ length: 1_000 }, (_, i) => `${"a".repeat(200)}${i}a`);
    for (const pattern of ["*a*a*a*a*a*a*a*a*b", "**/a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"]) {
      const compiled = compileGlob(pattern);
      const linear = time(long, (p) => compiled.matches(p));
      rows.push({ pattern, matches: linear.hits, "old ms": "never returns", "new ms": linear.ms, "new ns/path": (linear.ms * 1e6) / long.length });
    }
    return Promise.resolve(rows);
  },
};
export default bench;
