/**
 * The dev container tests' engine: a real Docker engine and the registry-free base image, set
 * up by scripts/ci/docker-setup.sh when they are not there yet (idempotent; an engine that
 * already answers is used as is). If the engine cannot be had, `ensureDockerEngine` throws and
 * the tests FAIL: they never skip.
 *
 * The engine is left running for the next test file (the script's `stop` ends the one it
 * started; .ci/run calls it at the end).
 */
import { spawn } from "node:child_process";
import { after, before } from "node:test";
import { startModelServer, type ModelServer } from "../../fixtures/modelServer.js";
import { chmod, cp, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { mkdtempSync } from "node:fs";
import { EngineApi } from "../../../extension/harness/sandbox/devcontainer/engineApi.js";
import { approveCurrent, ConfigApprovals } from "../../../extension/harness/sandbox/devcontainer/approvals.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../../..");
const SETUP_SCRIPT = join(ROOT, "scripts/ci/docker-setup.sh");
const FIXTURES = join(ROOT, "test/fixtures/devcontainer");

/** Debian's client, matching the 20.10 engine (the machine's newer client may not). */
export const DOCKER_PATH = "/usr/bin/docker";
export const SOCKET_PATH = "/var/run/docker.sock";
/** The same engine on loopback TCP (scripts/ci/docker-setup.sh DOCKER_TCP): a DOCKER_HOST as a remote engine is named. */
export const ENGINE_TCP = "tcp://127.0.0.1:23750";

function runSetup(action: "start" | "status"): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [SETUP_SCRIPT, action], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolvePromise({ code, output }));
  });
}

export async function ensureDockerEngine(): Promise<EngineApi> {
  if ((await runSetup("status")).code !== 0) {
    const started = await runSetup("start");
    if (started.code !== 0) throw new Error(`scripts/ci/docker-setup.sh start failed:\n${started.output}`);
  }
  const api = new EngineApi(SOCKET_PATH);
  await api.ping();
  return api;
}

/** A fresh copy of a sample workspace (its own folder, so its own container). */
export async function copyFixture(name: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), `deerflow-dc-${name}-`)));
  await cp(join(FIXTURES, name), dir, { recursive: true });
  // mkdtemp makes it 0700: a non-root remoteUser could not even enter the mounted folder.
  await chmod(dir, 0o755);
  return dir;
}

/** Remove every container @devcontainers/cli made for the folder, then the folder. */
export async function disposeFixture(api: EngineApi, folder: string): Promise<void> {
  const containers = await api.listContainers([`devcontainer.local_folder=${folder}`]);
  for (const c of containers) await api.removeContainer(c.Id);
  await rm(folder, { recursive: true, force: true });
}

/**
 * A data dir in which the folder's dev container configuration, as it is now, is approved (what
 * `deerflow devcontainer approve` records): every bring-up needs the user's approval.
 */
export function approvedDataDir(folder: string, dataDir = mkdtempSync(join(tmpdir(), "deerflow-dc-data-"))): string {
  approveCurrent(new ConfigApprovals(dataDir, folder));
  return dataDir;
}

/** A test file's engine, scripted model server and fixture folder: made before its tests, disposed after. */
export interface EngineFixture {
  readonly api: EngineApi;
  readonly server: ModelServer;
  readonly folder: string;
}

export function useEngineFixture(name: string): EngineFixture {
  let api: EngineApi | undefined;
  let server: ModelServer | undefined;
  let folder: string | undefined;
  before(async () => {
    api = await ensureDockerEngine();
    server = await startModelServer();
    folder = await copyFixture(name);
  });
  after(async () => {
    await server?.close();
    if (api && folder) await disposeFixture(api, folder);
    api?.close();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the engine fixture's ${what} is used before the test file's before() ran`);
    return v;
  };
  return {
    get api() {
      return ready(api, "engine");
    },
    get server() {
      return ready(server, "model server");
    },
    get folder() {
      return ready(folder, "folder");
    },
  };
}
