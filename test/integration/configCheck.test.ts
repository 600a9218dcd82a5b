// Issue 33 item 5: `deerflow config check` lists what config.yaml and the user's
// extensions_config.json hold that the port does not act on, and exits 0; a bad value is exit 1
// with the file and line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir } from "./helpers/cli.js";

test("config check: the ignored keys of both files with their key paths, exit 0; an invalid value, exit 1", async () => {
  const dataDir = tempDir("data-config-check");
  writeFileSync(join(dataDir, "config.yaml"), "log_level: info\nscheduler:\n  enabled: true\nskills:\n  deferred_discovery: true\n");
  writeFileSync(join(dataDir, "extensions_config.json"), JSON.stringify({ mcpServers: { github: { enabled: false, type: "http", url: "http://127.0.0.1:9/mcp", oauth: {} } }, mcpInterceptors: [] }));
  const ok = await runCli(["config", "check", "--data-dir", dataDir]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(ok.lines[0], { config: join(dataDir, "config.yaml"), unsupported: ["log_level", "scheduler"] });
  assert.match(ok.stderr, /config\.yaml: not supported here: log_level, scheduler/);
  assert.match(ok.stderr, /extensions_config\.json: not supported here: mcpInterceptors, mcpServers\.github\.oauth/);

  writeFileSync(join(dataDir, "config.yaml"), "skills:\n  deferred_discovery: sometimes\n");
  const bad = await runCli(["config", "check", "--data-dir", dataDir]);
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(bad.stderr, /deerflow config check: Invalid DeerFlow configuration .*config\.yaml:2: skills\.deferred_discovery/);
});
