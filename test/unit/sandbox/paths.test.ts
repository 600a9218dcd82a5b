// Virtual path scheme: mapping, validation (traversal, non-virtual, bare root, symlink escapes,
// other threads' data), host → virtual masking and command rewriting. Real dirs and symlinks.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import {
  hostToVirtual,
  maskLocalPathsInOutput,
  replaceVirtualPathsInCommand,
  resolveVirtualPath,
  virtualToHost,
} from "../../../extension/harness/sandbox/paths.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { makeFixture } from "./helpers.js";

const fx = makeFixture("t1");
after(() => fx.cleanup());
const { dirs, ws } = fx;

function denied(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HarnessError);
    assert.equal(err.code, "path_denied");
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes(fx.root), "no host path in the message");
    return true;
  });
}

test("virtualToHost maps the three roots and keeps a trailing slash", () => {
  assert.equal(virtualToHost("/mnt/user-data/workspace/a.txt", dirs), join(ws, "a.txt"));
  assert.equal(virtualToHost("/mnt/user-data/uploads", dirs), dirs.uploads);
  assert.equal(virtualToHost("/mnt/user-data/outputs/sub/", dirs), join(dirs.outputs, "sub") + "/");
  assert.equal(virtualToHost("/mnt/user-data", dirs), undefined);
  assert.equal(virtualToHost("/mnt/user-data/other/x", dirs), undefined);
});

test("resolveVirtualPath accepts paths under the roots, existing or not", () => {
  writeFileSync(join(ws, "hello.txt"), "hi");
  assert.equal(resolveVirtualPath("/mnt/user-data/workspace/hello.txt", dirs), join(ws, "hello.txt"));
  assert.equal(resolveVirtualPath("/mnt/user-data/outputs/new/deep.txt", dirs), join(dirs.outputs, "new", "deep.txt"));
});

test("`..` anywhere is path traversal", () => {
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/../../etc/passwd", dirs), /^Access denied: path traversal detected$/);
  denied(() => resolveVirtualPath("../secret", dirs), /path traversal/);
  denied(() => resolveVirtualPath("/mnt/user-data/workspace\\..\\x", dirs), /path traversal/);
});

test("non-virtual paths, including the host path of the workspace, are refused", () => {
  denied(() => resolveVirtualPath("/etc/passwd", dirs), /^Only paths under \/mnt\/user-data\/ are allowed$/);
  denied(() => resolveVirtualPath(join(ws, "hello.txt"), dirs), /Only paths under/);
  denied(() => resolveVirtualPath("relative.txt", dirs), /Only paths under/);
  denied(() => resolveVirtualPath("/mnt/user-data-backup/x", dirs), /Only paths under/);
});

test("the bare root and unknown children of it are refused", () => {
  denied(() => resolveVirtualPath("/mnt/user-data", dirs), /Only paths under/);
  denied(() => resolveVirtualPath("/mnt/user-data/", dirs), /Only paths under/);
  denied(() => resolveVirtualPath("/mnt/user-data/secrets/x", dirs), /Only paths under/);
});

test("symlink escapes from uploads and workspace are refused", () => {
  const outside = join(fx.root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "s");
  symlinkSync(outside, join(dirs.uploads, "escape"));
  symlinkSync(join(outside, "secret.txt"), join(ws, "secret-link.txt"));
  symlinkSync(join(outside, "not-yet.txt"), join(ws, "dangling.txt"));
  denied(() => resolveVirtualPath("/mnt/user-data/uploads/escape/secret.txt", dirs), /path traversal/);
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/secret-link.txt", dirs), /path traversal/);
  // Writing through a dangling link would create a file outside: refused as well.
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/dangling.txt", dirs), /path traversal/);
  denied(() => resolveVirtualPath("/mnt/user-data/uploads/escape/new/file.txt", dirs), /path traversal/);
});

test("another thread's data under the workspace is refused; this thread's maps consistently", () => {
  const other = ensureThreadDirs(join(fx.root, "workspace"), "t2");
  writeFileSync(join(other.outputs, "theirs.txt"), "x");
  writeFileSync(join(dirs.outputs, "mine.txt"), "y");
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/.deerflow/threads/t2/outputs/theirs.txt", dirs), /path traversal/);
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/.deerflow", dirs), /path traversal/);
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/.deerflow/.gitignore", dirs), /path traversal/);
  symlinkSync(other.outputs, join(ws, "their-outputs"));
  denied(() => resolveVirtualPath("/mnt/user-data/workspace/their-outputs/theirs.txt", dirs), /path traversal/);

  const viaWorkspace = resolveVirtualPath("/mnt/user-data/workspace/.deerflow/threads/t1/outputs/mine.txt", dirs);
  assert.equal(viaWorkspace, resolveVirtualPath("/mnt/user-data/outputs/mine.txt", dirs));
  assert.equal(hostToVirtual(viaWorkspace, dirs), "/mnt/user-data/outputs/mine.txt");
});

test("masking rewrites host paths, longest root first", () => {
  const out = `wrote ${ws}/result.txt and ${dirs.outputs}/r.md and ${dirs.uploads}\n`;
  assert.equal(
    maskLocalPathsInOutput(out, dirs),
    "wrote /mnt/user-data/workspace/result.txt and /mnt/user-data/outputs/r.md and /mnt/user-data/uploads\n",
  );
  assert.equal(maskLocalPathsInOutput(`cwd=${ws}`, dirs), "cwd=/mnt/user-data/workspace");
  assert.equal(maskLocalPathsInOutput(`PATH=${ws}/bin:${ws}`, dirs), "PATH=/mnt/user-data/workspace/bin:/mnt/user-data/workspace");
  assert.equal(maskLocalPathsInOutput(`root is ${ws}, done`, dirs), "root is /mnt/user-data/workspace, done");
});

test("masking never matches inside a longer sibling and is idempotent", () => {
  for (const suffix of ["-backup/x", "2/report.txt", ".bak", "_old/x"]) {
    const text = `see ${ws}${suffix}`;
    assert.equal(maskLocalPathsInOutput(text, dirs), text);
  }
  const once = maskLocalPathsInOutput(`a ${ws}/x.txt b ${dirs.outputs}/y.log`, dirs);
  assert.equal(maskLocalPathsInOutput(once, dirs), once);
  assert.ok(!once.includes(fx.root));
});

test("command rewriting touches only genuine /mnt/user-data tokens", () => {
  assert.equal(
    replaceVirtualPathsInCommand("cat /mnt/user-data/workspace/a.txt > /mnt/user-data/outputs/b.txt", dirs),
    `cat ${ws}/a.txt > ${dirs.outputs}/b.txt`,
  );
  assert.equal(replaceVirtualPathsInCommand("ls /mnt/user-data/workspace/", dirs), `ls ${ws}/`);
  for (const sibling of ["/mnt/user-data-backup/secret.txt", "/mnt/user-data2/report.txt", "/mnt/user-data.bak", "/mnt/user-data_old/x"]) {
    assert.equal(replaceVirtualPathsInCommand(`cat ${sibling}`, dirs), `cat ${sibling}`);
  }
  assert.equal(replaceVirtualPathsInCommand("echo '/mnt/user-data/uploads, done'", dirs), `echo '${dirs.uploads}, done'`);
});
