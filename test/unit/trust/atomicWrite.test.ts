// The one atomic write (trust/atomicWrite.ts) on a real file system: the mode is exactly the one
// asked for (whatever the umask), the content is replaced whole, and a write that fails leaves the
// target as it was and no temp file beside it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic, writeJsonAtomic } from "../../../extension/harness/trust/atomicWrite.js";

const posix = process.platform !== "win32";

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-atomic-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("writeFileAtomic", () => {
  it("creates the file 0600 by default, and with exactly the mode asked for under any umask", { skip: !posix }, (t) => {
    const dir = tempDir(t);
    const previous = process.umask(0o077);
    try {
      writeFileAtomic(join(dir, "secret.json"), "{}\n");
      writeFileAtomic(join(dir, "shared.json"), "{}\n", { mode: 0o644 });
    } finally {
      process.umask(previous);
    }
    assert.equal(statSync(join(dir, "secret.json")).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, "shared.json")).mode & 0o777, 0o644);
    // A rewrite takes the mode asked for, not the old file's.
    writeFileAtomic(join(dir, "shared.json"), "{}\n");
    assert.equal(statSync(join(dir, "shared.json")).mode & 0o777, 0o600);
  });

  it("replaces the content whole: a shorter write leaves nothing of the longer one", (t) => {
    const dir = tempDir(t);
    const file = join(dir, "state.json");
    writeFileAtomic(file, "x".repeat(100_000));
    writeFileAtomic(file, "short");
    assert.equal(readFileSync(file, "utf8"), "short");
    writeFileAtomic(file, Buffer.from([0, 1, 2]));
    assert.deepEqual([...readFileSync(file)], [0, 1, 2]);
    assert.deepEqual(readdirSync(dir), ["state.json"], "no temp file left beside it");
  });

  it("a failed rename leaves the target as it was and no temp file behind", (t) => {
    const dir = tempDir(t);
    // A non-empty folder where the file should go: the rename over it fails.
    const target = join(dir, "memory.json");
    mkdirSync(target);
    writeFileSync(join(target, "keep"), "kept");
    assert.throws(() => writeFileAtomic(target, "new"), (err: NodeJS.ErrnoException) => typeof err.code === "string");
    assert.deepEqual(readdirSync(dir), ["memory.json"]);
    assert.equal(readFileSync(join(target, "keep"), "utf8"), "kept");
  });

  it("a folder that does not exist is an error, and nothing is created", (t) => {
    const dir = tempDir(t);
    assert.throws(() => writeFileAtomic(join(dir, "missing", "x.json"), "{}"), (err: NodeJS.ErrnoException) => err.code === "ENOENT");
    assert.deepEqual(readdirSync(dir), []);
  });

  it("replaces a link at the target with the file; the file it pointed to is not written", { skip: !posix }, (t) => {
    const dir = tempDir(t);
    const elsewhere = join(dir, "elsewhere.json");
    writeFileSync(elsewhere, "untouched");
    const target = join(dir, "consents.json");
    symlinkSync(elsewhere, target);
    writeFileAtomic(target, "written");
    assert.ok(lstatSync(target).isFile());
    assert.equal(readFileSync(target, "utf8"), "written");
    assert.equal(readFileSync(elsewhere, "utf8"), "untouched");
  });
});

describe("writeJsonAtomic", () => {
  it("writes two-space JSON with a final newline", (t) => {
    const dir = tempDir(t);
    const file = join(dir, "state.json");
    writeJsonAtomic(file, { disabled: ["a"] });
    assert.equal(readFileSync(file, "utf8"), '{\n  "disabled": [\n    "a"\n  ]\n}\n');
  });
});
