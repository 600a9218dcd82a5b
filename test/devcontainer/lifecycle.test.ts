/**
 * The folder's container over time: the root-level `.devcontainer.json` form with a non-root
 * remoteUser; released after the idle timeout once the last lease ends (stopped, not removed);
 * brought up again by the next command; left alone at shutdown when we did not start it.
 */
import { strict as assert } from "node:assert";
import { EventEmitter, once } from "node:events";
import { after, before, test } from "node:test";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import {
  DevContainerSandboxProvider,
  type DevContainerEvent,
} from "../../extension/harness/sandbox/devcontainer/provider.js";
import { approvedDataDir, copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine, SOCKET_PATH } from "./helpers/engine.js";

let api: EngineApi;
let folder: string;

before(async () => {
  api = await ensureDockerEngine();
  folder = await copyFixture("nobody");
});

after(async () => {
  if (api && folder) await disposeFixture(api, folder);
  api?.close();
});

function provider(idleTimeoutMs: number) {
  const events = new EventEmitter();
  const p = new DevContainerSandboxProvider({
    workspaceFolder: folder,
    dataDir: approvedDataDir(folder),
    dockerPath: DOCKER_PATH,
    socketPath: SOCKET_PATH,
    idleTimeoutMs,
    onEvent: (e: DevContainerEvent) => events.emit(e.status, e),
  });
  return { p, events };
}

test("commands run as remoteUser; the idle container is stopped, kept, and brought up again", async () => {
  const { p, events } = provider(200);
  try {
    const id = await p.acquire("t1");
    const sandbox = await p.get(id);
    assert.ok(sandbox);
    const who = await sandbox.execCommand("id -un; pwd", { timeoutMs: 30_000 });
    assert.equal(who.stdout, "nobody\n/mnt/user-data/workspace\n");
    const containerId = p.containerInfo()?.containerId;
    assert.ok(containerId);

    // The lease ends with the run; nothing else holds the container: it is stopped when idle.
    const stopped = once(events, "stopped");
    await p.release(id);
    // The idle timer is unref'd (an idle container must not keep the harness alive), so hold
    // the event loop open while we wait for its event.
    const keepAlive = setInterval(() => undefined, 60_000);
    const [event] = (await stopped.finally(() => clearInterval(keepAlive))) as [DevContainerEvent];
    assert.equal(event.containerId, containerId);
    const state = await api.inspectContainer(containerId);
    assert.equal(state.State.Running, false, "stopped");
    assert.equal(p.containerInfo(), undefined);

    // The thread's next command (its id is still in the thread's state) starts it again.
    const again = await sandbox.execCommand("id -un", { timeoutMs: 30_000 });
    assert.equal(again.stdout, "nobody\n");
    assert.equal(p.containerInfo()?.containerId, containerId, "the same container, not a new one");
  } finally {
    await p.shutdown();
  }
});

test("a container that was already running when we came is not stopped by us", async () => {
  const first = provider(0);
  await first.p.acquire("t1");
  const containerId = first.p.containerInfo()?.containerId;
  assert.ok(containerId);
  // A second provider (another harness process, or VS Code's own attach) finds it running.
  const second = provider(0);
  await second.p.acquire("t2");
  await second.p.shutdown();
  assert.equal((await api.inspectContainer(containerId)).State.Running, true);
  await first.p.shutdown();
  assert.equal((await api.inspectContainer(containerId)).State.Running, false);
});

test("rebuild replaces the folder's container; the thread's next command runs in the new one", async () => {
  const { p } = provider(0);
  try {
    const sandbox = await p.get(await p.acquire("t1"));
    assert.ok(sandbox);
    await sandbox.execCommand("true", { timeoutMs: 30_000 });
    const before = p.containerInfo()?.containerId;
    assert.ok(before);
    await p.rebuild();
    const after = p.containerInfo()?.containerId;
    assert.ok(after && after !== before, "a new container");
    const containers = await api.listContainers([`devcontainer.local_folder=${folder}`]);
    assert.deepEqual(containers.map((c) => c.Id), [after], "the old one is gone");
    const result = await sandbox.execCommand("id -un; ls /mnt/user-data", { timeoutMs: 30_000 });
    assert.equal(result.stdout, "nobody\noutputs\nuploads\nworkspace\n");
  } finally {
    await p.shutdown();
  }
});
