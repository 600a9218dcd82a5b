// Issue 35: shadow checkpoints with the real git binary in a real git workspace. Creating,
// modifying and deleting files (as bash does) is seen between two checkpoints, ignored files,
// .deerflow/ and files over the limit are not, a restore puts every byte back, and nothing under
// the user's .git is created, changed or removed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ShadowRepo } from "../../../extension/harness/changes/shadow.js";

/** Every path, size and byte hash under `dir` (a tree digest to compare before/after). */
function treeDigest(dir: string): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      h.update(`${relative(dir, p)}\0${st.isDirectory() ? "d" : st.size}\0${st.mtimeMs}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest("hex");
}

function gitWorkspace(): string {
  const ws = mkdtempSync(join(tmpdir(), "shadow-ws-"));
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@x", ...args], { cwd: ws });
  git("init", "-q");
  writeFileSync(join(ws, ".gitignore"), "build/\n*.log\n");
  writeFileSync(join(ws, "keep.txt"), "keep\n");
  writeFileSync(join(ws, "edit.txt"), "before\n");
  writeFileSync(join(ws, "gone.txt"), "will be deleted\n");
  git("add", "-A");
  git("commit", "-qm", "init");
  git("stash", "list");
  return ws;
}

test("a checkpoint pair lists exactly what changed; restore puts every byte back; the user's .git is untouched", async () => {
  const ws = gitWorkspace();
  const data = mkdtempSync(join(tmpdir(), "shadow-data-"));
  const userGit = treeDigest(join(ws, ".git"));
  const repo = await ShadowRepo.open(data, ws, { maxFileBytes: 1024 * 1024 });
  const first = await repo.checkpoint("before run");
  assert.equal(first.changed, true);

  // What a bash command does: create, modify, delete; plus ignored output and the thread folders.
  writeFileSync(join(ws, "new.txt"), "created\n");
  writeFileSync(join(ws, "edit.txt"), "after\n");
  rmSync(join(ws, "gone.txt"));
  mkdirSync(join(ws, "build"));
  writeFileSync(join(ws, "build", "out.js"), "ignored");
  writeFileSync(join(ws, "debug.log"), "ignored");
  mkdirSync(join(ws, ".deerflow", "threads", "t"), { recursive: true });
  writeFileSync(join(ws, ".deerflow", "threads", "t", "x"), "thread data");
  writeFileSync(join(ws, "huge.bin"), Buffer.alloc(2 * 1024 * 1024, 1));
  const second = await repo.checkpoint("after turn 1");
  assert.equal(second.changed, true);
  assert.deepEqual(second.skipped, ["huge.bin"], "the file over the limit is left out and said");

  const changes = await repo.diff(first.commit, second.commit);
  assert.deepEqual(changes.sort((a, b) => a.path.localeCompare(b.path)), [
    { path: "edit.txt", status: "modified" },
    { path: "gone.txt", status: "deleted" },
    { path: "new.txt", status: "added" },
  ]);
  const again = await repo.checkpoint("nothing changed");
  assert.equal(again.changed, false);
  assert.equal(again.commit, second.commit);

  await repo.restore(first.commit, changes.map((c) => c.path));
  assert.equal(readFileSync(join(ws, "edit.txt"), "utf8"), "before\n");
  assert.equal(readFileSync(join(ws, "gone.txt"), "utf8"), "will be deleted\n");
  assert.equal(existsSync(join(ws, "new.txt")), false, "a created file is removed");
  assert.equal(readFileSync(join(ws, "keep.txt"), "utf8"), "keep\n");
  assert.ok(existsSync(join(ws, "build", "out.js")), "ignored files are left alone");

  assert.equal(treeDigest(join(ws, ".git")), userGit, "nothing under the user's .git was created, changed or removed");
  assert.equal(execFileSync("git", ["status", "--porcelain"], { cwd: ws, encoding: "utf8" }).split("\n").filter((l) => l && !l.includes("huge.bin") && !l.includes(".deerflow")).join("\n"), "");
});

test("a workspace's .gitattributes filter never runs (the workspace is untrusted)", async () => {
  const ws = gitWorkspace();
  const data = mkdtempSync(join(tmpdir(), "shadow-data-"));
  const marker = join(data, "filter-ran");
  writeFileSync(join(ws, ".gitattributes"), "* filter=evil\n");
  // A user's own repo config could define the driver; the shadow never reads it.
  execFileSync("git", ["config", "filter.evil.clean", `sh -c 'touch ${marker}; cat'`], { cwd: ws });
  const repo = await ShadowRepo.open(data, ws);
  await repo.checkpoint("with attributes");
  assert.equal(existsSync(marker), false);
});
