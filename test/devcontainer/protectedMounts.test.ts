/**
 * The container's writes cannot reach what the host executes (issue 21, item 1), through the real
 * CLI, a real engine and real git on the host side of the bind mount, with a scripted model:
 * - bash in the container tries every route into what host git and VS Code execute (core.fsmonitor,
 *   hooksPath, a post-checkout hook, commondir, renames and hard links into .git, a nested repo's
 *   config, a folderOpen task in a .vscode that did not exist yet, .husky, .devcontainer, .idea, a
 *   *.code-workspace): each fails, an ordinary file lands, and host git (status, checkout, commit)
 *   runs nothing. The same script run on the host proves each route is live.
 * - what no mount can stop (a new nested repository, a new .envrc) ends the run before the model's
 *   next step, says which paths and why; the model reads the same notice when the user continues.
 * - an approval recorded before the mounts existed still brings the container up; a container made
 *   without the mounts is refused while it runs and recreated with them once stopped.
 */
import { strict as assert } from "node:assert";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { EngineApi } from "../../extension/harness/sandbox/devcontainer/engineApi.js";
import { defaultCliPath } from "../../extension/harness/sandbox/devcontainer/devcontainerCli.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli } from "../integration/helpers/cli.js";
import { copyFixture, disposeFixture, DOCKER_PATH, ensureDockerEngine } from "./helpers/engine.js";

let api: EngineApi;
let server: ModelServer;
const folders: string[] = [];
/** Debian's docker client first: `devcontainer up --docker-path docker` resolves it on PATH. */
const ENV = { PATH: `/usr/bin:${process.env.PATH ?? ""}` };
const W = "/mnt/user-data/workspace";

before(async () => {
  api = await ensureDockerEngine();
  server = await startModelServer();
});

after(async () => {
  await server?.close();
  // Every folder is disposed even when one removal fails (a slow engine); the first failure is reported.
  const failures: unknown[] = [];
  for (const folder of folders) await disposeFixture(api, folder).catch((err: unknown) => failures.push(err));
  api?.close();
  if (failures.length > 0) throw failures[0];
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The basic fixture as a git repository with a nested one, an .idea folder and a workspace file; no .vscode, no .husky. */
async function repoFixture(): Promise<{ folder: string; dataDir: string }> {
  const folder = await copyFixture("basic");
  folders.push(folder);
  mkdirSync(join(folder, ".idea"));
  writeFileSync(join(folder, ".idea", "workspace.xml"), "<project/>\n");
  writeFileSync(join(folder, "project.code-workspace"), '{ "folders": [{ "path": "." }] }\n');
  git(folder, "init", "-q");
  mkdirSync(join(folder, "sub"));
  writeFileSync(join(folder, "sub", "lib.txt"), "lib\n");
  git(join(folder, "sub"), "init", "-q");
  git(join(folder, "sub"), "add", "-A");
  git(join(folder, "sub"), "commit", "-q", "-m", "sub");
  git(folder, "add", "README.md", ".devcontainer", ".idea", "project.code-workspace");
  git(folder, "commit", "-q", "-m", "init");
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-dc-protected-data-"));
  const approved = await runCli(["devcontainer", "approve", "--workspace", folder, "--data-dir", dataDir]);
  assert.equal(approved.code, 0, approved.stderr);
  return { folder, dataDir };
}

function runArgs(folder: string, dataDir: string, thread: string, prompt = "go"): string[] {
  return ["run", "--workspace", folder, "--data-dir", dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", prompt, "--sandbox", "devcontainer", "--thread", thread];
}

/** The tool results the model was sent in request `index`, by tool call id. */
function toolResults(index: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of (server.requests[index]?.body?.messages ?? []) as any[]) if (m.role === "tool") out.set(String(m.tool_call_id), textOf(m));
  return out;
}

/**
 * Every route a shell in the container has into what the host executes. `$1` is the workspace,
 * `$2` a folder on the HOST where a payload that ran would leave its marker, `$3` (optional) the
 * one route to try.
 */
const ATTACK = String.raw`#!/bin/sh
W=$1; M=$2; ONLY=$3
cd "$W" || exit 9
try() {
  name=$1; shift
  if [ -n "$ONLY" ] && [ "$ONLY" != "$name" ]; then return; fi
  if "$@" 2>/dev/null; then echo "WROTE $name"; else echo "DENIED $name"; fi
}
fsmonitor() { printf '[core]\n\tfsmonitor = "touch %s/fsmonitor; false"\n' "$M" >> .git/config; }
hookspath() { printf '[core]\n\thooksPath = %s/evil-hooks\n' "$W" >> .git/config; }
hook() { printf '#!/bin/sh\ntouch %s/post-checkout\n' "$M" > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout; }
commondir() { mkdir -p evil-git && cp -r .git/* evil-git/ && printf '[core]\n\tfsmonitor = "touch %s/commondir; false"\n' "$M" >> evil-git/config && echo ../evil-git > .git/commondir; }
rename_into() { printf '#!/bin/sh\ntouch %s/renamed\n' "$M" > evil-hook && chmod +x evil-hook && mv evil-hook .git/hooks/pre-commit; }
link_into() { printf '#!/bin/sh\ntouch %s/linked\n' "$M" > linked-hook && chmod +x linked-hook && ln linked-hook .git/hooks/post-commit; }
link_out() { ln .git/config config-alias; }
nested() { printf '[core]\n\tfsmonitor = "touch %s/nested; false"\n' "$M" >> sub/.git/config; }
task() { mkdir -p .vscode && printf '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch %s/task","runOptions":{"runOn":"folderOpen"}}]}' "$M" > .vscode/tasks.json; }
husky() { mkdir -p .husky && printf '#!/bin/sh\ntouch %s/husky\n' "$M" > .husky/pre-commit; }
try fsmonitor fsmonitor
try hooksPath hookspath
try post-checkout hook
try commondir commondir
try rename-into rename_into
try hardlink-into link_into
try hardlink-out link_out
try move-git mv .git .git-moved
try remove-git rm -rf .git/hooks
try nested-config nested
try folderOpen-task task
try replace-vscode mv .vscode .vscode-moved
try husky husky
try devcontainer sh -c 'echo "{}" > .devcontainer/devcontainer.json'
try idea sh -c 'echo x > .idea/workspace.xml'
try code-workspace sh -c 'echo "{}" > project.code-workspace'
echo ordinary > ordinary.txt && echo "WROTE ordinary"
`;

const ROUTES = ["fsmonitor", "hooksPath", "post-checkout", "commondir", "rename-into", "hardlink-into", "hardlink-out", "move-git", "remove-git", "nested-config", "folderOpen-task", "replace-vscode", "husky", "devcontainer", "idea", "code-workspace"];

/**
 * What the host's git does next: status in both repositories, a checkout back and forth, a commit.
 * `tolerant` for the controls, where a planted config may make a later step fail after its payload ran.
 */
function hostGitAfter(folder: string, tolerant = false): void {
  const steps: string[][] = [["status"], ["-C", "sub", "status"], ["checkout", "-q", "-b", "after-run"], ["checkout", "-q", "-"], ["add", "ordinary.txt"], ["commit", "-q", "-m", "after the run"]];
  for (const step of steps) {
    try {
      git(folder, ...step);
    } catch (err) {
      if (!tolerant) throw err;
    }
  }
}

test("container bash cannot make the host run code: every route into .git, .vscode and the other protected paths fails, an ordinary file lands, host git runs nothing", async () => {
  const { folder, dataDir } = await repoFixture();
  writeFileSync(join(folder, "attack.sh"), ATTACK);
  const markers = mkdtempSync(join(tmpdir(), "deerflow-host-markers-"));
  const gitConfig = readFileSync(join(folder, ".git", "config"), "utf8");
  const subConfig = readFileSync(join(folder, "sub", ".git", "config"), "utf8");
  const hooksBefore = readdirSync(join(folder, ".git", "hooks")).sort();
  // For the controls below: the workspace as it is before the container touches it.
  const pristine = mkdtempSync(join(tmpdir(), "deerflow-control-"));
  cpSync(folder, pristine, { recursive: true });

  server.setScript([
    { toolCalls: [{ id: "attack", name: "bash", args: { description: "attack", command: `sh ${W}/attack.sh ${W} ${markers}` } }] },
    { content: "Done." },
  ]);
  const first = server.requests.length;
  const r = await runCli(runArgs(folder, dataDir, "attack"), ENV);
  assert.equal(r.code, 0, `${r.stderr}\n${JSON.stringify(r.lines.at(-1))}`);
  assert.equal(r.lines.at(-1)!.data.status, "success", "nothing was changed, so nothing stops the run");
  const output = toolResults(first + 1).get("attack")!;
  for (const route of ROUTES) assert.match(output, new RegExp(`^DENIED ${route}$`, "m"), `${route}:\n${output}`);
  assert.match(output, /^WROTE ordinary$/m);

  // On the host: the ordinary file landed; every protected file is byte-for-byte as before.
  assert.equal(readFileSync(join(folder, "ordinary.txt"), "utf8"), "ordinary\n");
  assert.equal(readFileSync(join(folder, ".git", "config"), "utf8"), gitConfig);
  assert.equal(readFileSync(join(folder, "sub", ".git", "config"), "utf8"), subConfig);
  assert.deepEqual(readdirSync(join(folder, ".git", "hooks")).sort(), hooksBefore);
  assert.equal(existsSync(join(folder, ".git", "commondir")), false);
  assert.equal(existsSync(join(folder, "config-alias")), false);
  // .vscode and .husky did not exist: they are empty placeholders, invisible to git.
  assert.deepEqual(readdirSync(join(folder, ".vscode")), []);
  assert.deepEqual(readdirSync(join(folder, ".husky")), []);
  assert.equal(readFileSync(join(folder, ".idea", "workspace.xml"), "utf8"), "<project/>\n");
  const status = git(folder, "status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean).sort();
  assert.deepEqual(status.filter((l) => !/^\?\? (attack\.sh|ordinary\.txt|sub\/|evil-git\/.*|evil-hook|linked-hook)$/.test(l)), [], status.join("\n"));

  // What host git does next runs nothing of the container's.
  hostGitAfter(folder);
  assert.deepEqual(readdirSync(markers), [], "no fsmonitor, hook or task of the container's ran on the host");

  // The routes are live: each route of the same script, run on the host where nothing is
  // read-only, followed by the same git, runs its payload.
  const payloads: Array<[string, string]> = [
    ["fsmonitor", "fsmonitor"],
    ["post-checkout", "post-checkout"],
    ["commondir", "commondir"],
    ["rename-into", "renamed"],
    ["hardlink-into", "linked"],
    ["nested-config", "nested"],
  ];
  for (const [route, payload] of payloads) {
    const control = mkdtempSync(join(tmpdir(), "deerflow-control-"));
    cpSync(pristine, control, { recursive: true });
    const ran = mkdtempSync(join(tmpdir(), "deerflow-control-markers-"));
    assert.match(execFileSync("sh", [join(control, "attack.sh"), control, ran, route], { encoding: "utf8" }), new RegExp(`^WROTE ${route}$`, "m"));
    hostGitAfter(control, true);
    assert.deepEqual(readdirSync(ran), [payload], `${route} runs on the host when nothing stops it`);
  }
  const control = mkdtempSync(join(tmpdir(), "deerflow-control-"));
  cpSync(pristine, control, { recursive: true });
  execFileSync("sh", [join(control, "attack.sh"), control, markers, "folderOpen-task"]);
  assert.match(readFileSync(join(control, ".vscode", "tasks.json"), "utf8"), /"runOn":"folderOpen"/, "on the host the task would land");
});

test("what the mounts cannot stop ends the run before the next step: a new nested repository and a new .envrc are named, and the model reads why when the user continues", async () => {
  const { folder, dataDir } = await repoFixture();
  const markers = mkdtempSync(join(tmpdir(), "deerflow-host-markers-"));
  const plant =
    `cd ${W} && mkdir -p vendor/lib/.git/objects vendor/lib/.git/refs/heads && printf 'ref: refs/heads/main\\n' > vendor/lib/.git/HEAD && ` +
    `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${markers}/planted; false"\\n' > vendor/lib/.git/config && ` +
    `echo 'echo hi' > .envrc && echo ordinary > fine.txt && echo planted`;
  server.setScript([
    { toolCalls: [{ id: "plant", name: "bash", args: { description: "plant", command: plant } }] },
    { content: "The model is never asked this." },
  ]);
  const first = server.requests.length;
  const r = await runCli(runArgs(folder, dataDir, "plant"), ENV);
  assert.equal(r.code, 1, r.stderr);
  const end = r.lines.at(-1)!;
  assert.equal(end.data.status, "error");
  assert.match(end.data.error, /^DeerFlow stopped the run: a command in the dev container created or changed files that make this machine run code: /);
  assert.match(end.data.error, /vendor\/lib\/\.git \(created: git runs hooks and the commands in its config on the host\)/);
  assert.match(end.data.error, /\.envrc \(created: direnv runs it/);
  assert.doesNotMatch(end.data.error, /vendor\/lib\/\.git\/config/, "the new repository is named once, not file by file");
  assert.ok(r.lines.some((l) => l.event === "error" && l.data.code === "sandbox_tampered"), "the journal says sandbox_tampered");
  assert.equal(server.requests.length - first, 1, "the model was not asked for a next step");
  assert.equal(readFileSync(join(folder, "fine.txt"), "utf8"), "ordinary\n", "the ordinary write of the same command landed");
  assert.deepEqual(readdirSync(markers), [], "DeerFlow ran nothing of it");

  // The user looked, and continues: the model reads the same notice with the command's output.
  server.setScript([{ content: "I will not create repositories again." }]);
  const next = server.requests.length;
  const cont = await runCli(runArgs(folder, dataDir, "plant", "I removed them; go on"), ENV);
  assert.equal(cont.code, 0, cont.stderr);
  assert.equal(cont.lines.at(-1)!.data.status, "success");
  const seen = toolResults(next).get("plant")!;
  assert.match(seen, /^planted\n/);
  assert.match(seen, /Error: This command created or changed files that make the user's machine run code, which the dev container's read-only mounts could not stop: .*vendor\/lib\/\.git \(created/);
  // Why it matters: the planted repository is live, and host git in it runs its fsmonitor.
  git(join(folder, "vendor", "lib"), "status");
  assert.deepEqual(readdirSync(markers), ["planted"]);
});

/** `devcontainer up` as VS Code's Dev Containers (or DeerFlow before issue 21) runs it: no read-only mounts. */
async function unprotectedUp(folder: string): Promise<string> {
  const config = join(folder, ".devcontainer", "devcontainer.json");
  const child = spawn(
    process.execPath,
    [defaultCliPath(), "up", "--workspace-folder", folder, "--config", config, "--id-label", `devcontainer.local_folder=${folder}`, "--id-label", `devcontainer.config_file=${config}`, "--docker-path", DOCKER_PATH, "--log-format", "json"],
    { env: { ...process.env, ...ENV }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.resume();
  await once(child, "close");
  const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!) as { outcome: string; containerId: string };
  assert.equal(outcome.outcome, "success", stdout);
  return outcome.containerId;
}

test("an approval given before the read-only mounts existed still holds; a container made without them is refused while it runs and made again with them once stopped", async () => {
  const { folder, dataDir } = await repoFixture();
  const gitConfig = readFileSync(join(folder, ".git", "config"), "utf8");
  const old = await unprotectedUp(folder);
  const write = { description: "write", command: `echo '[alias]' >> ${W}/.git/config; echo ordinary > ${W}/ok.txt; grep -c alias ${W}/.git/config` };

  server.setScript([{ toolCalls: [{ id: "w", name: "bash", args: write }] }, { content: "Done." }]);
  let first = server.requests.length;
  const refused = await runCli(runArgs(folder, dataDir, "old"), ENV);
  assert.equal(refused.code, 0, refused.stderr);
  const answer = toolResults(first + 1).get("w")!;
  assert.match(answer, /^Error: DeerFlow runs no command in the dev container of .*: its container [0-9a-f]{12} is running without DeerFlow's read-only mounts/);
  assert.match(answer, /Stop it \(docker stop [0-9a-f]{12}\) or rebuild it/);
  assert.equal(readFileSync(join(folder, ".git", "config"), "utf8"), gitConfig, "the command never ran");
  assert.equal(existsSync(join(folder, "ok.txt")), false);
  assert.equal((await api.inspectContainer(old)).State.Running, true, "someone else's running container is left alone");

  // Stopped, it is made again with the mounts, under the same approval.
  await api.stopContainer(old, 1);
  server.setScript([{ toolCalls: [{ id: "w", name: "bash", args: write }] }, { content: "Done." }]);
  first = server.requests.length;
  const ok = await runCli(runArgs(folder, dataDir, "new"), ENV);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.lines.at(-1)!.data.status, "success");
  const result = toolResults(first + 1).get("w")!;
  assert.match(result, /\.git\/config: Read-only file system/);
  assert.match(result, /^0$/m, "no alias reached .git/config");
  assert.equal(readFileSync(join(folder, ".git", "config"), "utf8"), gitConfig);
  assert.equal(readFileSync(join(folder, "ok.txt"), "utf8"), "ordinary\n");
  const containers = await api.listContainers([`devcontainer.local_folder=${folder}`]);
  assert.equal(containers.length, 1);
  assert.notEqual(containers[0]!.Id, old, "a new container");
  assert.match(containers[0]!.Labels["deerflow.protection"] ?? "", /^[0-9a-f]{32}$/);
  const mounts = (await api.inspectContainer(containers[0]!.Id)).Mounts ?? [];
  for (const rel of [".git", ".vscode", ".husky", ".devcontainer", ".idea", "project.code-workspace", "sub/.git"]) {
    assert.ok(mounts.some((m) => m.Source === join(folder, rel) && !m.RW), `${rel} is mounted read-only: ${JSON.stringify(mounts)}`);
  }
});
