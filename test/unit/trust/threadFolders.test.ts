// Thread folders that cannot be redirected: every folder from .deerflow down is checked with lstat
// at every use (ensureThreadDirs, the file tools, the upload copy, the output spill, the delivery
// scan); a symlink or a file where a folder should be is refused with a clear error and never
// followed. Real folders and real symlinks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { copyUploads } from "../../../extension/harness/threads/uploads.js";
import { HostFiles } from "../../../extension/harness/sandbox/files.js";
import { snapshotOutputs } from "../../../extension/harness/runs/delivery.js";

function scratch(): { root: string; ws: string; outside: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-trust-")));
  const ws = join(root, "workspace");
  const outside = join(root, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  return { root, ws, outside };
}

function redirected(fn: () => unknown, folder: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HarnessError, String(err));
    assert.equal(err.code, "thread_folder_redirected");
    assert.ok(err.message.includes(`The thread folder ${folder} `), err.message);
    assert.match(err.message, /never follows it/);
    return true;
  });
}

test("ensureThreadDirs creates the folders one level at a time, real paths, .gitignore once", () => {
  const { root, ws } = scratch();
  try {
    symlinkSync(ws, join(root, "ws-link"));
    const dirs = ensureThreadDirs(join(root, "ws-link"), "t1");
    assert.equal(dirs.workspace, ws, "the user's own link to the workspace is resolved once");
    assert.equal(dirs.outputs, join(ws, ".deerflow", "threads", "t1", "outputs"));
    assert.equal(readFileSync(join(ws, ".deerflow", ".gitignore"), "utf8"), "*\n");
    writeFileSync(join(ws, ".deerflow", ".gitignore"), "edited by the user\n");
    assert.deepEqual(ensureThreadDirs(ws, "t1"), dirs, "idempotent");
    assert.equal(readFileSync(join(ws, ".deerflow", ".gitignore"), "utf8"), "edited by the user\n");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a symlink or a file at any level from .deerflow down is refused, naming the folder; nothing lands where it leads", () => {
  const levels: Array<[string, (ws: string) => string]> = [
    [".deerflow", (ws) => join(ws, ".deerflow")],
    [".deerflow/threads", (ws) => join(ws, ".deerflow", "threads")],
    [".deerflow/threads/t1", (ws) => join(ws, ".deerflow", "threads", "t1")],
    [".deerflow/threads/t1/uploads", (ws) => join(ws, ".deerflow", "threads", "t1", "uploads")],
    [".deerflow/threads/t1/outputs", (ws) => join(ws, ".deerflow", "threads", "t1", "outputs")],
  ];
  for (const [name, at] of levels) {
    const { root, ws, outside } = scratch();
    try {
      mkdirSync(join(at(ws), ".."), { recursive: true });
      symlinkSync(outside, at(ws));
      redirected(() => ensureThreadDirs(ws, "t1"), name);
      assert.deepEqual(readdirSync(outside), [], `${name}: nothing created through the link`);
      rmSync(at(ws));
      writeFileSync(at(ws), "a file where a folder should be");
      assert.throws(() => ensureThreadDirs(ws, "t1"), /is a file, not a real folder/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

test("outputs replaced by a link to / after the run started: every consumer refuses at its next use", async () => {
  const { root, ws, outside } = scratch();
  try {
    const dirs = ensureThreadDirs(ws, "t1");
    writeFileSync(join(dirs.uploads, "in.txt"), "data\n");
    const src = join(root, "upload.txt");
    writeFileSync(src, "user file\n");
    rmSync(dirs.outputs, { recursive: true });
    symlinkSync("/", dirs.outputs);
    rmSync(dirs.uploads, { recursive: true });
    symlinkSync(outside, dirs.uploads);
    const files = new HostFiles(dirs);
    for (const attempt of [
      () => files.writeFile("/mnt/user-data/outputs/pwned.txt", "x"),
      () => files.readFile("/mnt/user-data/outputs/etc/hostname"),
      () => files.listDir("/mnt/user-data/outputs"),
      () => files.glob("/mnt/user-data/uploads", "*", false, 10),
      () => files.grep("/mnt/user-data/uploads", "x", { maxResults: 10 }),
      () => files.writeFile("/mnt/user-data/workspace/.deerflow/threads/t1/outputs/x", "x"),
      () => snapshotOutputs(dirs),
    ]) {
      await assert.rejects(attempt, (err: unknown) => err instanceof HarnessError && ["thread_folder_redirected", "path_protected"].includes(err.code));
    }
    redirected(() => copyUploads(dirs, [src]), ".deerflow/threads/t1/uploads");
    assert.equal(existsSync("/pwned.txt"), false);
    assert.deepEqual(readdirSync(outside), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a planted link inside uploads is never written through: the upload takes a free name", () => {
  const { root, ws, outside } = scratch();
  try {
    const dirs = ensureThreadDirs(ws, "t1");
    const src = join(root, "report.txt");
    writeFileSync(src, "quarterly numbers\n");
    symlinkSync(join(outside, "planted.txt"), join(dirs.uploads, "report.txt")); // dangling
    const [up] = copyUploads(dirs, [src]);
    assert.equal(up!.filename, "report-1.txt");
    assert.equal(readFileSync(join(dirs.uploads, "report-1.txt"), "utf8"), "quarterly numbers\n");
    assert.deepEqual(readdirSync(outside), [], "the dangling link's target was not created");
    const [again] = copyUploads(dirs, [src]);
    assert.equal(again!.filename, "report-1.txt", "the same bytes reuse the real copy");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test(".deerflow/.gitignore planted as a dangling link is not followed", () => {
  const { root, ws, outside } = scratch();
  try {
    mkdirSync(join(ws, ".deerflow"));
    symlinkSync(join(outside, "created-by-harness"), join(ws, ".deerflow", ".gitignore"));
    ensureThreadDirs(ws, "t1");
    assert.deepEqual(readdirSync(outside), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
