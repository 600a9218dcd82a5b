/**
 * The code-servers the VS Code tests run on, and what differs between them:
 *   - 4.100.3 = VS Code 1.100.3, the oldest VS Code the extension supports (engines.vscode), on the
 *     machine's Node 20;
 *   - 4.139.1 = VS Code 1.139.1, the one people use today, on Node 24 (scripts/ci/node24-setup.sh).
 * Runners cover every version in turn, or those DEERFLOW_CODE_SERVER names; a single launch uses
 * the one DEERFLOW_CODE_SERVER names, else the current one. Each is installed on demand outside the
 * repo by scripts/ci/code-server-setup.sh VERSION (well under a second when present).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ciScripts = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "scripts", "ci");

export const CODE_SERVER_VERSIONS = ["4.100.3", "4.139.1"] as const;
export type CodeServerVersion = (typeof CODE_SERVER_VERSIONS)[number];
/** The VS Code people use today: what `npm start` opens and what a launch uses when not told. */
export const CURRENT_CODE_SERVER: CodeServerVersion = "4.139.1";

export function isCodeServerVersion(v: string): v is CodeServerVersion {
  return (CODE_SERVER_VERSIONS as readonly string[]).includes(v);
}

/**
 * The code-servers a runner covers, from DEERFLOW_CODE_SERVER: one version, a comma list, or
 * unset / "all" for every one. Runners set it to the single version of the block they run, so a
 * suite (a child process) launches that one.
 */
export function selectedCodeServers(): CodeServerVersion[] {
  const raw = process.env.DEERFLOW_CODE_SERVER?.trim();
  if (!raw || raw === "all") return [...CODE_SERVER_VERSIONS];
  const wanted = raw.split(",").map((v) => v.trim());
  const unknown = wanted.filter((v) => !isCodeServerVersion(v));
  if (unknown.length > 0) throw new Error(`DEERFLOW_CODE_SERVER names ${unknown.join(", ")}; known: ${CODE_SERVER_VERSIONS.join(", ")}, all`);
  return CODE_SERVER_VERSIONS.filter((v) => wanted.includes(v));
}

/** The version a launch uses when not told: DEERFLOW_CODE_SERVER when it names exactly one, else the current one. */
export function defaultCodeServer(): CodeServerVersion {
  const selected = selectedCodeServers();
  return selected.length === 1 ? selected[0]! : CURRENT_CODE_SERVER;
}

interface CodeServerTraits {
  /** The VS Code inside (vscode.version in the extension host). */
  vscode: string;
  /** The Node major it runs on (and so the extension host and the harness). */
  nodeMajor: number;
  /** Server arguments that make the workbench honour the URL payload (development extension, tests). */
  payloadArgs: readonly string[];
  /** Extra user settings, merged over QUIET_SETTINGS. */
  settings: Readonly<Record<string, unknown>>;
}

/** What differs between the code-servers. */
export const CODE_SERVERS: Readonly<Record<CodeServerVersion, CodeServerTraits>> = {
  "4.100.3": { vscode: "1.100.3", nodeMajor: 20, payloadArgs: [], settings: {} },
  "4.139.1": {
    vscode: "1.139.1",
    nodeMajor: 24,
    // A built 1.139 web workbench honours the URL payload (extensionDevelopmentPath,
    // extensionTestsPath) only when the server says enable-smoke-test-driver; 1.100 honoured it
    // always. code-server 4.139 passes VS Code options through with --vscode-option (4.100.3
    // rejects both flags). The flag also changes the workbench (no notification toasts, no modal
    // editors, dialogs skipped), so it is set only for a development extension.
    payloadArgs: ["--vscode-option", "enable-smoke-test-driver"],
    settings: {
      // Even with chat.commandCenter.enabled off and the secondary side bar (where 1.139 opens
      // its Chat view) hidden, 1.139 shows a chat button in the title bar and a Copilot item in
      // the status bar (seen in a screenshot); turning the built-in AI features off hides both.
      "chat.disableAIFeatures": true,
    },
  },
};

/** Installs `version` of code-server (and chromium, and Node 24 for 4.139.1) when missing. */
export function ensureCodeServer(version: CodeServerVersion = defaultCodeServer()): { dir: string; node: string } {
  const dir = lastLine("code-server-setup.sh", version);
  if (!existsSync(join(dir, "node_modules", "code-server", "out", "node", "entry.js"))) {
    throw new Error(`code-server-setup.sh ${version} printed "${dir}", which holds no code-server`);
  }
  return { dir, node: nodeFor(version) };
}

/**
 * The node binary a code-server runs on. 4.139.1: Node 24 from scripts/ci/node24-setup.sh. 4.100.3:
 * the machine's Node 20 — this process's own, unless a runner itself runs on Node 24
 * (scripts/ci/with-node24.sh), then Debian's /usr/bin/node, which 4.100.3 was built against.
 */
function nodeFor(version: CodeServerVersion): string {
  if (CODE_SERVERS[version].nodeMajor === 24) return join(lastLine("node24-setup.sh"), "bin", "node");
  return process.versions.node.startsWith("20.") ? process.execPath : "/usr/bin/node";
}

/**
 * This process's environment without the npm_config_* variables an `npm test` / `npm start` that
 * runs us exported: an npm started below would take them as its configuration (the outer npm's
 * user agent names Node 20, which code-server 4.139.1's postinstall refuses; scripts/ci/npm-env.sh).
 */
export function withoutNpmConfig(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_config_/i.test(k)));
}

/** Runs scripts/ci/<script> (idempotent installers) and returns the last stdout line, a folder. */
function lastLine(script: string, ...args: string[]): string {
  const path = join(ciScripts, script);
  const r = spawnSync("bash", [path, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], env: withoutNpmConfig() });
  if (r.status !== 0) throw new Error(`${path} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
  return r.stdout.trim().split("\n").at(-1) ?? "";
}
