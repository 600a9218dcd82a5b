// The dev container's read-only mounts (protectedMounts.ts) and the watch of what they cannot
// cover (protectedWatch.ts), on real trees: what is mounted, what becomes a placeholder, what is
// watched; the engine's description of a container checked against the plan; what the watch sees.
// The real engine tier (test/devcontainer/protectedMounts.test.ts) holds the same through the CLI.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import type { ContainerInspect, ContainerSummary } from "../../../extension/harness/sandbox/devcontainer/engineApi.js";
import {
  checkProtection,
  mountArgs,
  planProtection,
  reuseVerdict,
  workspaceTarget,
  type ProtectionPlan,
} from "../../../extension/harness/sandbox/devcontainer/protectedMounts.js";
import { ProtectedWatch, describeChanges, protectedChanges } from "../../../extension/harness/sandbox/devcontainer/protectedWatch.js";

function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-protected-")));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    if (rel.endsWith("/")) mkdirSync(join(root, rel), { recursive: true });
    else writeFileSync(join(root, rel), text);
  }
  return root;
}

const unprotected = (pattern: RegExp) => (err: unknown) => err instanceof HarnessError && err.code === "sandbox_unprotected" && pattern.test(err.message);
const IMAGE = { image: "x" };

test("every protected entry is mounted where it is, absent root folders become placeholders, links and gitdirs are followed only inside", async () => {
  const ws = tree({
    ".git/config": "[core]\n",
    ".git/modules/m/config": "[core]\n",
    "sub/.git/HEAD": "ref: refs/heads/main\n",
    "wt/.git": "gitdir: ../gitdirs/wt\n",
    "gitdirs/wt/commondir": "../main\n",
    "gitdirs/main/config": "[core]\n",
    "conf/vscode/settings.json": "{}",
    ".devcontainer/devcontainer.json": "{}",
    "node_modules/pkg/.idea/workspace.xml": "<x/>",
    "team.code-workspace": "{}",
    ".envrc": "echo hi\n",
    "src/app.ts": "x",
  });
  symlinkSync("conf/vscode", join(ws, ".vscode"));
  symlinkSync("/etc", join(ws, "sub", ".husky"));
  const plan = await planProtection(ws, IMAGE);
  const mounts = new Map(plan.mounts.map((m) => [m.rel, m]));
  assert.deepEqual(
    [...mounts.keys()].sort(),
    [".devcontainer", ".envrc", ".git", ".husky", "conf/vscode", "gitdirs/main", "gitdirs/wt", "node_modules/pkg/.idea", "sub/.git", "team.code-workspace", "wt/.git"].sort(),
  );
  assert.equal(mounts.get(".husky")?.placeholder, true, "absent at the root: made empty");
  assert.equal(mounts.get(".git")?.placeholder, false);
  assert.equal(mounts.has(".git/modules/m"), false, "inside .git already");
  assert.deepEqual(plan.unmounted, [".vscode", "sub/.husky"], "the links' names are watched; /etc is never mounted in");
  assert.equal(plan.target, `/workspaces/${ws.split("/").at(-1)}`);
  assert.ok(mountArgs(plan).includes(`type=bind,source=${ws}/.git,target=${plan.target}/.git,readonly`));
  // The same tree plans the same mounts: the label is stable across bring-ups.
  assert.equal((await planProtection(ws, IMAGE)).hash, plan.hash);
});

test("a path with a comma is quoted the way docker's --mount reads it", async () => {
  const ws = tree({ "a,b/.git/config": "[core]\n", ".git/": "", ".vscode/": "", ".devcontainer/": "", ".husky/": "" });
  const plan = await planProtection(ws, IMAGE);
  assert.ok(mountArgs(plan).includes(`type=bind,"source=${ws}/a,b/.git","target=${plan.target}/a,b/.git",readonly`), mountArgs(plan).join("\n"));
});

test("where the workspace is in the container: the CLI's default, a workspaceMount of exactly this folder, else refused", () => {
  const ws = "/home/u/proj";
  assert.equal(workspaceTarget(IMAGE, ws), "/workspaces/proj");
  assert.equal(workspaceTarget({ workspaceMount: "source=${localWorkspaceFolder},target=/code,type=bind" }, ws), "/code");
  assert.equal(workspaceTarget({ workspaceMount: "" }, ws), undefined);
  assert.throws(() => workspaceTarget({ workspaceMount: "source=${localWorkspaceFolder}/..,target=/code,type=bind" }, ws), unprotected(/does not bind exactly this folder/));
  assert.throws(() => workspaceTarget({ workspaceMount: "source=${localEnv:HOME},target=/code,type=bind" }, ws), unprotected(/variable DeerFlow does not resolve/));
  assert.throws(() => workspaceTarget({ dockerComposeFile: "compose.yml" }, ws), unprotected(/Docker Compose/));
});

function plan(folder: string, mounts: string[]): ProtectionPlan {
  return { folder, target: "/workspaces/p", mounts: mounts.map((rel) => ({ rel, source: `${folder}/${rel}`, placeholder: false })), unmounted: [], hash: "h" };
}

function inspect(mounts: Array<[string, string, boolean]>, label: string | null = "h"): ContainerInspect {
  return {
    Id: "c",
    State: { Running: true, Status: "running", ExitCode: 0 },
    Config: { Env: [], Labels: label === null ? {} : { "deerflow.protection": label } },
    Mounts: mounts.map(([Source, Destination, RW]) => ({ Type: "bind", Source, Destination, RW })),
  };
}

test("the engine's description of the container is checked against the plan", () => {
  const p = plan("/h/p", [".git", "sub/.git"]);
  const good = inspect([["/h/p", "/workspaces/p", true], ["/h/p/.git", "/workspaces/p/.git", false], ["/h/p/sub/.git", "/workspaces/p/sub/.git", false]]);
  assert.deepEqual(checkProtection(good, p, true).problems, []);
  assert.match(checkProtection(inspect([["/h/p", "/workspaces/p", true]], null), p, false).problems.join(), /not created by DeerFlow/);
  const missing = inspect([["/h/p", "/workspaces/p", true], ["/h/p/.git", "/workspaces/p/.git", false]]);
  assert.match(checkProtection(missing, p, true).problems.join(), /sub\/\.git is not mounted read-only/);
  // One of ours from an older plan: what it lacks is watched, not refused.
  const older = checkProtection(missing, p, false);
  assert.deepEqual(older.problems, []);
  assert.deepEqual(older.mounted.map((m) => m.rel), [".git"]);
  const twice = inspect([["/h/p", "/workspaces/p", true], ["/h/p", "/other", true], ["/h/p/.git", "/workspaces/p/.git", false], ["/h/p/sub/.git", "/workspaces/p/sub/.git", false]]);
  assert.match(checkProtection(twice, p, true).problems.join(), /mounts \/h\/p writable at \/other/);
  const gitdir = inspect([["/h/p", "/workspaces/p", true], ["/h/p/.git", "/workspaces/p/.git", false], ["/h/p/sub/.git", "/workspaces/p/sub/.git", false], ["/h/p/sub", "/sub", true]]);
  assert.match(checkProtection(gitdir, p, true).problems.join(), /\/h\/p\/sub, which holds protected paths, writable at \/sub/);
});

test("the container `up` would reuse: refused while it runs without our label, recreated when stopped and different", () => {
  const p = plan("/h/p", [".git"]);
  const c = (State: string, label?: string): ContainerSummary => ({ Id: "0123456789abcdef", State, Labels: label ? { "deerflow.protection": label } : {} });
  assert.throws(() => reuseVerdict([c("running")], p, false), unprotected(/its container 0123456789ab is running without DeerFlow's read-only mounts.*docker stop 0123456789ab/));
  assert.deepEqual(reuseVerdict([c("running")], p, true), { recreate: true, fresh: true }, "a rebuild replaces it anyway");
  assert.deepEqual(reuseVerdict([c("exited")], p, false), { recreate: true, fresh: true });
  assert.deepEqual(reuseVerdict([c("exited", "h")], p, false), { recreate: false, fresh: true });
  assert.deepEqual(reuseVerdict([c("running", "older")], p, false), { recreate: false, fresh: false });
  assert.deepEqual(reuseVerdict([], p, false), { recreate: false, fresh: true });
});

test("the watch: what a command created or changed among the protected paths no mount covers", async () => {
  const ws = tree({ ".git/config": "[core]\n", "src/a.ts": "x", "tools/.envrc": "old\n" });
  const watch = await ProtectedWatch.create(ws, [{ rel: ".git" }]);
  const before = await watch.snapshot();
  assert.deepEqual([...before.keys()], ["tools/.envrc"], "the mounted .git is skipped, the ordinary files are not listed");
  mkdirSync(join(ws, "vendor", "lib", ".git", "hooks"), { recursive: true });
  writeFileSync(join(ws, "vendor", "lib", ".git", "config"), "[core]\n\tfsmonitor = x\n");
  writeFileSync(join(ws, "tools", ".envrc"), "new and longer\n");
  writeFileSync(join(ws, "src", "b.ts"), "y");
  writeFileSync(join(ws, ".git", "config"), "[core]\n\tchanged from the host\n");
  const changes = protectedChanges(before, await watch.snapshot());
  assert.deepEqual(
    changes.map((c) => [c.rel, c.change]),
    [["tools/.envrc", "changed"], ["vendor/lib/.git", "created"], ["vendor/lib/.git/config", "created"], ["vendor/lib/.git/hooks", "created"]],
  );
  assert.equal(describeChanges(changes), "tools/.envrc (changed: direnv runs it in the user's shell on the host when they enter the folder); vendor/lib/.git (created: git runs hooks and the commands in its config on the host)");
  // A mounted folder the host replaced (a branch switch recreated it) is no longer covered by the
  // container's mount: it is watched from then on.
  const mid = await watch.snapshot();
  renameSync(join(ws, ".git"), join(ws, ".git-old"));
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  const replaced = protectedChanges(mid, await watch.snapshot());
  assert.deepEqual(replaced.map((c) => [c.rel, c.change]), [[".git", "created"], [".git/hooks", "created"]]);
  rmSync(ws, { recursive: true, force: true });
});

test("the watch's folder cache never hides a new entry: a folder changed in the moment of its listing is read again", async () => {
  const ws = tree({ "a/b/c/file.txt": "x" });
  const watch = await ProtectedWatch.create(ws, []);
  // Listed and changed within the same timestamp tick, then listed again: the change is seen.
  for (let i = 0; i < 20; i++) {
    const before = await watch.snapshot();
    mkdirSync(join(ws, "a", "b", "c", `r${i}`, ".git"), { recursive: true });
    const changes = protectedChanges(before, await watch.snapshot());
    assert.deepEqual(changes.map((c) => c.rel), [`a/b/c/r${i}/.git`], `round ${i}`);
  }
  rmSync(ws, { recursive: true, force: true });
});
