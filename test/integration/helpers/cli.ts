/**
 * Drive the real, built CLI (`dist/cli.js`) as a child process, the way a script or the
 * extension would, and parse its JSON Lines. `npm test` builds first.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, existsSync, readFileSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { once } from "node:events";
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, ScriptedReply } from "../../fixtures/modelServer.js";

export const CLI = resolve("dist/cli.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON Lines. */
  lines: Array<Record<string, any>>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `deerflow-${prefix}-`));
}

/** A test's workspace folder and data dir. */
export type Dirs = { workspace: string; dataDir: string };

/** A fresh workspace folder and data dir for one test. */
export function sandboxDirs(): Dirs {
  return { workspace: tempDir("ws"), dataDir: tempDir("data") };
}

export interface SpawnedCli {
  child: ChildProcess;
  /** Resolves with each parsed stdout line as it arrives; `waitFor` waits on an event, not a timer. */
  waitFor(pred: (line: Record<string, any>) => boolean): Promise<Record<string, any>>;
  done: Promise<CliResult>;
}

/** Which Node runs the CLI (default: this test's) and which built script (default: dist/cli.js). */
export interface CliRuntime {
  node?: string;
  script?: string;
  /**
   * Long-term memory (issue 15) is on by default, and a CLI run ends with an extraction request
   * to the model. Other features' tests run `run`/`approve` with `--no-memory`, so the requests they
   * count stay theirs; memory.test.ts passes `memory: true`.
   */
  memory?: boolean;
  /** stdout is text for a person (help, version), not JSON Lines: kept whole, `lines` stays empty. */
  text?: boolean;
}

function withMemoryChoice(args: string[], memory: boolean | undefined): string[] {
  const starts = args[0] === "run" || args[0] === "approve";
  return starts && !memory && !args.includes("--no-memory") ? [...args, "--no-memory"] : args;
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, runtime: CliRuntime = {}): SpawnedCli {
  const script = runtime.script ?? CLI;
  if (!existsSync(script)) throw new Error(`${script} is missing: run "npm run build" first`);
  const child = spawn(runtime.node ?? process.execPath, [script, ...withMemoryChoice(args, runtime.memory)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let buffered = "";
  const lines: Array<Record<string, any>> = [];
  const waiters: Array<{ pred: (l: Record<string, any>) => boolean; resolve: (l: Record<string, any>) => void }> = [];
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    if (runtime.text) return;
    buffered += d;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const raw = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!raw.trim()) continue;
      const line = JSON.parse(raw) as Record<string, any>;
      lines.push(line);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.pred(line)) waiters.splice(i, 1)[0]!.resolve(line);
      }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const done = once(child, "close").then(([code, signal]) => {
    for (const w of waiters.splice(0)) w.resolve({ __closed: true });
    return { code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr, lines };
  });
  return {
    child,
    done,
    waitFor(pred) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((res) => waiters.push({ pred, resolve: res }));
    },
  };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, runtime: CliRuntime = {}): Promise<CliResult> {
  return spawnCli(args, env, runtime).done;
}

/** The CLI where stdout is text (help, version, usage errors): stdout and stderr as printed. */
export function runCliText(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return spawnCli(args, env, { text: true }).done;
}

/** Resolves with a file's content once it exists and is non-empty: woken by fs.watch, not a timer. */
export function waitForFile(path: string): Promise<string> {
  return new Promise((res) => {
    const read = () => (existsSync(path) ? readFileSync(path, "utf8") : "");
    const w = watch(dirname(path), (_event, name) => {
      if (name !== null && name !== basename(path)) return;
      const content = read();
      if (content.trim()) {
        w.close();
        res(content);
      }
    });
    const now = read();
    if (now.trim()) {
      w.close();
      res(now);
    }
  });
}

/**
 * One scripted model server for a test file: started before its tests, closed after them. The
 * returned object forwards to the live server (it exists only once `before` has run).
 */
export function useModelServer(): ModelServer {
  let current: ModelServer | undefined;
  before(async () => {
    current = await startModelServer();
  });
  after(async () => {
    await current?.close();
  });
  return new Proxy({} as ModelServer, {
    get(_target, prop) {
      if (!current) throw new Error("the model server is used before the test file's `before` ran");
      const value: unknown = Reflect.get(current, prop, current);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
}

/** `deerflow run` against the scripted model server, without the script: the middleware tests' command line. */
export function scriptedRunArgs(server: ModelServer, dirs: Dirs, prompt: string): string[] {
  return ["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", prompt];
}

/** Scripts the server, runs one turn through the CLI, and returns the result with this run's requests and its end line. */
export async function scriptedRun(server: ModelServer, dirs: Dirs, script: ScriptedReply[], prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli([...scriptedRunArgs(server, dirs, prompt), ...extra], env);
  const end = r.lines.at(-1);
  return { ...r, requests: server.requests.slice(first), end, threadId: end?.data?.thread_id as string };
}

/** `deerflow state` of a thread, parsed; fails the test when the CLI does. */
export async function cliState(dirs: Dirs, threadId: string): Promise<Record<string, any>> {
  const r = await runCli(["state", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--thread", threadId]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-1500));
  return JSON.parse(r.stdout) as Record<string, any>;
}
