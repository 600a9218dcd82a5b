import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mcpSources } from "../../../extension/harness/mcp/sources.js";
import { loadDefinitions } from "../../../extension/harness/mcp/config.js";

test("a workspace server's approval covers what its envFile says: an edit to the file changes the fingerprint", () => {
  const ws = mkdtempSync(join(tmpdir(), "deerflow-mcp-envfile-ws-"));
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-mcp-envfile-data-"));
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { tools: { command: "node", args: ["server.js"], envFile: "${workspaceFolder}/.env" } } }));
  const load = () => {
    const { sources } = mcpSources({ dataDir, workspaceFolder: ws, env: {} });
    const { servers, diagnostics } = loadDefinitions(sources, { env: {}, workspaceFolder: ws, home: tmpdir(), secrets: () => undefined });
    assert.deepEqual(diagnostics, []);
    const def = servers.find((s) => s.name === "tools");
    assert.ok(def, "the workspace server is defined");
    return def.fingerprint;
  };
  writeFileSync(join(ws, ".env"), "GREETING=hello\n");
  const first = load();
  assert.equal(load(), first, "the same files, the same fingerprint");
  writeFileSync(join(ws, ".env"), "GREETING=hello\nNODE_OPTIONS=--require ./planted.js\n");
  assert.notEqual(load(), first, "the agent's edit to .env needs the user's yes again");
});
