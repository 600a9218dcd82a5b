/**
 * Starts a real VS Code for the tests: code-server on 127.0.0.1, with a fresh user-data dir
 * (settings.json without welcome page, trust prompt, telemetry, gallery, chat), a fresh extensions
 * dir and a copy of a sample workspace, under its own process group so `cleanup` stops the server,
 * its extension hosts, file watchers and the harness they started, together.
 *
 * Which code-server (4.100.3 on Node 20 or 4.139.1 on Node 24) and what differs between them is in
 * codeServers.ts. The server is started with that version's node, and code-server forks its
 * extension hosts with its own process.execPath, so the extension (and the harness it spawns with
 * process.execPath) runs on the same Node.
 *
 * The extension is loaded in development mode (the workbench URL carries
 * `?payload=[["extensionDevelopmentPath","vscode-remote://HOST/abs/path"]]`: code-server rejects the
 * CLI flag but the web workbench reads the payload; 1.139 only with the smoke-test driver on), linked
 * into the fresh extensions dir, or installed there from a VSIX before start. Recipe and
 * measurements: ../shared/recipes/vscode-e2e/README.md.
 *
 * code-server itself lives outside the repo; `ensureCodeServer` runs scripts/ci/code-server-setup.sh,
 * which returns in well under a second when it is already installed.
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { once } from "node:events";
import { CODE_SERVERS, defaultCodeServer, ensureCodeServer } from "./codeServers.js";
import type { CodeServerVersion } from "./codeServers.js";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Settings that keep the workbench quiet and offline (each one hides a dialog, tour or network call). */
export const QUIET_SETTINGS: Readonly<Record<string, unknown>> = {
  "telemetry.telemetryLevel": "off",
  "security.workspace.trust.enabled": false,
  "security.workspace.trust.startupPrompt": "never",
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "git.enabled": false,
  "chat.commandCenter.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "window.restoreWindows": "none",
  // Long-term memory (issue 15) would send an extraction request to the scripted model 30 s after
  // each run, in the middle of suites that count requests; memory.e2e.ts turns it on for itself.
  "deerflow.memory.enabled": false,
};

export type ExtensionSource =
  /** Development mode: the folder with the extension's package.json (the repo root for DeerFlow). */
  | { kind: "dev"; path: string }
  /** Installed into the fresh extensions dir with `--install-extension` before start. */
  | { kind: "vsix"; path: string }
  /**
   * Symlinked into the fresh extensions dir as `<publisher>.<name>-<version>`: code-server registers
   * it as an installed extension (only while that dir has no extensions.json yet, as here). The
   * workbench URL stays clean, which is what a person opening it wants.
   */
  | { kind: "link"; path: string }
  | { kind: "none" };

export interface LaunchOptions {
  extension: ExtensionSource;
  /** With a "dev" extension: the extension-host test entry (run() contract) the workbench loads. */
  extensionTestsPath?: string;
  /** Which code-server (default: defaultCodeServer(), i.e. DEERFLOW_CODE_SERVER or the current one). */
  version?: CodeServerVersion;
  /** Folder copied into the run dir as the workspace (default samples/hello-workspace). */
  workspaceFrom?: string;
  /** Open this folder itself instead of a copy (workspaceFrom and workspaceFiles are then ignored). */
  workspaceInPlace?: string;
  /** Extra files written into the workspace copy, relative path → content. */
  workspaceFiles?: Readonly<Record<string, string | Uint8Array>>;
  /** Environment for code-server and so for its extension hosts (and the harness they start). */
  env?: Readonly<Record<string, string>>;
  /** User settings merged over QUIET_SETTINGS and the version's own. */
  settings?: Readonly<Record<string, unknown>>;
  /** The user's keybindings.json entries (`{key, command, args?}`), e.g. to run a command with arguments. */
  keybindings?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /** Default: a free port. */
  port?: number;
  /** Prefix of the run dir's name, for finding it after a failure. */
  label?: string;
  /** Keep the run dir (logs, user data) after cleanup. */
  keepRunDir?: boolean;
}

export interface CodeServer {
  /** The code-server version, e.g. "4.139.1". */
  readonly version: CodeServerVersion;
  /** The VS Code inside it (vscode.version in the extension host), e.g. "1.139.1". */
  readonly vscodeVersion: string;
  /** The node binary the server, its extension hosts and the harness run on. */
  readonly node: string;
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** The workbench URL with the workspace folder (and the development payload, if any). */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly runDir: string;
  readonly workspace: string;
  readonly userDataDir: string;
  readonly logFile: string;
  /** ms from spawn to "HTTP server listening". */
  readonly listenMs: number;
  /** code-server's output so far (also written to logFile when it exits). */
  log(): string;
  /** Summed RSS of code-server's process tree (server, extension hosts, watchers, the harness). */
  rssMiB(): number;
  /** Stops the whole process group (SIGTERM, then SIGKILL after 5 s); idempotent. */
  cleanup(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const addr = srv.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  srv.close();
  await once(srv, "close");
  return port;
}

/** Summed VmRSS (MiB) of `root` and all its descendants, from /proc. */
export function processTreeRssMiB(root: number, filter?: (cmdline: string) => boolean): number {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may contain spaces, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(name), ppid);
    } catch {
      /* the process went away */
    }
  }
  let kib = 0;
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    while (p !== undefined && p > 0 && p !== root) p = parent.get(p);
    if (p !== root) continue;
    try {
      if (filter && !filter(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "))) continue;
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      kib += m ? Number(m[1]) : 0;
    } catch {
      /* gone */
    }
  }
  return Math.round(kib / 1024);
}

/** Live (not zombie) processes whose process group is `pgid`. */
export function processGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") live.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return live;
}

/**
 * SIGTERM to the group, SIGKILL after 5 s, then wait until no member is alive. The members are not
 * all our children (extension hosts, watchers, the harness), so there is no exit event to wait
 * on for them: the last step checks /proc every 50 ms, for at most 5 s.
 */
async function stopGroup(child: ChildProcess, pid: number): Promise<void> {
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* ESRCH: the group is gone */
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, "exit");
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  // The leader is gone; make sure no extension host or harness outlives it.
  kill("SIGKILL");
  const deadline = performance.now() + 5000;
  while (processGroupMembers(pid).length > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function launchCodeServer(opts: LaunchOptions): Promise<CodeServer> {
  const version = opts.version ?? defaultCodeServer();
  const { dir: csDir, node } = ensureCodeServer(version);
  const entry = join(csDir, "node_modules", "code-server", "out", "node", "entry.js");
  const port = opts.port ?? (await freePort());
  const runDir = mkdtempSync(join(tmpdir(), `${opts.label ?? "deerflow-vscode"}-`));
  const userDataDir = join(runDir, "user-data");
  const extensionsDir = join(runDir, "extensions");
  const workspace = opts.workspaceInPlace ?? join(runDir, "workspace");
  mkdirSync(join(userDataDir, "User"), { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  if (!opts.workspaceInPlace) {
    cpSync(opts.workspaceFrom ?? join(repoRoot, "samples", "hello-workspace"), workspace, { recursive: true });
    for (const [rel, content] of Object.entries(opts.workspaceFiles ?? {})) {
      mkdirSync(dirname(join(workspace, rel)), { recursive: true });
      writeFileSync(join(workspace, rel), content);
    }
  }
  writeFileSync(join(userDataDir, "User", "settings.json"), JSON.stringify({ ...QUIET_SETTINGS, ...CODE_SERVERS[version].settings, ...opts.settings }, null, 2));
  if (opts.keybindings) writeFileSync(join(userDataDir, "User", "keybindings.json"), JSON.stringify(opts.keybindings, null, 2));
  // The test's own settings are the remote machine's too: code-server's window is remote, and a
  // machine-scoped setting (deerflow.allowHostCommands, deerflow.approval.*) in the User file was
  // once seen not applied on 1.139 under load; the remote machine's settings are where it belongs.
  if (opts.settings) {
    mkdirSync(join(userDataDir, "Machine"), { recursive: true });
    writeFileSync(join(userDataDir, "Machine", "settings.json"), JSON.stringify(opts.settings, null, 2));
  }
  // --config keeps code-server away from ~/.config/code-server/config.yaml (a random password).
  const config = join(runDir, "config.yaml");
  writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const common = ["--config", config, "--user-data-dir", userDataDir, "--extensions-dir", extensionsDir];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // No marketplace: the workbench would query open-vsx.org, which this machine cannot reach.
    EXTENSIONS_GALLERY: "{}",
    ...opts.env,
    // Anything in the extension host that runs `node` by name (terminals, tasks, CLIs) gets the
    // server's Node too; the harness itself is spawned with process.execPath.
    PATH: `${dirname(node)}:${opts.env?.PATH ?? process.env.PATH ?? ""}`,
  };
  if (opts.extension.kind === "vsix") {
    const r = spawnSync(node, [entry, ...common, "--install-extension", opts.extension.path], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`--install-extension ${opts.extension.path} failed:\n${r.stdout}\n${r.stderr}`);
  }

  if (opts.extension.kind === "link") {
    const pkg = JSON.parse(readFileSync(join(opts.extension.path, "package.json"), "utf8")) as { publisher: string; name: string; version: string };
    symlinkSync(opts.extension.path, join(extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`), "dir");
  }

  const logFile = join(runDir, "code-server.log");
  const t0 = performance.now();
  // detached: its own process group (setsid), so cleanup reaches every descendant at once.
  const child = spawn(
    node,
    [
      entry,
      ...common,
      "--bind-addr", `127.0.0.1:${port}`,
      "--auth", "none",
      "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
      "--disable-getting-started-override", "--ignore-last-opened",
      ...(opts.extension.kind === "dev" ? CODE_SERVERS[version].payloadArgs : []),
      workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error("code-server did not start");
  let log = "";
  const listening = new Promise<void>((ok, fail) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log += text;
      writeFileSync(logFile, log);
      if (text.includes("HTTP server listening on")) ok();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, sig) => fail(new Error(`code-server exited (${code ?? sig}) before listening:\n${log}`)));
    setTimeout(() => fail(new Error(`code-server did not listen within 30 s:\n${log}`)), 30_000).unref();
  });
  let stopped: Promise<void> | undefined;
  const cleanup = (): Promise<void> => {
    stopped ??= stopGroup(child, pid).then(() => {
      if (!opts.keepRunDir) rmSync(runDir, { recursive: true, force: true });
    });
    return stopped;
  };
  try {
    await listening;
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    if (!health.ok) throw new Error(`GET /healthz answered ${health.status}`);
  } catch (e) {
    await cleanup();
    throw e;
  }
  const listenMs = Math.round(performance.now() - t0);
  child.stdout.removeAllListeners("data");
  child.stderr.removeAllListeners("data");
  // Keep draining (a full pipe would block the server) and keep the log for post-mortems.
  const append = (chunk: Buffer) => {
    log += chunk.toString();
    if (log.length > 2_000_000) log = log.slice(-1_000_000);
  };
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  child.once("exit", () => writeFileSync(logFile, log));

  const origin = `http://127.0.0.1:${port}`;
  const url = new URL(`${origin}/`);
  url.searchParams.set("folder", workspace);
  if (opts.extension.kind === "dev") {
    // The authority must be the Host the browser uses: code-server resolves vscode-remote:// by it.
    const remote = (path: string): string => `vscode-remote://127.0.0.1:${port}${path}`;
    const payload = [["extensionDevelopmentPath", remote(opts.extension.path)]];
    if (opts.extensionTestsPath) payload.push(["extensionTestsPath", remote(opts.extensionTestsPath)]);
    url.searchParams.set("payload", JSON.stringify(payload));
  }
  return {
    version,
    vscodeVersion: CODE_SERVERS[version].vscode,
    node,
    origin,
    url: url.toString(),
    port,
    pid,
    runDir,
    workspace,
    userDataDir,
    logFile,
    listenMs,
    log: () => log,
    rssMiB: () => processTreeRssMiB(pid),
    cleanup,
  };
}
