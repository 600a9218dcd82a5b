// Truncation shapes and result formats (DeerFlow's test_tool_output_truncation.py and friends).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  truncateBashOutput,
  truncateLsOutput,
  truncateReadFileOutput,
} from "../../../extension/harness/tools/sandbox/index.js";
import {
  clampMaxResults,
  effectiveWriteFileMaxBytes,
  formatGlobResults,
  formatGrepResults,
  formatWriteFileError,
} from "../../../extension/harness/tools/sandbox/output.js";
import type { ThreadDirs } from "../../../extension/harness/threads/threadDirs.js";

test("bash output: middle truncation within the cap, head and tail kept, 0 disables", () => {
  assert.equal(truncateBashOutput("short", 20000), "short");
  const out = "H".repeat(15000) + "M".repeat(10000) + "T".repeat(15000);
  const t = truncateBashOutput(out, 20000);
  assert.ok(t.length <= 20000);
  assert.ok(t.startsWith("HHHH"));
  assert.ok(t.endsWith("TTTT"));
  assert.match(t, /\n\.\.\. \[middle truncated: \d+ chars skipped\] \.\.\.\n/);
  assert.equal(truncateBashOutput(out, 0), out);
  assert.equal(truncateBashOutput(out), t, "20000 is the default");
});

test("read_file output: head kept, tail dropped, marker names the range parameters", () => {
  const out = "x".repeat(60000);
  const t = truncateReadFileOutput(out, 50000);
  assert.ok(t.length <= 50000);
  assert.match(t, /\n\.\.\. \[truncated: showing first \d+ of 60000 chars\. Use start_line\/end_line to read a specific range\] \.\.\.$/);
  assert.equal(truncateReadFileOutput(out, 0), out);
  assert.equal(truncateReadFileOutput("small", 50000), "small");
});

test("ls output: same shape with its own hint", () => {
  const t = truncateLsOutput("y".repeat(30000), 20000);
  assert.ok(t.length <= 20000);
  assert.ok(t.includes("[truncated:") && t.includes("showing first") && t.includes("of 30000 chars"));
  assert.ok(t.includes("Use a more specific path to see fewer results"));
  assert.equal(truncateLsOutput("z".repeat(30000), 0).length, 30000);
});

test("glob and grep formats", () => {
  assert.equal(formatGlobResults("/mnt/user-data/workspace", [], false), "No files matched under /mnt/user-data/workspace");
  assert.equal(
    formatGlobResults("/r", ["/r/a", "/r/b"], true),
    "Found 2 paths under /r (showing first 2)\n1. /r/a\n2. /r/b\nResults truncated. Narrow the path or pattern to see fewer matches.",
  );
  assert.equal(formatGrepResults("/r", [], false), "No matches found under /r");
  assert.equal(
    formatGrepResults("/r", [{ path: "/r/a.py", lineNumber: 3, line: "x = 1" }], false),
    "Found 1 matches under /r\n/r/a.py:3: x = 1",
  );
  assert.equal(clampMaxResults(0, 200, 1000), 200);
  assert.equal(clampMaxResults(-5, 100, 500), 100);
  assert.equal(clampMaxResults(5000, 200, 1000), 1000);
  assert.equal(clampMaxResults(2, 200, 1000), 2);
});

test("write guard limit comes from DEERFLOW_WRITE_FILE_MAX_BYTES at call time", () => {
  assert.equal(effectiveWriteFileMaxBytes({}), 81920);
  assert.equal(effectiveWriteFileMaxBytes({ DEERFLOW_WRITE_FILE_MAX_BYTES: "200000" }), 200000);
  assert.equal(effectiveWriteFileMaxBytes({ DEERFLOW_WRITE_FILE_MAX_BYTES: "0" }), 0);
  assert.equal(effectiveWriteFileMaxBytes({ DEERFLOW_WRITE_FILE_MAX_BYTES: "lots" }), 81920);
});

test("write_file errors are bounded to 2000 chars and masked", () => {
  const dirs: ThreadDirs = { threadId: "t1", workspace: "/tmp/ws-x", uploads: "/tmp/ws-x/.deerflow/threads/t1/uploads", outputs: "/tmp/ws-x/.deerflow/threads/t1/outputs" };
  const short = formatWriteFileError("/mnt/user-data/workspace/output.txt", Object.assign(new Error("disk quota exceeded"), { name: "OSError" }), dirs);
  assert.equal(short, "Error: Failed to write file '/mnt/user-data/workspace/output.txt': OSError: disk quota exceeded");
  const long = formatWriteFileError(
    "/mnt/user-data/workspace/output.txt",
    new Error(`cannot write /tmp/ws-x/nested/output.txt ${"x".repeat(5000)} remote tail marker`),
    dirs,
  );
  assert.ok(long.length <= 2000);
  assert.ok(long.startsWith("Error: Failed to write file '/mnt/user-data/workspace/output.txt':"));
  assert.ok(long.includes("/mnt/user-data/workspace/nested/output.txt"));
  assert.ok(!long.includes("/tmp/ws-x"));
  assert.ok(long.includes("remote tail marker"));
  assert.ok(long.includes("[write_file error truncated:"));
});
