// Opening a checked path: what was checked is what gets written. A folder swapped for a link after
// the check (the race a loop in the sandbox can win) lands the open somewhere else; the open is
// then refused before a byte is written or truncated. FIFOs never hang the harness.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, linkSync } from "node:fs";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import {
  HARD_LINKED_MESSAGE,
  NOT_REGULAR_FILE_MESSAGE,
  PATH_SWAPPED_MESSAGE,
  checkOpened,
  createFileSync,
  readFileChecked,
  readFileCheckedSync,
  writeFileChecked,
} from "../../../extension/harness/trust/openChecked.js";
import { makeFixture, run, toolsFor } from "../sandbox/helpers.js";

const fx = makeFixture("t1");
after(() => fx.cleanup());
const { ws } = fx;

function refused(message: string) {
  return (err: unknown) => err instanceof HarnessError && err.code === "path_denied" && err.message === message;
}

test("a folder swapped for a link into .git between check and open: refused, .git/config untouched", async () => {
  mkdirSync(join(ws, ".git"));
  writeFileSync(join(ws, ".git", "config"), "[core]\n\tbare = false\n");
  // The check saw ws/build/config as a plain path; the sandbox then swapped `build` for a link.
  symlinkSync(join(ws, ".git"), join(ws, "build"));
  const checked = join(ws, "build", "config");
  await assert.rejects(writeFileChecked(checked, "[core]\n\tfsmonitor = touch /tmp/pwned\n", "overwrite"), refused(PATH_SWAPPED_MESSAGE));
  await assert.rejects(writeFileChecked(checked, "evil", "append"), refused(PATH_SWAPPED_MESSAGE));
  assert.equal(readFileSync(join(ws, ".git", "config"), "utf8"), "[core]\n\tbare = false\n", "not truncated, not appended");
  await assert.rejects(writeFileChecked(join(ws, "build", "hooks-pre-commit"), "#!/bin/sh\n", "overwrite"), refused(PATH_SWAPPED_MESSAGE));
  const created = join(ws, ".git", "hooks-pre-commit");
  assert.ok(!existsSync(created) || readFileSync(created, "utf8") === "", "at most an empty file, never the content");
  assert.throws(() => createFileSync(join(ws, "build", "new.txt"), "x"), refused(PATH_SWAPPED_MESSAGE));
  await assert.rejects(readFileChecked(checked), refused(PATH_SWAPPED_MESSAGE));
});

test("checkOpened compares the open file with the checked path", () => {
  writeFileSync(join(ws, "a.txt"), "a");
  writeFileSync(join(ws, "b.txt"), "b");
  const fd = openSync(join(ws, "a.txt"), "r");
  try {
    assert.doesNotThrow(() => checkOpened(fd, join(ws, "a.txt")));
    assert.throws(() => checkOpened(fd, join(ws, "b.txt")), refused(PATH_SWAPPED_MESSAGE));
  } finally {
    closeSync(fd);
  }
});

test("a link at the last component is never followed; a directory is EISDIR", async () => {
  writeFileSync(join(ws, "target.txt"), "original");
  symlinkSync(join(ws, "target.txt"), join(ws, "link.txt"));
  await assert.rejects(writeFileChecked(join(ws, "link.txt"), "x", "overwrite"), { code: "ELOOP" });
  assert.equal(readFileSync(join(ws, "target.txt"), "utf8"), "original");
  mkdirSync(join(ws, "folder"));
  await assert.rejects(readFileChecked(join(ws, "folder")), { code: "EISDIR" });
});

test("FIFOs planted in the workspace never hang a read, a write, grep or read_file", async () => {
  const fifo = join(ws, "pipe");
  execFileSync("mkfifo", [fifo]);
  await assert.rejects(readFileChecked(fifo), refused(NOT_REGULAR_FILE_MESSAGE));
  await assert.rejects(writeFileChecked(fifo, "x", "overwrite"), (err: unknown) => (err as NodeJS.ErrnoException).code === "ENXIO");
  const tools = toolsFor(fx);
  writeFileSync(join(ws, "text.txt"), "needle\n");
  const found = await run(fx, tools.grep, { description: "d", pattern: "needle", path: "/mnt/user-data/workspace" });
  assert.equal(found, "Found 1 matches under /mnt/user-data/workspace\n/mnt/user-data/workspace/text.txt:1: needle");
  assert.equal(
    await run(fx, tools.read_file, { description: "d", path: "/mnt/user-data/workspace/pipe" }),
    `Error: Permission denied reading file: /mnt/user-data/workspace/pipe (${NOT_REGULAR_FILE_MESSAGE})`,
  );
  // The synchronous reader (view_image, the uploads outline) neither waits on a FIFO nor follows a link.
  assert.throws(() => readFileCheckedSync(fifo), refused(NOT_REGULAR_FILE_MESSAGE));
  writeFileSync(join(ws, "host-secret"), "# private heading\n");
  symlinkSync(join(ws, "host-secret"), join(ws, "report.md"));
  assert.throws(() => readFileCheckedSync(join(ws, "report.md")), { code: "ELOOP" });
  assert.equal(readFileCheckedSync(join(ws, "host-secret"), 9).toString(), "# private");
  rmSync(fifo);
});

test("a file with a second hard link is read but never written, appended or truncated", async () => {
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  const hook = join(ws, ".git", "hooks", "post-checkout");
  writeFileSync(hook, "#!/bin/sh\nexit 0\n");
  const alias = join(ws, "innocent.sh");
  linkSync(hook, alias);
  assert.equal((await readFileChecked(alias)).toString(), "#!/bin/sh\nexit 0\n", "reading is harmless");
  await assert.rejects(writeFileChecked(alias, "#!/bin/sh\ntouch /tmp/pwned\n", "overwrite"), refused(HARD_LINKED_MESSAGE));
  await assert.rejects(writeFileChecked(alias, "touch /tmp/pwned\n", "append"), refused(HARD_LINKED_MESSAGE));
  assert.equal(readFileSync(hook, "utf8"), "#!/bin/sh\nexit 0\n");
  // With the extra name gone, the same file is an ordinary one again.
  rmSync(hook);
  await writeFileChecked(alias, "fine\n", "overwrite");
  assert.equal(readFileSync(alias, "utf8"), "fine\n");
});
