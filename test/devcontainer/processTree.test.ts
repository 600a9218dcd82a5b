/**
 * Process trees die (issue 10): a timed-out or cancelled command in the container is killed with
 * everything it started, including children that called `setsid`, dropped their environment
 * (`env -i`), were orphaned, or hold the exec's output open after the command itself exited.
 * Checked with a `ps` inside the container (the test image has no procps: /proc is read
 * directly, zombies included, as `ps` would list them).
 */
import { strict as assert } from "node:assert";
import { after, before, test } from "node:test";
import { DevContainerSandboxProvider } from "../../extension/harness/sandbox/devcontainer/provider.js";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { runContainerExec } from "../../extension/harness/sandbox/devcontainer/containerExec.js";
import { approvedDataDir, copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine, SOCKET_PATH } from "./helpers/engine.js";

let api: EngineApi;
let folder: string;
let provider: DevContainerSandboxProvider;

before(async () => {
  api = await ensureDockerEngine();
  folder = await copyFixture("basic");
  provider = new DevContainerSandboxProvider({ workspaceFolder: folder, dataDir: approvedDataDir(folder), dockerPath: DOCKER_PATH, socketPath: SOCKET_PATH, idleTimeoutMs: 0 });
});

after(async () => {
  await provider?.shutdown();
  if (api && folder) await disposeFixture(api, folder);
  api?.close();
});

/** `ps -e -o pid,stat,args` inside the container, from /proc (as root, so every process is seen). */
async function ps(): Promise<string[]> {
  const containerId = provider.containerInfo()?.containerId;
  assert.ok(containerId, "the container is up");
  const listing = await runContainerExec(api, {
    containerId,
    cmd: ["sh", "-c", `for d in /proc/[0-9]*; do read -r st < $d/stat 2>/dev/null || continue; echo "\${d#/proc/} $(echo "$st" | sed 's/^[0-9]* (\\(.*\\)) \\(.\\).*/\\2 \\1/') $(tr '\\0\\n' '  ' < $d/cmdline)"; done`],
    user: "0",
    timeoutMs: 30_000,
    captureLimitBytes: 1024 * 1024,
  });
  assert.equal(listing.exitCode, 0, listing.stderr);
  return listing.stdout.trim().split("\n");
}

async function sandbox() {
  const s = await provider.get(await provider.acquire("tree"));
  assert.ok(s);
  return s;
}

/** Processes whose name or arguments mention one of the sleeps the command started. */
function leftovers(lines: string[], marker: RegExp): string[] {
  return lines.filter((l) => marker.test(l));
}

test("a timed-out `bash -c 'setsid sleep 1000 & sleep 1000'` leaves no sleep in ps", async () => {
  const s = await sandbox();
  const result = await s.execCommand("bash -c 'setsid sleep 1000 & sleep 1000'", { timeoutMs: 1500 });
  assert.equal(result.timedOut, true);
  assert.deepEqual(leftovers(await ps(), /sleep 1000/), []);
});

test("a cancelled command dies with its setsid, env -i, orphaned and output-holding children", async () => {
  const s = await sandbox();
  const controller = new AbortController();
  // Each child escapes one way: setsid (new session), env -i (no token), setsid + env -i (only
  // its parent links it), a subshell that exits (orphaned, only the session links it), and one
  // whose launcher exits at once while it keeps the exec's output open (only the pipe links it).
  // Each says "up" once it runs: the test acts on those lines, never on a timer.
  const child = (n: number) => `sh -c 'echo up${n}; exec sleep 110${n}'`;
  const command = [
    `setsid ${child(1)} &`,
    `env -i ${child(2)} &`,
    `setsid env -i ${child(3)} &`,
    `(env -i ${child(4)} &)`,
    `(setsid env -i ${child(5)} &)`,
    "sleep 1106",
  ].join("\n");
  let seen = "";
  let allUp!: () => void;
  const up = new Promise<void>((resolve) => (allUp = resolve));
  const done = s.execCommand(command, {
    timeoutMs: 600_000,
    signal: controller.signal,
    onOutput: (_stream, chunk) => {
      seen += chunk.toString();
      if ([1, 2, 3, 4, 5].every((n) => seen.includes(`up${n}`))) allUp();
    },
  });
  await up;
  assert.equal(leftovers(await ps(), /110[1-6]/).length, 6, "all six were running before the cancel");
  controller.abort(new Error("cancelled by the test"));
  await assert.rejects(done, /cancelled by the test/);
  assert.deepEqual(leftovers(await ps(), /110[1-6]/), []);
});

test("a command that exits while a detached child keeps its output open: the timeout kills the child", async () => {
  const s = await sandbox();
  // The command itself is gone at once; setsid + env -i + orphaned leaves the output pipe as the
  // child's only link to it (the wrapper reported the pipe before the command ran).
  const result = await s.execCommand("(setsid env -i sh -c 'exec sleep 1201' &); exit 0", { timeoutMs: 1500 });
  assert.equal(result.timedOut, true, "the child held the output: the exec only ended at the timeout");
  assert.deepEqual(leftovers(await ps(), /sleep 1201/), []);
});

test("the wrapper's pid line never reaches the output, and exit codes are the command's", async () => {
  const s = await sandbox();
  const r = await s.execCommand("echo out; echo err >&2; exit 3", { timeoutMs: 30_000 });
  assert.deepEqual([r.stdout, r.stderr, r.exitCode], ["out\n", "err\n", 3]);
});
