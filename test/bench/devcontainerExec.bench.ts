// The dev container sandbox's `bash` path (the bash tool, and Sandbox.execCommand under it:
// Engine API exec over the unix socket, from the already running harness) against a raw
// `docker exec` CLI process of the same command in the same container, in the same run;
// `devcontainer exec` for scale. Then the first call of a fresh folder, bring-up included:
// container created (cold) and container restarted (stopped, as after an idle release).
// Needs a Docker engine: the CI setup script starts one when none answers.
import { spawn } from "node:child_process";
import { DevContainerSandboxProvider } from "../../extension/harness/sandbox/devcontainer/provider.js";
import { defaultCliPath } from "../../extension/harness/sandbox/devcontainer/devcontainerCli.js";
import { approvedDataDir, copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine, SOCKET_PATH } from "../devcontainer/helpers/engine.js";
import { ensureThreadDirs } from "../../extension/harness/trust/threadFolders.js";
import { createBashTool } from "../../extension/harness/tools/sandbox/bash.js";
import type { Bench, Row } from "./run.js";

const RUNS = Number(process.env.BENCH_DEVCONTAINER_RUNS ?? 30);
const CLI_RUNS = Number(process.env.BENCH_DEVCONTAINER_CLI_RUNS ?? 5);
const COMMAND = "echo hi";

function runProcess(file: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stdout.resume();
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited ${code}: ${err}`))));
  });
}

async function timed(fn: () => Promise<unknown>, runs: number): Promise<number[]> {
  await fn(); // warm-up: connection pool, page cache, the CLI's module cache
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return samples.sort((a, b) => a - b);
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function newProvider(folder: string): DevContainerSandboxProvider {
  return new DevContainerSandboxProvider({ workspaceFolder: folder, dataDir: approvedDataDir(folder), dockerPath: DOCKER_PATH, socketPath: SOCKET_PATH, idleTimeoutMs: 0 });
}

async function firstCall(provider: DevContainerSandboxProvider): Promise<number> {
  const t0 = performance.now();
  const sandbox = await provider.get(await provider.acquire("bench"));
  const result = await sandbox?.execCommand(COMMAND);
  if (result?.stdout !== "hi\n") throw new Error(`unexpected output: ${JSON.stringify(result)}`);
  return performance.now() - t0;
}

const bench: Bench = {
  name: "devcontainerExec",
  description: `\`${COMMAND}\` through the dev container sandbox vs a raw docker exec (medians of ${RUNS}); first call with bring-up`,
  async run(): Promise<Row[]> {
    const api = await ensureDockerEngine();
    const folder = await copyFixture("basic");
    const rows: Row[] = [];
    try {
      // Cold: no container for the folder yet (devcontainer up creates it, vfs storage).
      let provider = newProvider(folder);
      const cold = await firstCall(provider);
      const info = provider.containerInfo();
      if (!info) throw new Error("no container after the first call");
      const sandbox = await provider.get(provider.sandboxId("bench"));
      if (!sandbox) throw new Error("sandbox vanished");

      const ours = await timed(() => sandbox.execCommand(COMMAND), RUNS);
      const bash = createBashTool({ dirs: ensureThreadDirs(folder, "bench"), provider, allowHostCommands: false });
      const tool = await timed(() => bash.invoke({ description: "bench", command: COMMAND }), RUNS);
      const dockerArgs = ["exec", "-u", info.remoteUser, "-w", "/mnt/user-data/workspace", info.containerId, info.shell, "-c", COMMAND];
      const raw = await timed(() => runProcess(DOCKER_PATH, dockerArgs), RUNS);
      const cliArgs = [defaultCliPath(), "exec", "--workspace-folder", folder, "--docker-path", DOCKER_PATH, info.shell, "-c", COMMAND];
      const cli = await timed(() => runProcess(process.execPath, cliArgs), CLI_RUNS);

      const base = quantile(raw, 0.5);
      const row = (path: string, s: number[]): Row => ({
        path,
        runs: s.length,
        "median ms": quantile(s, 0.5),
        "p90 ms": quantile(s, 0.9),
        "× docker exec": quantile(s, 0.5) / base,
      });
      rows.push(
        row("bash tool (sandbox, Engine API)", tool),
        row("sandbox execCommand (Engine API)", ours),
        row("docker exec (CLI process)", raw),
        row("devcontainer exec (CLI)", cli),
      );

      // Warm start: the folder's container exists but is stopped (an idle release, a reboot).
      await provider.shutdown();
      await api.stopContainer(info.containerId, 0);
      provider = newProvider(folder);
      const restart = await firstCall(provider);
      await provider.shutdown();
      rows.push(
        { path: "first call, container created (bring-up + exec)", runs: 1, "median ms": cold },
        { path: "first call, stopped container restarted", runs: 1, "median ms": restart },
      );
    } finally {
      await disposeFixture(api, folder);
      api.close();
    }
    return rows;
  },
};

export default bench;
