/**
 * A `deerflow serve` process (dist/cli.js) for tests: started with a token file, on a free port,
 * resolved once it prints its "listening" line (an event, not a timer), with an SDK client for it.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@langchain/langgraph-sdk";
import { CLI, sandboxDirs, tempDir, type Dirs } from "./cli.js";
import { testWorkspaceDatabase } from "../../fixtures/testDatabase.js";

export const SERVE_TOKEN = "serve-test-token-0123456789abcdef";

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  database: string;
  stderr(): string;
  /** Resolves with the match once stderr has a line matching `pattern` (woken by the output, not a timer). */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
  client(): Client;
  stop(): Promise<void>;
}

/** `node`: what runs dist/cli.js instead of this Node (a wrapper that changes the process's world first). */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}, runtime: { node?: string } = {}): Promise<ServeProcess> {
  const tokenFile = join(tempDir("token"), "token");
  writeFileSync(tokenFile, `${SERVE_TOKEN}\n`, { mode: 0o600 });
  const child = spawn(runtime.node ?? process.execPath, [CLI, "serve", "--port", "0", "--token-file", tokenFile, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const stderrWaiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    stderr += s;
    for (let i = stderrWaiters.length - 1; i >= 0; i--) {
      const m = stderr.match(stderrWaiters[i]!.pattern);
      if (m) stderrWaiters.splice(i, 1)[0]!.resolve(m);
    }
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([once(lines, "line"), once(child, "exit").then(() => [undefined])])) as [string | undefined];
  assert.ok(first, `serve exited before listening: ${stderr}`);
  const listening = JSON.parse(first) as { event: string; url: string; database: string };
  assert.equal(listening.event, "listening");
  return {
    child,
    url: listening.url,
    database: listening.database,
    stderr: () => stderr,
    waitForStderr: (pattern) => {
      const m = stderr.match(pattern);
      return m ? Promise.resolve(m) : new Promise((resolve) => stderrWaiters.push({ pattern, resolve }));
    },
    client: () => new Client({ apiUrl: listening.url, defaultHeaders: { Authorization: `Bearer ${SERVE_TOKEN}` } }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/**
 * The serve the serve test files share: one workspace `main` in fresh dirs, the scripted model as
 * the default (`--model scripted --base-url`), the local sandbox, on the data dir's SQLite or, in
 * the Postgres tier, on Postgres.
 */
export async function startScriptedServe(modelUrl: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<{ serve: ServeProcess; dirs: Dirs; database: string | undefined }> {
  const dirs = sandboxDirs();
  const database = testWorkspaceDatabase(dirs.dataDir);
  const serve = await startServe([
    "--workspace", `main=${dirs.workspace}`, "--data-dir", dirs.dataDir,
    "--model", "scripted", "--base-url", modelUrl, "--sandbox", "local", ...(database ? ["--database", database] : []), ...extra,
  ], env);
  return { serve, dirs, database };
}
