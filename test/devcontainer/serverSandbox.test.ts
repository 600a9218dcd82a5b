/**
 * The editor's dev container workflows through the real harness process (`dist/server.js`):
 * `sandbox/info` names a running container a terminal can `docker exec` into, in
 * /mnt/user-data/workspace as the agent's user; `sandbox/rebuild` replaces the container (and
 * runs go on in the new one), refused while a run is active and for a local sandbox.
 *
 * This machine is itself a container, so `auto` would pick local: the settings ask for
 * "devcontainer" explicitly.
 */
import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { startModelServer, type ModelServer, type ScriptedReply } from "../fixtures/modelServer.js";
import { dockerExecCommand } from "../../extension/host/sandboxTerminal.js";
import { sandboxDirs } from "../integration/helpers/cli.js";
import { errorOf, settings, startHarness, type HarnessProcess } from "../integration/helpers/server.js";
import { copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine } from "./helpers/engine.js";

const run$ = promisify(execFile);

let api: EngineApi;
let model: ModelServer;
let folder: string;
let h: HarnessProcess;

/** A bash run on a new thread; resolves with the tool's output as the model saw it. */
async function bashRun(command: string, extra: ScriptedReply[] = []): Promise<{ status: string; toolOutput: string }> {
  model.setScript([{ toolCalls: [{ name: "bash", args: { description: "probe", command } }] }, ...extra, { content: "Done." }]);
  const first = model.requests.length;
  const t = await h.request("threads/create", { workspaceFolder: folder });
  const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: folder, threadId: t.thread_id, afterSeq: 0 });
  const started = await h.request("runs/start", { workspaceFolder: folder, threadId: t.thread_id, prompt: "go" });
  const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
  await h.request("events/unsubscribe", { subscriptionId });
  const tool = (model.requests[first + 1]?.body?.messages as Array<{ role: string; content: string }> | undefined)?.find((m) => m.role === "tool");
  return { status: (end.data as { status: string }).status, toolOutput: String(tool?.content ?? "") };
}

before(async () => {
  api = await ensureDockerEngine();
  model = await startModelServer();
  folder = await copyFixture("basic");
  // The harness runs `devcontainer up --docker-path docker`: on its PATH, the Debian client that
  // matches the test engine (as the other dev container tests use), not the machine's newer one.
  const bin = mkdtempSync(join(tmpdir(), "deerflow-dockerbin-"));
  symlinkSync(DOCKER_PATH, join(bin, "docker"));
  h = startHarness({ PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` });
  const { dataDir } = sandboxDirs();
  await h.request("harness/initialize", { dataDir, settings: settings(model.url, { sandbox: { provider: "devcontainer", allow_host_commands: false } }) });
});

after(async () => {
  await h?.close();
  await model?.close();
  if (api && folder) await disposeFixture(api, folder);
  api?.close();
});

describe("sandbox/info and sandbox/rebuild through the harness", () => {
  let firstContainer = "";

  test("sandbox/info brings the folder's dev container up and names it; docker exec with its args lands in /mnt/user-data/workspace", async () => {
    const t = await h.request("threads/create", { workspaceFolder: folder });
    const info = await h.request("sandbox/info", { workspaceFolder: folder, threadId: t.thread_id });
    assert.equal(info.kind, "devcontainer");
    assert.equal(info.state, "ready");
    assert.match(info.containerId ?? "", /^[0-9a-f]{64}$/);
    assert.ok(info.remoteUser, "a remoteUser");
    assert.ok(info.shell, "a shell");
    assert.equal(info.dockerPath, "docker");
    const inspected = await api.inspectContainer(info.containerId!);
    assert.equal(inspected.State.Running, true);
    // The terminal's own command line (extension/host/sandboxTerminal.ts), without -it (no TTY
    // here), its shell running a command instead of reading a terminal.
    const terminal = dockerExecCommand(info, { interactive: false });
    assert.deepEqual(terminal.shellArgs.slice(0, 5), ["exec", "-u", info.remoteUser, "-w", "/mnt/user-data/workspace"]);
    assert.equal(terminal.shellArgs.at(-2), info.containerId);
    assert.equal(terminal.shellPath, DOCKER_PATH, "the bare docker of the harness becomes the distro's client");
    const { stdout } = await run$(terminal.shellPath, [...terminal.shellArgs, "-c", 'pwd; id -un; echo "$FIXTURE_REMOTE_ENV"']);
    const [cwd, user, remoteEnv] = stdout.trim().split("\n");
    assert.equal(cwd, "/mnt/user-data/workspace");
    assert.equal(user, info.remoteUser === "0" ? "root" : info.remoteUser);
    assert.equal(remoteEnv, "remote-from-containerEnv");
    // The brief's plain variant, for the record: the directory is right even without PWD.
    const plain = await run$(DOCKER_PATH, ["exec", "-u", info.remoteUser, "-w", "/mnt/user-data/workspace", info.containerId!, "sh", "-c", "cd -L . && ls README.md"]);
    assert.equal(plain.stdout.trim(), "README.md");
    // Without a thread: the same container, already up.
    const folderLevel = await h.request("sandbox/info", { workspaceFolder: folder });
    assert.equal(folderLevel.containerId, info.containerId);
    firstContainer = info.containerId!;
    // The agent's commands run in that container too.
    const r = await bashRun("cat /etc/hostname");
    assert.equal(r.status, "success");
    assert.equal(r.toolOutput.trim(), info.containerId!.slice(0, 12));
  });

  test("sandbox/rebuild is refused while a run is active on the folder", async () => {
    const gate = model.gate("rebuild-busy");
    model.setScript([{ content: "Thinking it over.", gate: { until: gate } }]);
    const t = await h.request("threads/create", { workspaceFolder: folder });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: folder, threadId: t.thread_id, afterSeq: 0 });
    const started = await h.request("runs/start", { workspaceFolder: folder, threadId: t.thread_id, prompt: "wait" });
    await gate.reached;
    const refused = await errorOf(h.request("sandbox/rebuild", { workspaceFolder: folder }));
    assert.equal(refused.data?.code, "sandbox_busy");
    assert.match(refused.message, /A run is active on this folder/);
    gate.open();
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
    assert.equal((end.data as { status: string }).status, "success");
    await h.request("events/unsubscribe", { subscriptionId });
  });

  test("sandbox/rebuild replaces the container; sandbox/info names the new one and a run works in it", async () => {
    assert.ok(firstContainer, "the first test brought a container up");
    assert.equal(await h.request("sandbox/rebuild", { workspaceFolder: folder }), null);
    const info = await h.request("sandbox/info", { workspaceFolder: folder });
    assert.match(info.containerId ?? "", /^[0-9a-f]{64}$/);
    assert.notEqual(info.containerId, firstContainer);
    const old = await api.listContainers([`id=${firstContainer}`]);
    assert.equal(old.length, 0, "the old container was removed");
    const r = await bashRun("pwd; cat /etc/hostname");
    assert.equal(r.status, "success");
    assert.deepEqual(r.toolOutput.trim().split("\n"), ["/mnt/user-data/workspace", info.containerId!.slice(0, 12)]);
  });

  test("a folder whose sandbox is local: sandbox/info says local, sandbox/rebuild is refused", async () => {
    const { workspace, dataDir } = sandboxDirs();
    const local = startHarness();
    try {
      await local.request("harness/initialize", { dataDir, settings: settings(model.url, { sandbox: { provider: "auto", allow_host_commands: false } }) });
      assert.deepEqual(await local.request("sandbox/info", { workspaceFolder: workspace }), { kind: "local" });
      const refused = await errorOf(local.request("sandbox/rebuild", { workspaceFolder: workspace }));
      assert.equal(refused.data?.code, "usage");
      assert.match(refused.message, /^This folder has no dev container sandbox/);
      // An untrusted workspace: no dev container either, and the reason says so.
      await local.request("harness/configure", { settings: settings(model.url, { workspace_trusted: false }) });
      assert.match((await errorOf(local.request("sandbox/rebuild", { workspaceFolder: folder }))).message, /not trusted/);
      assert.equal((await errorOf(local.request("sandbox/info", { workspaceFolder: workspace, threadId: "no-such-thread" }))).data?.code, "thread_not_found");
    } finally {
      await local.close();
    }
  });
});
