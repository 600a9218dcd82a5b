// Folders opened without following links (checkedDir.ts), with real folders and links: a link
// anywhere on the way is refused, every later use goes through the folder that was opened (even
// when its path is swapped for a link afterwards), and a deletion removes only the checked file.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import { openDirChain } from "../../../extension/harness/trust/checkedDir.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-checked-dir-")));
after(() => rmSync(root, { recursive: true, force: true }));

const code = (expected: string) => (err: unknown) => (err as NodeJS.ErrnoException).code === expected;

test("a link on the way is refused, never followed; missing folders are made one level at a time", () => {
  mkdirSync(join(root, "a", "b"), { recursive: true });
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  symlinkSync(join(root, ".git"), join(root, "a", "linked"));
  // O_NOFOLLOW | O_DIRECTORY on a link: ENOTDIR on Linux, ELOOP elsewhere.
  assert.throws(() => openDirChain(root, join(root, "a", "linked", "hooks")), (err: unknown) => code("ENOTDIR")(err) || code("ELOOP")(err));
  assert.throws(() => openDirChain(root, join(root, "a", "linked")), (err: unknown) => code("ENOTDIR")(err) || code("ELOOP")(err));
  assert.throws(() => openDirChain(root, join(root, "a", "missing")), code("ENOENT"));
  const made = openDirChain(root, join(root, "a", "new", "deeper"), { create: true });
  made.close();
  assert.ok(existsSync(join(root, "a", "new", "deeper")));
  assert.throws(() => openDirChain(root, join(root, "..", "elsewhere")), (err: unknown) => err instanceof HarnessError && err.code === "path_denied");
});

test("the folder swapped for a link into .git after it was opened: nothing is created, deleted or written, there or anywhere", () => {
  mkdirSync(join(root, "work"));
  writeFileSync(join(root, "work", "added.txt"), "added\n");
  const dir = openDirChain(root, join(root, "work"));
  const fd = dir.openForUpdate("added.txt");
  // The sandbox swaps the folder for a link into .git, holding a file of the same name.
  renameSync(join(root, "work"), join(root, "work-moved"));
  symlinkSync(join(root, ".git", "hooks"), join(root, "work"));
  writeFileSync(join(root, ".git", "hooks", "added.txt"), "added\n");
  const swapped = (err: unknown) => err instanceof HarnessError && err.code === "path_denied";
  assert.throws(() => dir.createFile("restored.txt", Buffer.from("restored\n")), swapped);
  assert.throws(() => dir.unlinkChecked("added.txt", fd), swapped);
  assert.throws(() => dir.openForUpdate("added.txt"), swapped);
  closeSync(fd);
  dir.close();
  assert.equal(readFileSync(join(root, ".git", "hooks", "added.txt"), "utf8"), "added\n", "the file behind the link is untouched");
  assert.equal(readFileSync(join(root, "work-moved", "added.txt"), "utf8"), "added\n");
  assert.equal(existsSync(join(root, ".git", "hooks", "restored.txt")), false);
  assert.equal(existsSync(join(root, "work-moved", "restored.txt")), false);
});

test("a file opened through the chain and deleted by its checked handle", () => {
  mkdirSync(join(root, "del", "x"), { recursive: true });
  writeFileSync(join(root, "del", "x", "gone.txt"), "bye\n");
  const dir = openDirChain(root, join(root, "del", "x"));
  const fd = dir.openForUpdate("gone.txt");
  dir.unlinkChecked("gone.txt", fd);
  closeSync(fd);
  dir.createFile("new.txt", Buffer.from("hi\n"));
  assert.throws(() => dir.createFile("new.txt", Buffer.from("again\n")), code("EEXIST"));
  dir.close();
  assert.equal(existsSync(join(root, "del", "x", "gone.txt")), false);
  assert.equal(readFileSync(join(root, "del", "x", "new.txt"), "utf8"), "hi\n");
});

test("a name swapped for another file after the check is not deleted: it is put back and refused", () => {
  mkdirSync(join(root, "swap"));
  writeFileSync(join(root, "swap", "f.txt"), "checked\n");
  const dir = openDirChain(root, join(root, "swap"));
  const fd = dir.openForUpdate("f.txt");
  rmSync(join(root, "swap", "f.txt"));
  writeFileSync(join(root, "swap", "f.txt"), "someone else's\n");
  assert.throws(() => dir.unlinkChecked("f.txt", fd), (err: unknown) => err instanceof HarnessError && err.code === "path_denied");
  closeSync(fd);
  dir.close();
  assert.equal(readFileSync(join(root, "swap", "f.txt"), "utf8"), "someone else's\n");
});
