// `npm run bench`: runs every test/bench/*.bench.ts (or those whose name contains an argument),
// prints a table per bench and writes all rows to .bench/results.json.
// A bench module default-exports { name, run(): Promise<Row[]> }; rows are flat records whose
// keys become the table's columns. Benchmarks measure; they never assert timings.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, platform, release } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export type Row = Record<string, string | number>;

export interface Bench {
  name: string;
  /** one-line description printed above the table */
  description?: string;
  run(): Promise<Row[]>;
}

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..");

export function formatTable(rows: readonly Row[]): string {
  if (rows.length === 0) return "(no rows)";
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: string | number | undefined) => (v === undefined ? "" : typeof v === "number" ? fmt(v) : v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n");
}

function fmt(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
}

async function main() {
  const filters = process.argv.slice(2);
  const files = readdirSync(here)
    .filter((f) => f.endsWith(".bench.ts"))
    .sort();
  const results: Record<string, { description?: string; durationMs: number; rows: Row[] }> = {};
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: Bench };
    const bench = mod.default;
    if (filters.length && !filters.some((f) => bench.name.includes(f) || file.includes(f))) continue;
    process.stdout.write(`\n## ${bench.name}${bench.description ? ` — ${bench.description}` : ""}\n`);
    const t0 = performance.now();
    const rows = await bench.run();
    const durationMs = Math.round(performance.now() - t0);
    process.stdout.write(`${formatTable(rows)}\n(${(durationMs / 1000).toFixed(1)} s)\n`);
    results[bench.name] = { ...(bench.description ? { description: bench.description } : {}), durationMs, rows };
  }
  const out = join(repoRoot, ".bench", "results.json");
  mkdirSync(dirname(out), { recursive: true });
  // a filtered run keeps the other benches' last results
  if (filters.length && existsSync(out)) {
    const previous = (JSON.parse(readFileSync(out, "utf8")) as { results?: typeof results }).results ?? {};
    for (const [name, r] of Object.entries(previous)) if (!(name in results)) results[name] = r;
  }
  const machine = { node: process.version, platform: `${platform()} ${release()}`, cpus: cpus().length, cpu: cpus()[0]?.model ?? "" };
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2) + "\n");
  process.stdout.write(`\nwrote ${out}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await main();
