// Issue 33 item 1 (1): DeerFlow sets no per-call limit on an MCP call unless `tool_call_timeout`
// is set, and applies that key to stdio servers only (ignored, with its warning, on http/sse).
// The call below is a real tools/call to the registry's server-everything over stdio; the
// client's clock is Node's mock timers, so "65 s without an answer" costs no wall time: the
// SDK's own default (60 s) would fire, our "no limit" does not.
import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { McpConnection, callRequestOptions } from "../../../extension/harness/mcp/connection.js";
import { hostStdioTransport } from "../../../extension/harness/mcp/hostTransport.js";
import { loadDefinitions } from "../../../extension/harness/mcp/config.js";
import type { McpSource } from "../../../extension/harness/mcp/types.js";

const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

function definitions(servers: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-mcp-timeout-"));
  const file = join(dir, "extensions_config.json");
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  const source: McpSource = { file, format: "deerflow", scope: "user", label: "the data directory's extensions_config.json" };
  return loadDefinitions([source], { env: {}, workspaceFolder: dir, home: tmpdir(), secrets: () => undefined });
}

test("tool_call_timeout is a stdio server's only: unset is no limit, on http/sse it is ignored with DeerFlow's warning", () => {
  const { servers, diagnostics } = definitions({
    plain: { command: "node", args: ["s.js"] },
    bounded: { command: "node", args: ["s.js"], tool_call_timeout: 5 },
    web: { type: "http", url: "http://127.0.0.1:9/mcp", tool_call_timeout: 5 },
    events: { type: "sse", url: "http://127.0.0.1:9/sse", tool_call_timeout: 5 },
  });
  const by = new Map(servers.map((s) => [s.name, s]));
  assert.equal(by.get("plain")?.toolCallTimeoutS, undefined, "no 60 s default");
  assert.equal(by.get("bounded")?.toolCallTimeoutS, 5);
  assert.equal(by.get("web")?.toolCallTimeoutS, undefined);
  assert.equal(by.get("events")?.toolCallTimeoutS, undefined);
  assert.deepEqual(
    diagnostics.map((d) => d.message),
    [
      "Ignoring tool_call_timeout for MCP server 'web' because transport 'http' is not stdio; configure HTTP/SSE transport-level timeouts instead.",
      "Ignoring tool_call_timeout for MCP server 'events' because transport 'sse' is not stdio; configure HTTP/SSE transport-level timeouts instead.",
    ],
  );
});

test("the request options ask for progress (onprogress set, so the SDK sends a progress token) and carry no SDK default", () => {
  const unbounded = callRequestOptions(undefined);
  assert.equal(typeof unbounded.onprogress, "function");
  assert.equal(unbounded.resetTimeoutOnProgress, true);
  assert.ok((unbounded.timeout ?? 0) > 65_000, `no per-call limit: ${unbounded.timeout}`);
  assert.equal(callRequestOptions(5000).timeout, 5000);
});

test("a real stdio call with no tool_call_timeout outlives 65 s of the client's clock", async (t) => {
  const stderr: string[] = [];
  const connection = new McpConnection({
    server: "everything",
    transport: () => Promise.resolve(hostStdioTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], env: { PATH: process.env.PATH ?? "" }, cwd: tmpdir(), onStderr: (s) => stderr.push(s) })),
    initTimeoutMs: 30_000,
    log: () => undefined,
  });
  t.after(() => connection.close());
  const tools = await connection.start();
  assert.ok(tools.some((x) => x.name === "trigger-long-running-operation"), stderr.join(""));
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    // One step of one real second: its only progress comes at the end, so nothing resets a timer.
    const call = connection.callTool("trigger-long-running-operation", { duration: 1, steps: 1 }, {});
    mock.timers.tick(65_000);
    const result = await call;
    assert.match(JSON.stringify(result.content), /Long running operation completed/);
  } finally {
    mock.timers.reset();
  }
});
