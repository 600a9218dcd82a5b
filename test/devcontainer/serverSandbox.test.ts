/**
 * The editor's dev container workflows through the real harness process (`dist/server.js`):
 * a run on a folder whose configuration is not approved ends at once with
 * `sandbox_config_unapproved`, and `sandbox/approve` (the panel's Allow) approves exactly what
 * `sandbox/approval` showed and runs it again; `sandbox/info` names a running container a
 * terminal can `docker exec` into, in /mnt/user-data/workspace as the agent's user, with no value
 * on its command line; `sandbox/rebuild` replaces the container (and runs go on in the new one),
 * refused while a run is active and for a local sandbox.
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

describe("sandbox/approve, sandbox/info and sandbox/rebuild through the harness", () => {
  let firstContainer = "";

  test("an unapproved configuration ends the run at once; Allow approves exactly what was shown and runs it again", async () => {
    model.setScript([{ toolCalls: [{ name: "bash", args: { description: "where", command: "test -f /.dockerenv && echo in-container" } }] }, { content: "Done." }]);
    const asked = model.requests.length;
    const t = await h.request("threads/create", { workspaceFolder: folder });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: folder, threadId: t.thread_id, afterSeq: 0 });
    const refused = await h.request("runs/start", { workspaceFolder: folder, threadId: t.thread_id, prompt: "where are you?" });
    const ended = await h.waitNote("runs/ended", (p) => p.runId === refused.run_id);
    assert.equal(ended.status, "error");
    assert.equal(ended.errorCode, "sandbox_config_unapproved");
    assert.match(ended.error ?? "", /is not approved yet, so nothing was started.*\.devcontainer\/devcontainer\.json.*deerflow devcontainer approve --workspace/);
    const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === refused.run_id);
    assert.equal((end.data as { error_code?: string }).error_code, "sandbox_config_unapproved");
    assert.equal(model.requests.length, asked, "the model was never asked");
    assert.deepEqual(await api.listContainers([`devcontainer.local_folder=${folder}`]), [], "nothing was brought up");

    const approval = await h.request("sandbox/approval", { workspaceFolder: folder });
    assert.equal(approval.approved, false);
    assert.equal(approval.configPath, join(folder, ".devcontainer", "devcontainer.json"));
    assert.deepEqual(approval.files, [".devcontainer/devcontainer.json"]);
    assert.match(approval.fingerprint, /^[0-9a-f]{64}$/);
    assert.deepEqual(approval.hostCommands, []);
    const stale = await errorOf(h.request("sandbox/approve", { workspaceFolder: folder, fingerprint: "0".repeat(64) }));
    assert.equal(stale.data?.code, "sandbox_config_unapproved");
    assert.match(stale.message, /changed after it was shown/);

    const allowed = await h.request("sandbox/approve", { workspaceFolder: folder, fingerprint: approval.fingerprint, retryRunId: refused.run_id });
    assert.equal(allowed.approval.approved, true);
    assert.equal(allowed.retried?.thread_id, t.thread_id);
    const retried = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === allowed.retried?.run_id);
    assert.equal((retried.data as { status: string }).status, "success");
    const tool = (model.requests[asked + 1]?.body?.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool");
    assert.equal(tool?.content.trim(), "in-container");
    assert.equal((await h.request("sandbox/approval", { workspaceFolder: folder })).approved, true);
    await h.request("events/unsubscribe", { subscriptionId });
  });

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
    // No value on the docker client's command line (ps shows it to every process): names only,
    // the values travel in the client's environment.
    assert.ok(!terminal.shellArgs.some((a) => a.includes("remote-from-containerEnv")), terminal.shellArgs.join(" "));
    assert.ok(terminal.shellArgs.includes("FIXTURE_REMOTE_ENV"));
    // The host's own secrets stay out: only the names the terminal passes reach the container.
    const env = { PATH: process.env.PATH, SECRET_TOKEN: "xyz-host-secret", ...terminal.env };
    const { stdout } = await run$(terminal.shellPath, [...terminal.shellArgs, "-c", 'pwd; id -un; echo "$FIXTURE_REMOTE_ENV"; env'], { env });
    assert.ok(!stdout.includes("xyz-host-secret"), "the host's SECRET_TOKEN is not visible in the sandbox terminal");
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
