/**
 * Approval at the provider, against a real engine: `up` builds from the approved COPY of the
 * Dockerfile (an edit of the workspace's Dockerfile after the check cannot reach the image), an
 * edited Dockerfile refuses Rebuild, and an edit made while the container idles refuses the
 * automatic re-up after the idle stop.
 */
import { strict as assert } from "node:assert";
import { EventEmitter, once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { HarnessError } from "../../extension/harness/errors.js";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { DevContainerSandboxProvider, type DevContainerEvent } from "../../extension/harness/sandbox/devcontainer/provider.js";
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

async function fixture(): Promise<string> {
  const folder = await copyFixture("basic");
  folders.push(folder);
  return folder;
}

function unapproved(pattern: RegExp) {
  return (err: unknown): boolean => err instanceof HarnessError && err.code === "sandbox_config_unapproved" && pattern.test(err.message);
}

/** No RUN step: the test engine has no network for build containers, and none is needed. */
function dockerfile(value: string): string {
  return `FROM local/debian-minbase:bookworm\nENV FROM_DOCKERFILE=${value}\n`;
}

test("up builds from the approved copy of the Dockerfile; an edited Dockerfile refuses Rebuild", async () => {
  const folder = await fixture();
  writeFileSync(join(folder, ".devcontainer", "Dockerfile"), dockerfile("approved"));
  writeFileSync(
    join(folder, ".devcontainer", "devcontainer.json"),
    `// JSON with comments, as devcontainer.json allows\n{ "build": { "dockerfile": "Dockerfile" }, "runArgs": ["--network", "none"], }\n`,
  );
  const provider = new DevContainerSandboxProvider({ workspaceFolder: folder, dataDir: approvedDataDir(folder), dockerPath: DOCKER_PATH, socketPath: SOCKET_PATH, idleTimeoutMs: 0 });
  try {
    const sandbox = await provider.get(await provider.acquire("t1"));
    assert.ok(sandbox);
    const r = await sandbox.execCommand('echo "$FROM_DOCKERFILE"', { timeoutMs: 30_000 });
    assert.equal(r.stdout, "approved\n");
    // The container (or anyone) rewrites the Dockerfile: Rebuild would build it, so it is refused.
    writeFileSync(join(folder, ".devcontainer", "Dockerfile"), dockerfile("planted"));
    await assert.rejects(provider.rebuild(), unapproved(/changed since it was approved.*\.devcontainer\/Dockerfile/));
    await assert.rejects(provider.preflight(), unapproved(/changed since it was approved/));
  } finally {
    await provider.shutdown();
  }
});

test("an edit made while the container idles refuses the automatic re-up after the idle stop", async () => {
  const folder = await fixture();
  const events = new EventEmitter();
  const provider = new DevContainerSandboxProvider({
    workspaceFolder: folder,
    dataDir: approvedDataDir(folder),
    dockerPath: DOCKER_PATH,
    socketPath: SOCKET_PATH,
    idleTimeoutMs: 200,
    onEvent: (e: DevContainerEvent) => events.emit(e.status, e),
  });
  try {
    const id = await provider.acquire("t1");
    const sandbox = await provider.get(id);
    assert.ok(sandbox);
    const plantedConfig = '{"image":"local/debian-minbase:bookworm","runArgs":["--network","none"],"initializeCommand":"touch /tmp/planted"}';
    // From inside, .devcontainer is read-only (protectedMounts.ts)...
    const fromInside = await sandbox.execCommand(`printf '%s' '${plantedConfig}' > /mnt/user-data/workspace/.devcontainer/devcontainer.json`, { timeoutMs: 30_000 });
    assert.notEqual(fromInside.exitCode, 0);
    assert.match(fromInside.stderr, /Read-only file system/);
    // ...so the edit comes from outside while the container idles.
    writeFileSync(join(folder, ".devcontainer", "devcontainer.json"), plantedConfig);
    const stopped = once(events, "stopped");
    await provider.release(id);
    // The idle timer is unref'd (an idle container must not keep the harness alive): hold the
    // event loop open while waiting for its event.
    const keepAlive = setInterval(() => undefined, 60_000);
    await stopped.finally(() => clearInterval(keepAlive));
    await assert.rejects(sandbox.execCommand("echo up-again", { timeoutMs: 30_000 }), unapproved(/changed since it was approved.*initializeCommand|touch \/tmp\/planted/));
  } finally {
    await provider.shutdown();
  }
});
