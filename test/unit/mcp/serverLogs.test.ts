import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServerLogs } from "../../../extension/harness/mcp/logs.js";

test("a server's stderr is scrubbed before it is logged, shown or kept for a failure's reason", () => {
  const logs = new McpServerLogs(join(mkdtempSync(join(tmpdir(), "deerflow-mcp-logs-")), "logs"));
  const shown: string[] = [];
  logs.onLine((_server, line) => shown.push(line));
  const key = "sk-live1234567890abcdefghijklmnop";
  logs.append("api", `starting with key ${key}\nready\n`);
  const file = readFileSync(logs.path("api"), "utf8");
  for (const where of [file, shown.join("\n"), logs.tail("api").join("\n")]) {
    assert.ok(!where.includes(key), where);
    assert.match(where, /ready/);
  }
});
