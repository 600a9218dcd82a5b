// Runs Node's own test runner over test/<tier>/**/*.test.ts (tsx loads TypeScript).
// Usage: node scripts/test.mjs unit integration
// Node 20's --test does not expand globs, so the file list is built here.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const tiers = process.argv.slice(2);
if (tiers.length === 0) tiers.push("unit", "integration");
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith(".test.ts")) files.push(p);
  }
};
for (const t of tiers) walk(join("test", t));
if (files.length === 0) {
  console.error(`no test files under ${tiers.join(", ")}`);
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? "2";
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files], {
  stdio: "inherit",
});
process.exit(r.status ?? 1);
