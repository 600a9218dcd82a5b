/**
 * `npm run test:vscode`: the VS Code end-to-end suites (test/vscode/e2e/*.e2e.ts), on every
 * code-server version (4.100.3 on Node 20, then 4.139.1 on Node 24; DEERFLOW_CODE_SERVER=4.139.1
 * picks one), one suite after the other — each starts one code-server (~0.5 GiB) and one chromium
 * (~1.2 GiB) and stops them, so two at once would double the memory on a 2-core CI machine.
 * Prints the spec report per version, a line per version, then "N passed, N failed" over all of
 * them, and exits non-zero on any failure (a suite whose setup fails counts its tests as failed:
 * nothing here is skipped). Arguments filter suites by file name.
 *
 * Installs each code-server (and chromium, Node 24) first when missing: scripts/ci/code-server-setup.sh.
 */
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { readdirSync } from "node:fs";
import { finished } from "node:stream/promises";
import { join } from "node:path";
import { repoRoot } from "./launch.js";
import { CODE_SERVERS, ensureCodeServer, selectedCodeServers } from "./codeServers.js";

const dir = join(repoRoot, "test", "vscode", "e2e");
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".e2e.ts") && (filters.length === 0 || filters.some((x) => f.includes(x))))
  .sort((a, b) => (a === "infra.e2e.ts" ? -1 : b === "infra.e2e.ts" ? 1 : a.localeCompare(b)))
  .map((f) => join(dir, f));
if (files.length === 0) {
  console.error(`no e2e suite under ${dir}${filters.length ? ` matching ${filters.join(", ")}` : ""}`);
  process.exit(1);
}

const t0 = performance.now();
let passed = 0;
let failed = 0;
const blocks: string[] = [];
// One code-server version after the other; in each block the suites see the version through
// DEERFLOW_CODE_SERVER (inherited by the test files' child processes) and launch that one.
for (const version of selectedCodeServers()) {
  const tv = performance.now();
  process.env.DEERFLOW_CODE_SERVER = version;
  const { node } = ensureCodeServer(version);
  console.log(`\n=== code-server ${version} (VS Code ${CODE_SERVERS[version].vscode}, ${node}) ===`);
  const r = await runSuites();
  passed += r.passed;
  failed += r.failed;
  const line = `code-server ${version}: ${r.passed} passed, ${r.failed} failed (${((performance.now() - tv) / 1000).toFixed(1)} s)`;
  blocks.push(line);
  console.log(`\n${line}`);
}

const secs = ((performance.now() - t0) / 1000).toFixed(1);
console.log(`\n${blocks.join("\n")}\n${passed} passed, ${failed} failed (${secs} s; screenshots in test-results/vscode/<version>/)`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;

async function runSuites(): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  // Each file runs in its own `node --import tsx` child (run() reuses this process's execArgv).
  const stream = run({ files, concurrency: 1, timeout: 15 * 60_000 });
  stream.on("test:pass", (e: { details: { type?: string } }) => {
    if (e.details.type !== "suite") passed++;
  });
  stream.on("test:fail", (e: { details: { type?: string } }) => {
    // A suite whose `before` fails cancels its tests, and each cancelled test arrives here (so the
    // suite itself is not counted again); a file that fails to load arrives as one failed test.
    if (e.details.type !== "suite") failed++;
  });
  const report = stream.compose(new spec());
  report.pipe(process.stdout, { end: false });
  await finished(report);
  return { passed, failed };
}
