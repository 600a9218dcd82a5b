/**
 * Failures become typed, readable errors within seconds, and leave nothing stuck: no engine, a
 * broken devcontainer.json (then fixed: the same provider brings the folder up), an image that
 * is neither local nor pullable.
 */
import { strict as assert } from "node:assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { HarnessError } from "../../extension/harness/errors.js";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { DevContainerSandboxProvider } from "../../extension/harness/sandbox/devcontainer/provider.js";
import { approvedDataDir, copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine, SOCKET_PATH } from "./helpers/engine.js";

let api: EngineApi;
const folders: string[] = [];

before(async () => {
  api = await ensureDockerEngine();
});

after(async () => {
  for (const folder of folders) await disposeFixture(api, folder);
  api?.close();
});

async function fixture(name: string): Promise<string> {
  const folder = await copyFixture(name);
  folders.push(folder);
  return folder;
}

function rejectsWith(code: string, pattern: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof HarnessError, `a HarnessError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    return true;
  };
}

test("no Docker engine: a readable error naming the socket", async () => {
  const folder = await fixture("basic");
  const provider = new DevContainerSandboxProvider({
    workspaceFolder: folder,
    dataDir: approvedDataDir(folder),
    dockerPath: DOCKER_PATH,
    socketPath: join(folder, "no-such-docker.sock"),
  });
  await assert.rejects(
    provider.acquire("t1"),
    rejectsWith("sandbox_engine_unavailable", /No Docker engine answers at unix:\/\/.*no-such-docker\.sock.*Start Docker/),
  );
  // The id of a thread that never got a sandbox: executing there fails the same way, not hangs.
  const sandbox = await provider.get(provider.sandboxId("t1"));
  assert.ok(sandbox);
  await assert.rejects(sandbox.execCommand("true"), rejectsWith("sandbox_engine_unavailable", /no-such-docker\.sock/));
  await provider.shutdown();
});

test("a broken devcontainer.json is a bring-up error; once fixed (and approved), the same provider comes up", async () => {
  const folder = await fixture("broken");
  const dataDir = approvedDataDir(folder);
  const provider = new DevContainerSandboxProvider({ workspaceFolder: folder, dataDir, dockerPath: DOCKER_PATH, socketPath: SOCKET_PATH });
  try {
    await assert.rejects(
      provider.acquire("t1"),
      rejectsWith("sandbox_bringup_failed", /Could not bring up the dev container .*missing one of "image", "dockerFile" or "dockerComposeFile"/),
    );
    writeFileSync(
      join(folder, ".devcontainer", "devcontainer.json"),
      JSON.stringify({ image: "local/debian-minbase:bookworm", runArgs: ["--network", "none"] }),
    );
    // The fix is a new configuration: the user approves it before it is brought up.
    await assert.rejects(provider.acquire("t1"), rejectsWith("sandbox_config_unapproved", /changed since it was approved/));
    approvedDataDir(folder, dataDir);
    const sandbox = await provider.get(await provider.acquire("t1"));
    const result = await sandbox?.execCommand("echo fixed", { timeoutMs: 30_000 });
    assert.equal(result?.stdout, "fixed\n");
  } finally {
    await provider.shutdown();
  }
});

test("an image that is missing and cannot be pulled is a bring-up error with the engine's reason", async () => {
  const folder = await fixture("missing-image");
  const provider = new DevContainerSandboxProvider({ workspaceFolder: folder, dataDir: approvedDataDir(folder), dockerPath: DOCKER_PATH, socketPath: SOCKET_PATH });
  await assert.rejects(
    provider.acquire("t1"),
    rejectsWith("sandbox_bringup_failed", /docker pull local\/deerflow-no-such-image:1.*\(Error response from daemon: /),
  );
  await provider.shutdown();
});
