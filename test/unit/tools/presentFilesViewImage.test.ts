// present_files and view_image against real folders, real symlinks and a real SQLite blob store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { normaliseArtifactPath } from "../../../extension/harness/tools/presentFiles.js";
import { readImage } from "../../../extension/harness/tools/viewImage.js";
import { sniffImageMime } from "../../../extension/harness/tools/imageFormat.js";
import type { BlobStore } from "../../../extension/harness/store/blobs.js";
import { createBlobStore } from "../../../extension/harness/store/blobs.js";
import { openDatabase } from "../../../extension/harness/store/db.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

function setup() {
  const ws = mkdtempSync(join(tmpdir(), "deerflow-tools-"));
  const dirs = ensureThreadDirs(ws, "t1");
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-db-")), "harness.db"));
  const blobs: BlobStore = createBlobStore(db);
  return { ws, dirs, db, blobs };
}

test("present_files: virtual and host paths under outputs normalise to /mnt/user-data/outputs/...", () => {
  const { dirs } = setup();
  mkdirSync(join(dirs.outputs, "sub"));
  writeFileSync(join(dirs.outputs, "report.md"), "# r");
  writeFileSync(join(dirs.outputs, "sub", "a.csv"), "a");
  assert.deepEqual(normaliseArtifactPath("/mnt/user-data/outputs/report.md", dirs), { ok: true, path: "/mnt/user-data/outputs/report.md" });
  assert.deepEqual(normaliseArtifactPath(join(dirs.outputs, "sub", "a.csv"), dirs), { ok: true, path: "/mnt/user-data/outputs/sub/a.csv" });
  assert.deepEqual(normaliseArtifactPath("/mnt/user-data/outputs//sub/./a.csv", dirs), { ok: true, path: "/mnt/user-data/outputs/sub/a.csv" });
});

test("present_files: outside outputs, traversal, symlink escape and missing files are refused", () => {
  const { dirs, ws } = setup();
  writeFileSync(join(ws, "notes.md"), "n");
  const outside = mkdtempSync(join(tmpdir(), "deerflow-outside-"));
  writeFileSync(join(outside, "secret.txt"), "s");
  symlinkSync(join(outside, "secret.txt"), join(dirs.outputs, "link.txt"));
  const refused = (p: string, pattern: RegExp) => {
    const r = normaliseArtifactPath(p, dirs);
    assert.equal(r.ok, false, p);
    assert.match((r as { error: string }).error, pattern, p);
    assert.ok(!(r as { error: string }).error.includes(ws) || p.includes(ws), "no host path the model did not give");
  };
  refused("/mnt/user-data/workspace/notes.md", /^Error: Only files in \/mnt\/user-data\/outputs can be presented: \/mnt\/user-data\/workspace\/notes.md$/);
  refused("/mnt/user-data/outputs/../../etc/passwd", /path traversal/);
  refused("/etc/passwd", /Only files in \/mnt\/user-data\/outputs can be presented/);
  refused("/mnt/user-data/outputs/link.txt", /path traversal|Only files in/);
  refused("/mnt/user-data/outputs/missing.md", /File not found/);
  refused("/mnt/user-data/outputs", /Only files in/);
  refused("report.md", /Only files in/);
});

test("view_image: a PNG in uploads records metadata and a hash; the bytes go to the blob store", () => {
  const { dirs, blobs, db } = setup();
  writeFileSync(join(dirs.uploads, "pic.png"), PNG);
  const r = readImage("/mnt/user-data/uploads/pic.png", dirs, blobs);
  assert.equal(r.ok, true);
  if (!r.ok) return;
  assert.equal(r.path, "/mnt/user-data/uploads/pic.png");
  assert.equal(r.image.mime_type, "image/png");
  assert.equal(r.image.size, PNG.length);
  assert.match(r.image.sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(Object.keys(r.image).sort(), ["mime_type", "sha256", "size"], "metadata only, never bytes");
  assert.deepEqual(blobs.get(r.image.sha256)?.bytes, PNG);
  assert.equal((db.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number }).n, 1);
  const again = readImage("/mnt/user-data/uploads/pic.png", dirs, blobs);
  assert.equal(again.ok && again.image.sha256, r.image.sha256, "content-addressed: same bytes, same key");
  assert.equal((db.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number }).n, 1);
});

test("view_image: GIF and JPEG are sniffed by content", () => {
  const { dirs, blobs } = setup();
  writeFileSync(join(dirs.outputs, "a.gif"), GIF);
  writeFileSync(join(dirs.workspace, "b.jpg"), JPEG);
  const gif = readImage("/mnt/user-data/outputs/a.gif", dirs, blobs);
  assert.equal(gif.ok && gif.image.mime_type, "image/gif");
  const jpg = readImage("/mnt/user-data/workspace/b.jpg", dirs, blobs);
  assert.equal(jpg.ok && jpg.image.mime_type, "image/jpeg");
  assert.equal(sniffImageMime(Buffer.from("RIFF....WEBPVP8 ")), "image/webp");
});

test("view_image: DeerFlow's refusals, with virtual paths only", () => {
  const { dirs, blobs, ws } = setup();
  writeFileSync(join(dirs.uploads, "fake.png"), "this is text");
  writeFileSync(join(dirs.uploads, "photo.png"), JPEG);
  writeFileSync(join(dirs.uploads, "doc.txt"), "x");
  mkdirSync(join(dirs.uploads, "dir.png"));
  const outside = mkdtempSync(join(tmpdir(), "deerflow-outside-"));
  writeFileSync(join(outside, "x.png"), PNG);
  symlinkSync(join(outside, "x.png"), join(dirs.uploads, "escape.png"));
  const err = (p: string) => {
    const r = readImage(p, dirs, blobs);
    assert.equal(r.ok, false, p);
    const e = (r as { error: string }).error;
    assert.ok(!e.includes(ws) && !e.includes(outside), `no host path in ${e}`);
    return e;
  };
  assert.match(err("/etc/passwd"), /Only image paths under \/mnt\/user-data/);
  assert.match(err("/mnt/user-data/uploads/fake.png"), /contents do not match/);
  assert.match(err("/mnt/user-data/uploads/photo.png"), /^Error: Image contents are image\/jpeg, but file extension indicates image\/png$/);
  assert.match(err("/mnt/user-data/uploads/doc.txt"), /^Error: Unsupported image format: \.txt/);
  assert.match(err("/mnt/user-data/uploads/missing.png"), /^Error: Image file not found: \/mnt\/user-data\/uploads\/missing.png$/);
  assert.match(err("/mnt/user-data/uploads/dir.png"), /^Error: Path is not a file/);
  assert.match(err("/mnt/user-data/uploads/escape.png"), /path traversal/);
  assert.match(err("/mnt/user-data/uploads/../../x.png"), /path traversal/);
});

test("view_image: over 20 MiB is refused before the bytes are stored", () => {
  const { dirs, blobs, db } = setup();
  const big = Buffer.alloc(20 * 1024 * 1024 + 1);
  PNG.copy(big);
  writeFileSync(join(dirs.uploads, "big.png"), big);
  const r = readImage("/mnt/user-data/uploads/big.png", dirs, blobs);
  assert.equal(r.ok, false);
  assert.match((r as { error: string }).error, /^Error: Image file is too large: 20971521 bytes. Maximum supported size is 20971520 bytes$/);
  assert.equal((db.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number }).n, 0);
});
