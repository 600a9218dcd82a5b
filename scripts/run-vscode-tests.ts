/**
 * `npm run test:vscode-host`: the extension-host tests (test/vscode/suite, mocha) inside a real
 * VS Code — code-server 4.100.3's Node extension host — with the extension in development mode.
 *
 * code-server has no --extensionTestsPath flag, but its web workbench reads the `payload` query
 * parameter like @vscode/test-web: `extensionDevelopmentPath` + `extensionTestsPath`. The host
 * `require`s the suite and calls run(); when it settles the workbench calls
 * `window.codeAutomationExit(code)`, which this driver provides through Playwright (recipe:
 * ../shared/recipes/vscode-e2e/README.md). A scripted OpenAI-compatible server on 127.0.0.1 plays
 * the model, through the environment the harness inherits.
 *
 * Expects `npm run build` and `node scripts/build-vscode-tests.mjs` to have run. Exit code 0 when
 * every test passed. code-server, its extension host and the harness are stopped at the end.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { format } from "node:util";
import { startModelServer } from "../test/fixtures/modelServer.js";
import { launchCodeServer, repoRoot } from "../test/vscode/launch.js";
import { launchBrowser } from "../test/vscode/workbench.js";

const TESTS = join(repoRoot, "out", "vscode-tests", "index.js");
for (const f of [join(repoRoot, "dist", "extension.cjs"), join(repoRoot, "dist", "server.js"), TESTS]) {
  if (!existsSync(f)) {
    console.error(`${f} is missing: run npm run build && node scripts/build-vscode-tests.mjs`);
    process.exit(2);
  }
}

// A prompt with HANG gets no answer until the run is cancelled (the cancel test); others a greeting.
const model = await startModelServer({
  script: (request) => {
    const lastUser = [...(request.body?.messages ?? [])].reverse().find((m) => m.role === "user");
    return JSON.stringify(lastUser?.content ?? "").includes("HANG") ? { hang: true } : { content: "Hello from the scripted model." };
  },
});
const cs = await launchCodeServer({
  extension: { kind: "none" },
  label: "deerflow-ext-host-tests",
  env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "test-key-from-env", OPENAI_MODEL: "scripted" },
  keepRunDir: process.env["KEEP_RUN_DIR"] === "1",
});
let code = 1;
const browser = await launchBrowser();
try {
  const remote = (p: string): string => `vscode-remote://127.0.0.1:${cs.port}${p}`;
  const url = new URL(`${cs.origin}/`);
  url.searchParams.set("folder", cs.workspace);
  url.searchParams.set("payload", JSON.stringify([["extensionDevelopmentPath", remote(repoRoot)], ["extensionTestsPath", remote(TESTS)]]));

  let exit!: (code: number) => void;
  const exited = new Promise<number>((r) => (exit = r));
  const noise = /^(Creating a socket|Updating additional builtin|\[Service Worker\]|ChatSessionStore|Resolv(ing|ed) connection token|Ignoring fetching additional builtin|Creation of workbench contribution)/;
  await browser.page.exposeFunction("codeAutomationLog", (_type: unknown, args: unknown) => {
    const line = format(...(Array.isArray(args) ? (args as unknown[]) : [args]));
    if (!noise.test(line)) console.log(line);
  });
  await browser.page.exposeFunction("codeAutomationExit", (c: number) => exit(c));
  const t0 = performance.now();
  await browser.page.goto(url.toString(), { waitUntil: "domcontentloaded" });
  const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 300_000).unref());
  const result = await Promise.race([exited, timeout]);
  console.log(`[ext-host-tests] codeAutomationExit(${result}) after ${Math.round(performance.now() - t0)} ms`);
  code = result === 0 ? 0 : 1;
} finally {
  if (code !== 0) console.error(`code-server log: ${cs.logFile}${process.env["KEEP_RUN_DIR"] === "1" ? "" : " (set KEEP_RUN_DIR=1 to keep it)"}`);
  await browser.close();
  await cs.cleanup();
  await model.close();
}
process.exit(code);
