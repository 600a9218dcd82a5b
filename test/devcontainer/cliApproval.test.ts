/**
 * Dev container configs need the user's approval (issue 10), through the real CLI and a real
 * engine, with a scripted model:
 * - a devcontainer.json the agent wrote, whose initializeCommand would touch a file on the host:
 *   not executed, the run ends with the readable approval error, nothing is brought up;
 * - after `deerflow devcontainer approve` it runs (the approved host command included);
 * - an edit after the approval is refused again (a new fingerprint), and an approval for the old
 *   fingerprint does not cover it;
 * - the container cannot edit the bind-mounted devcontainer.json (it is mounted read-only there);
 *   an edit from outside, after which the container goes away, is refused at the automatic re-up:
 *   the edit never reaches the host.
 *
 * This machine is itself a container, so `auto` would pick local: runs ask for the dev container.
 */
import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { runCli, spawnCli } from "../integration/helpers/cli.js";
import { copyFixture, disposeFixture, ensureDockerEngine } from "./helpers/engine.js";

let api: EngineApi;
let server: ModelServer;
const folders: string[] = [];
/** Debian's docker client first: `devcontainer up --docker-path docker` resolves it on PATH. */
const ENV = { PATH: `/usr/bin:${process.env.PATH ?? ""}` };

before(async () => {
  api = await ensureDockerEngine();
  server = await startModelServer();
});

after(async () => {
  await server?.close();
  for (const folder of folders) await disposeFixture(api, folder);
  api?.close();
});

async function fixture(): Promise<{ folder: string; dataDir: string }> {
  const folder = await copyFixture("basic");
  folders.push(folder);
  return { folder, dataDir: mkdtempSync(join(tmpdir(), "deerflow-dc-approval-data-")) };
}

/** A file on the host, outside the workspace: what an initializeCommand would reach. */
function hostMarker(name: string): string {
  return join(mkdtempSync(join(tmpdir(), "deerflow-host-marker-")), name);
}

function writeConfig(folder: string, initializeCommand: string): void {
  const config = { image: "local/debian-minbase:bookworm", runArgs: ["--network", "none"], initializeCommand };
  writeFileSync(join(folder, ".devcontainer", "devcontainer.json"), JSON.stringify(config, null, 2));
}

function run(folder: string, dataDir: string, thread: string) {
  return runCli(
    ["run", "--workspace", folder, "--data-dir", dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", "go", "--sandbox", "devcontainer", "--thread", thread],
    ENV,
  );
}

async function containersOf(folder: string) {
  return api.listContainers([`devcontainer.local_folder=${folder}`]);
}

test("an agent-written config is not run until approved; after approve it runs; an edit after approval is refused again", async () => {
  const { folder, dataDir } = await fixture();
  const marker = hostMarker("initialized");
  writeConfig(folder, `touch ${marker}`);

  // 1. Not approved: the run ends at once, saying what to approve and how; nothing ran.
  const asked = server.requests.length;
  const refused = await run(folder, dataDir, "t1");
  assert.equal(refused.code, 1, refused.stderr);
  const end = refused.lines.at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.data.status, "error");
  assert.equal(end.data.error_code, "sandbox_config_unapproved");
  assert.match(end.data.error, /is not approved yet, so nothing was started/);
  assert.match(end.data.error, new RegExp(`run on this machine: \`touch ${marker}\``));
  assert.match(end.data.error, new RegExp(`deerflow devcontainer approve --workspace ${folder}`));
  assert.equal(existsSync(marker), false, "initializeCommand did not run on the host");
  assert.deepEqual(await containersOf(folder), [], "nothing was brought up");
  assert.equal(server.requests.length, asked, "the model was never asked");

  // 2. `status` shows it unapproved; `approve` prints what it approves and records it.
  const status = await runCli(["devcontainer", "status", "--workspace", folder, "--data-dir", dataDir]);
  assert.equal(status.code, 1);
  assert.equal(status.lines[0]!.approved, false);
  const approve = await runCli(["devcontainer", "approve", "--workspace", folder, "--data-dir", dataDir]);
  assert.equal(approve.code, 0, approve.stderr);
  const approved = approve.lines[0]!;
  assert.equal(approved.approved, true);
  assert.equal(approved.fingerprint, status.lines[0]!.fingerprint);
  assert.deepEqual(approved.files, [{ path: ".devcontainer/devcontainer.json", role: "config" }]);
  assert.deepEqual(approved.host_commands, [`touch ${marker}`]);
  assert.match(approve.stderr, /runs on THIS MACHINE \(the host\)[^\n]*\n\s+initializeCommand: touch /);

  // 3. Approved: it comes up (its host command is the user's choice now) and bash runs inside.
  server.setScript([{ toolCalls: [{ name: "bash", args: { description: "where", command: "test -f /.dockerenv && echo in-container" } }] }, { content: "Done." }]);
  const first = server.requests.length;
  const ok = await run(folder, dataDir, "t2");
  assert.equal(ok.code, 0, `${ok.stderr}\n${JSON.stringify(ok.lines.at(-1))}`);
  const tool = (server.requests[first + 1]!.body!.messages as any[]).find((m) => m.role === "tool");
  assert.equal(String(tool.content).trim(), "in-container");
  assert.equal(existsSync(marker), true, "the approved initializeCommand ran");

  // 4. Edited after the approval: refused again, the new command never runs.
  const edited = hostMarker("after-edit");
  writeConfig(folder, `touch ${edited}`);
  const again = await run(folder, dataDir, "t3");
  assert.equal(again.code, 1);
  assert.equal(again.lines.at(-1)!.data.error_code, "sandbox_config_unapproved");
  assert.match(again.lines.at(-1)!.data.error, /changed since it was approved/);
  assert.equal(existsSync(edited), false);
  // Approving "what I reviewed" by the old fingerprint does not cover the edit.
  const stale = await runCli(["devcontainer", "approve", "--workspace", folder, "--data-dir", dataDir, "--fingerprint", approved.fingerprint]);
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /changed after it was shown/);
  assert.equal((await run(folder, dataDir, "t4")).lines.at(-1)!.data.error_code, "sandbox_config_unapproved");
  assert.equal(existsSync(edited), false);
});

test("the container cannot edit the bind-mounted devcontainer.json (read-only there); an edit from outside is refused at the automatic re-up after the container is gone", async () => {
  const { folder, dataDir } = await fixture();
  assert.equal((await runCli(["devcontainer", "approve", "--workspace", folder, "--data-dir", dataDir])).code, 0);
  const configPath = join(folder, ".devcontainer", "devcontainer.json");
  const approvedBytes = readFileSync(configPath, "utf8");
  const marker = hostMarker("planted-by-container");
  const planted = JSON.stringify({ image: "local/debian-minbase:bookworm", runArgs: ["--network", "none"], initializeCommand: `touch ${marker}` });
  const gone = server.gate("container-gone");
  server.setScript([
    {
      toolCalls: [
        { name: "bash", args: { description: "plant", command: `printf '%s' '${planted}' > /mnt/user-data/workspace/.devcontainer/devcontainer.json && echo planted` } },
      ],
    },
    // Held until the test has removed the container: the next command must bring it up again.
    { toolCalls: [{ name: "bash", args: { description: "again", command: "echo still-here" } }], gate: { until: gone } },
    { content: "Done." },
  ]);
  const first = server.requests.length;
  const cli = spawnCli(
    ["run", "--workspace", folder, "--data-dir", dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", "go", "--sandbox", "devcontainer", "--thread", "plant"],
    ENV,
  );
  await gone.reached;
  const plantResult = (server.requests[first + 1]!.body!.messages as any[]).filter((m) => m.role === "tool").at(-1);
  assert.match(String(plantResult.content), /devcontainer\.json: Read-only file system/, "the container cannot rewrite its own configuration");
  assert.equal(readFileSync(configPath, "utf8"), approvedBytes);
  // Something outside the container (a host process, another tool) edits it while the run goes on.
  writeFileSync(configPath, planted);
  for (const c of await containersOf(folder)) await api.removeContainer(c.Id);
  gone.open();
  const result = await cli.done;
  assert.equal(result.code, 0, result.stderr);
  const reup = (server.requests[first + 2]!.body!.messages as any[]).filter((m) => m.role === "tool").at(-1);
  assert.match(String(reup.content), /^Error: The dev container configuration of .* changed since it was approved, so nothing was started/);
  assert.equal(existsSync(marker), false, "the planted initializeCommand never ran on the host");
  assert.deepEqual(await containersOf(folder), [], "no container was brought up from the planted config");
});
