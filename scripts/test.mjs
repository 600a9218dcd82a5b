// Runs the Node-side test tiers on the Node that runs this script (the package.json test script
// runs it once on Node 20 and once on Node 24: see scripts/ci/with-node24.sh).
//   node scripts/test.mjs unit integration devcontainer conformance
// unit / integration / devcontainer: Node's own test runner over test/<tier>/**/*.test.ts (tsx
// loads TypeScript; Node 20's --test does not expand globs, so the file list is built here).
// conformance: LangGraph's checkpoint-saver suite, which is written for Vitest (test/conformance).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const tiers = process.argv.slice(2);
if (tiers.length === 0) tiers.push("unit", "integration");
console.log(`[test] ${tiers.join(", ")} on Node ${process.versions.node}`);

const nodeTiers = tiers.filter((t) => t !== "conformance");
let status = 0;
if (nodeTiers.length > 0) {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".test.ts")) files.push(p);
    }
  };
  for (const t of nodeTiers) walk(join("test", t));
  if (files.length === 0) {
    console.error(`no test files under ${nodeTiers.join(", ")}`);
    process.exit(1);
  }
  const concurrency = process.env.TEST_CONCURRENCY ?? "2";
  const r = spawnSync(process.execPath, ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files], { stdio: "inherit" });
  status = r.status ?? 1;
}
if (tiers.includes("conformance")) {
  const vitest = join("node_modules", "vitest", "vitest.mjs");
  const r = spawnSync(process.execPath, [vitest, "run", "--config", "test/conformance/vitest.config.ts"], { stdio: "inherit" });
  if (status === 0) status = r.status ?? 1;
}
process.exit(status);
