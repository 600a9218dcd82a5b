/**
 * The dev container sandbox against a real engine: one folder, one container, reused by every
 * test in this file (vfs makes container creation slow). Order matters where a test changes the
 * container's state (the stop/kill tests run last).
 */
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { after, before, describe, test } from "node:test";
import { HarnessError } from "../../extension/harness/errors.js";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import {
  DevContainerSandbox,
  DevContainerSandboxProvider,
  type DevContainerEvent,
} from "../../extension/harness/sandbox/devcontainer/provider.js";
import type { Sandbox } from "../../extension/harness/sandbox/provider.js";
import { threadDirs } from "../../extension/harness/threads/threadDirs.js";
import { ensureThreadDirs } from "../../extension/harness/trust/threadFolders.js";
import { createBashTool } from "../../extension/harness/tools/sandbox/bash.js";
import { normaliseArtifactPath } from "../../extension/harness/tools/presentFiles.js";
import { approvedDataDir, copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine, SOCKET_PATH } from "./helpers/engine.js";
import { waitForFile } from "./helpers/waitForFile.js";

let api: EngineApi;
let folder: string;
let provider: DevContainerSandboxProvider;
const events: DevContainerEvent[] = [];

async function sandboxFor(threadId: string): Promise<Sandbox> {
  const id = await provider.acquire(threadId);
  const sandbox = await provider.get(id);
  assert.ok(sandbox, "acquired sandbox is known");
  return sandbox;
}

async function run(sandbox: Sandbox, command: string, timeoutMs = 60_000) {
  return sandbox.execCommand(command, { timeoutMs });
}

before(async () => {
  api = await ensureDockerEngine();
  folder = await copyFixture("basic");
  provider = new DevContainerSandboxProvider({
    workspaceFolder: folder,
    dataDir: approvedDataDir(folder),
    dockerPath: DOCKER_PATH,
    socketPath: SOCKET_PATH,
    idleTimeoutMs: 0,
    onEvent: (e) => events.push(e),
  });
});

after(async () => {
  await provider?.shutdown();
  if (api && folder) await disposeFixture(api, folder);
  api?.close();
});

describe("dev container sandbox", () => {
  test("bash runs inside the container, as the model wrote it, in /mnt/user-data/workspace", async () => {
    const sandbox = await sandboxFor("thread-a");
    assert.equal(sandbox.pathMode, "virtual");
    const result = await run(
      sandbox,
      'test -f /.dockerenv && echo in-container; hostname; pwd; ls /mnt/user-data; cat README.md; echo "$FIXTURE_REMOTE_ENV"; cat /tmp/deerflow-post-create',
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const [marker, containerHost, cwd, ...rest] = result.stdout.trim().split("\n");
    assert.equal(marker, "in-container");
    assert.notEqual(containerHost, hostname());
    assert.equal(cwd, "/mnt/user-data/workspace");
    assert.deepEqual(rest.slice(0, 3), ["outputs", "uploads", "workspace"]);
    assert.equal(rest[3], "A sample project for the dev container sandbox tests.");
    assert.equal(rest[4], "remote-from-containerEnv", "remoteEnv resolved against containerEnv");
    assert.equal(rest[5], "created", "postCreateCommand ran");
    assert.deepEqual(
      events.map((e) => e.status).filter((s, i, all) => s !== all[i - 1]),
      ["starting", "ready"],
    );
  });

  test("a file written to /mnt/user-data/outputs is in the thread's outputs dir on the host at once", async () => {
    const sandbox = await sandboxFor("thread-a");
    const result = await run(sandbox, "echo 'report body' > /mnt/user-data/outputs/report.md && echo written");
    assert.equal(result.stdout, "written\n");
    const onHost = `${threadDirs(folder, "thread-a").outputs}/report.md`;
    assert.equal(readFileSync(onHost, "utf8"), "report body\n");
  });

  test("exit codes and stderr come back separately", async () => {
    const sandbox = await sandboxFor("thread-a");
    const result = await run(sandbox, "echo out; echo err >&2; exit 3");
    assert.deepEqual(
      { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode, timedOut: result.timedOut },
      { stdout: "out\n", stderr: "err\n", exitCode: 3, timedOut: false },
    );
  });

  test("a command that outlives its timeout is killed inside the container, children included", async () => {
    const sandbox = await sandboxFor("thread-a");
    const result = await run(sandbox, "echo begun; bash -c 'sleep 987' & sleep 986; echo never", 1_500);
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.stdout, "begun\n");
    // [9] keeps this probe's own command line from matching itself.
    const probe = await run(
      sandbox,
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'sleep 98[67]' || true",
    );
    assert.equal(probe.stdout.trim(), "0", "no sleep of the timed-out command survives");
  });

  test("an abort kills the command inside the container and rejects with the reason", async () => {
    const sandbox = await sandboxFor("thread-a");
    const controller = new AbortController();
    const running = sandbox.execCommand("echo started > /mnt/user-data/outputs/abort-marker; sleep 985", {
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    // The marker arrives through the bind mount: the host sees the container's write as an event.
    await waitForFile(threadDirs(folder, "thread-a").outputs, "abort-marker");
    controller.abort(new Error("user cancelled"));
    await assert.rejects(running, /user cancelled/);
    const probe = await run(
      sandbox,
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'sleep 98[5]' || true",
    );
    assert.equal(probe.stdout.trim(), "0");
  });

  test("output streams while the command runs", async () => {
    const sandbox = await sandboxFor("thread-a");
    assert.ok(sandbox instanceof DevContainerSandbox);
    const fifo = `${threadDirs(folder, "thread-a").outputs}/go.fifo`;
    const chunks: string[] = [];
    let released: Promise<void> | undefined;
    // The command blocks on a FIFO that the test opens only once the first chunk has arrived,
    // so the chunk cannot have come from a buffered end-of-command result.
    const result = await sandbox.execCommand(
      "rm -f /mnt/user-data/outputs/go.fifo; mkfifo /mnt/user-data/outputs/go.fifo; echo first; read x < /mnt/user-data/outputs/go.fifo; echo \"then $x\"",
      {
        timeoutMs: 60_000,
        onOutput: (stream, chunk) => {
          chunks.push(`${stream}:${chunk.toString()}`);
          if (chunk.toString().includes("first")) released ??= writeFile(fifo, "go\n");
        },
      },
    );
    await released;
    assert.equal(result.stdout, "first\nthen go\n");
    assert.deepEqual(chunks, ["stdout:first\n", "stdout:then go\n"]);
  });

  test("two threads of one folder share one container, each with its own uploads and outputs", async () => {
    const a = await sandboxFor("thread-a");
    const b = await sandboxFor("thread-b");
    assert.notEqual(a.id, b.id);
    const [ra, rb] = await Promise.all([
      run(a, "cat /proc/sys/kernel/hostname; echo from-a > /mnt/user-data/outputs/who.txt"),
      run(b, "cat /proc/sys/kernel/hostname; echo from-b > /mnt/user-data/outputs/who.txt"),
    ]);
    assert.equal(ra.stdout, rb.stdout, "same container");
    assert.equal(readFileSync(`${threadDirs(folder, "thread-a").outputs}/who.txt`, "utf8"), "from-a\n");
    assert.equal(readFileSync(`${threadDirs(folder, "thread-b").outputs}/who.txt`, "utf8"), "from-b\n");
    const ids = new Set((await api.listContainers([`devcontainer.local_folder=${folder}`])).map((c) => c.Id));
    assert.equal(ids.size, 1);
  });

  test("the bash tool runs in the container without host consent; present_files accepts its output", async () => {
    const dirs = ensureThreadDirs(folder, "thread-tool");
    const bash = createBashTool({ dirs, provider, allowHostCommands: false, bashTimeoutMs: 60_000 });
    const text = await bash.invoke({
      description: "write a report",
      command: "test -f /.dockerenv && echo in-container; printf '# Report\\n' > /mnt/user-data/outputs/report.md; ls /mnt/user-data/outputs; exit 4",
    });
    assert.equal(text, "in-container\nreport.md\n\nExit Code: 4");
    assert.equal(readFileSync(`${dirs.outputs}/report.md`, "utf8"), "# Report\n");
    assert.deepEqual(normaliseArtifactPath("/mnt/user-data/outputs/report.md", dirs), {
      ok: true,
      path: "/mnt/user-data/outputs/report.md",
    });
    const timedOut = await createBashTool({ dirs, provider, allowHostCommands: false, bashTimeoutMs: 1_000 }).invoke({
      description: "too slow",
      command: "sleep 984",
    });
    assert.ok(typeof timedOut === "string", "no Command: the sandbox was acquired already");
    assert.match(timedOut, /^Command timed out after 1 second and was terminated\./);
  });

  test("a container stopped behind the provider's back is brought up again on the next call", async () => {
    const sandbox = await sandboxFor("thread-a");
    const before = provider.containerInfo();
    assert.ok(before);
    await api.stopContainer(before.containerId, 0);
    assert.equal((await api.inspectContainer(before.containerId)).State.Running, false);
    const result = await run(sandbox, "echo back > /mnt/user-data/outputs/after-stop.txt; pwd");
    assert.equal(result.stdout, "/mnt/user-data/workspace\n");
    assert.equal(readFileSync(`${threadDirs(folder, "thread-a").outputs}/after-stop.txt`, "utf8"), "back\n");
    assert.equal((await api.inspectContainer(before.containerId)).State.Running, true);
  });

  test("a container that dies mid-command is a readable error, and the thread stays usable", async () => {
    const sandbox = await sandboxFor("thread-a");
    // PID 1 is the CLI's keep-alive shell, which exits on SIGTERM: the container stops under us.
    await assert.rejects(run(sandbox, "kill 1; sleep 30"), (err: unknown) => {
      assert.ok(err instanceof HarnessError);
      assert.equal(err.code, "sandbox_container_lost");
      assert.match(err.message, /stopped while the command was running/);
      return true;
    });
    const result = await run(sandbox, "echo alive");
    assert.equal(result.stdout, "alive\n");
  });
});

describe("dev container sandbox, container removed", () => {
  test("a container removed behind the provider's back is created again on the next call", async () => {
    const sandbox = await sandboxFor("thread-a");
    const before = provider.containerInfo();
    assert.ok(before);
    await api.removeContainer(before.containerId);
    const result = await run(sandbox, "echo recreated > /mnt/user-data/outputs/recreated.txt; ls /mnt/user-data");
    assert.equal(result.stdout, "outputs\nuploads\nworkspace\n");
    assert.equal(readFileSync(`${threadDirs(folder, "thread-a").outputs}/recreated.txt`, "utf8"), "recreated\n");
    const now = provider.containerInfo();
    assert.ok(now && now.containerId !== before.containerId, "a new container");
  });
});
