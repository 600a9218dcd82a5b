/**
 * `npm run test:vscode-host`: the extension-host tests (test/vscode/suite, mocha) inside a real
 * VS Code — code-server's Node extension host — with the extension in development mode, on every
 * code-server version in turn (4.100.3 on Node 20, then 4.139.1 on Node 24; DEERFLOW_CODE_SERVER=
 * 4.139.1 picks one). Prints a line per version, then "N passed, N failed" over all of them.
 *
 * code-server has no --extensionTestsPath flag, but its web workbench reads the `payload` query
 * parameter like @vscode/test-web: `extensionDevelopmentPath` + `extensionTestsPath`. The host
 * `require`s the suite and calls run(); when it settles the workbench calls
 * `window.codeAutomationExit(code)`, which this driver provides through Playwright (recipe:
 * ../shared/recipes/vscode-e2e/README.md). A scripted OpenAI-compatible server on 127.0.0.1 plays
 * the model, through the environment the harness inherits.
 *
 * Expects `npm run build` and `node scripts/build-vscode-tests.mjs` to have run. Exit code 0 when
 * every test passed. Each code-server, its extension host and the harness are stopped before the
 * next one starts (one at a time: memory).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { format } from "node:util";
import { startModelServer } from "../test/fixtures/modelServer.js";
import { hostModelScript } from "../test/vscode/hostModelScript.js";
import { launchCodeServer, repoRoot } from "../test/vscode/launch.js";
import { CODE_SERVERS, selectedCodeServers } from "../test/vscode/codeServers.js";
import type { CodeServerVersion } from "../test/vscode/codeServers.js";
import { launchBrowser } from "../test/vscode/workbench.js";
import type { Browser } from "../test/vscode/workbench.js";

const TESTS = join(repoRoot, "out", "vscode-tests", "index.js");
for (const f of [join(repoRoot, "dist", "extension.cjs"), join(repoRoot, "dist", "server.js"), TESTS]) {
  if (!existsSync(f)) {
    console.error(`${f} is missing: run npm run build && node scripts/build-vscode-tests.mjs`);
    process.exit(2);
  }
}

const model = await startModelServer({ script: hostModelScript });
const blocks: string[] = [];
let passed = 0;
let failed = 0;
try {
  for (const version of selectedCodeServers()) {
    console.log(`\n=== code-server ${version} (VS Code ${CODE_SERVERS[version].vscode}) ===`);
    // A code-server that fails to start fails its block; the next version still runs.
    const r = await runOn(version).catch((e: unknown) => {
      console.error(`[ext-host-tests] code-server ${version} did not run the suite: ${e instanceof Error ? e.message : String(e)}`);
      return { passed: 0, failed: 1, exit: "error" as const, ms: 0 };
    });
    passed += r.passed;
    failed += r.failed;
    blocks.push(`code-server ${version}: ${r.passed} passed, ${r.failed} failed (exit ${r.exit}, ${(r.ms / 1000).toFixed(1)} s)`);
  }
} finally {
  await model.close();
}
console.log(`\n${blocks.join("\n")}\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

/** One code-server, one page load with the test payload; the suite's own "N passed, N failed" line is the count. */
async function runOn(version: CodeServerVersion): Promise<{ passed: number; failed: number; exit: number | "timeout" | "error"; ms: number }> {
  const cs = await launchCodeServer({
    version,
    extension: { kind: "dev", path: repoRoot },
    extensionTestsPath: TESTS,
    label: "deerflow-ext-host-tests",
    env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "test-key-from-env", OPENAI_MODEL: "scripted" },
    keepRunDir: process.env["KEEP_RUN_DIR"] === "1",
  });
  console.log(`[ext-host-tests] ${cs.node} (code-server ${version})`);
  let result: number | "timeout" = 1;
  let counts: { passed: number; failed: number } | undefined;
  const t0 = performance.now();
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    let exit!: (code: number) => void;
    const exited = new Promise<number>((r) => (exit = r));
    const noise = /^(Creating a socket|\[AgentHost:remote\]|\[AccountPolicyGate\]|Timed out waiting for authentication provider|Updating additional builtin|\[Service Worker\]|ChatSessionStore|Resolv(ing|ed) connection token|Ignoring fetching additional builtin|Creation of workbench contribution)/;
    await browser.page.exposeFunction("codeAutomationLog", (_type: unknown, args: unknown) => {
      const line = format(...(Array.isArray(args) ? (args as unknown[]) : [args]));
      const m = /^(\d+) passed, (\d+) failed$/.exec(line.trim());
      if (m) counts = { passed: Number(m[1]), failed: Number(m[2]) };
      if (!noise.test(line)) console.log(line);
    });
    await browser.page.exposeFunction("codeAutomationExit", (c: number) => exit(c));
    await browser.page.goto(cs.url, { waitUntil: "domcontentloaded" });
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 300_000).unref());
    result = await Promise.race([exited, timeout]);
    console.log(`[ext-host-tests] codeAutomationExit(${result}) after ${Math.round(performance.now() - t0)} ms`);
  } finally {
    if (result !== 0) console.error(`code-server log: ${cs.logFile}${process.env["KEEP_RUN_DIR"] === "1" ? "" : " (set KEEP_RUN_DIR=1 to keep it)"}`);
    await browser?.close();
    await cs.cleanup();
  }
  // A run that never reported (it crashed, or timed out) counts as one failure, never as nothing.
  const c = counts ?? { passed: 0, failed: 1 };
  if (result !== 0 && c.failed === 0) c.failed = 1;
  return { ...c, exit: result, ms: performance.now() - t0 };
}
