// Uploading never overwrites an earlier upload that a message still points at.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { copyUploads } from "../../../extension/harness/threads/uploads.js";

test("same name, other content → a free name; same bytes → the same file; metadata is virtual", () => {
  const dirs = ensureThreadDirs(mkdtempSync(join(tmpdir(), "deerflow-up-")), "t");
  const src = mkdtempSync(join(tmpdir(), "deerflow-src-"));
  writeFileSync(join(src, "report.txt"), "v1");
  const [first] = copyUploads(dirs, [join(src, "report.txt")]);
  assert.deepEqual(first, { filename: "report.txt", size: 2, path: "/mnt/user-data/uploads/report.txt", extension: ".txt" });

  writeFileSync(join(src, "report.txt"), "version 2");
  const [second] = copyUploads(dirs, [join(src, "report.txt")]);
  assert.equal(second!.path, "/mnt/user-data/uploads/report-1.txt");
  assert.equal(readFileSync(join(dirs.uploads, "report.txt"), "utf8"), "v1", "the earlier upload is intact");
  assert.equal(readFileSync(join(dirs.uploads, "report-1.txt"), "utf8"), "version 2");

  const [again] = copyUploads(dirs, [join(src, "report.txt")]);
  assert.equal(again!.path, "/mnt/user-data/uploads/report-1.txt", "the same bytes reuse their file");
});
