// Runs the Node-side test tiers on the Node that runs this script (the package.json test script
// runs it once on Node 20 and once on Node 24: see scripts/ci/with-node24.sh).
//   node scripts/test.mjs unit integration devcontainer conformance
// integration24: the part of integration that runs on the second Node (see INTEGRATION_ON_NODE24).
// unit / integration / devcontainer: Node's own test runner over test/<tier>/**/*.test.ts (tsx
// loads TypeScript; Node 20's --test does not expand globs, so the file list is built here).
// conformance: LangGraph's checkpoint-saver suite, which is written for Vitest (test/conformance).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

/**
 * The second Node's integration tier (package.json `test`: unit and conformance run whole on both
 * Nodes). What differs on Node 24 is the runtime under the CLI and its SQLite driver (node:sqlite
 * instead of better-sqlite3), and the e2e on code-server 4.139.1 already runs the harness that way
 * end to end; these files drive every store and entry point through the CLI, the harness RPC and
 * serve. The rest of the tier runs on Node 20 only: CI has 45 minutes, and the whole tier twice
 * cost about 8 of them.
 */
const INTEGRATION_ON_NODE24 = [
  "cli.test.ts",
  "runs.test.ts",
  "server.test.ts",
  "storage.test.ts",
  "deleteThread.test.ts",
  "approvals.test.ts",
  "memory.test.ts",
  "serve.test.ts",
  "mcpStdio.test.ts",
  "skills.test.ts",
  "vscodeLm.test.ts",
];

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
  for (const t of nodeTiers) {
    if (t === "integration24") files.push(...INTEGRATION_ON_NODE24.map((f) => join("test", "integration", f)));
    else walk(join("test", t));
  }
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
