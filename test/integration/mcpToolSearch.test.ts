// Issue 23: DeerFlow's tool_search with deferred MCP tools, through the CLI, with 63 tools from
// real registry servers (filesystem and everything twice each, and memory). Past the automatic
// threshold (40 MCP tools) their schemas stay out of the request: the model sees their names in
// <available-deferred-tools>, a call to one it has not fetched gets DeerFlow's error, and
// `tool_search("select:…")` promotes it (kept in state) so it is offered and runs. Under the default
// policy: a call to a hidden tool is never put to the user, and tool_search itself never asks.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cliState, sandboxDirs, scriptedRun, useModelServer, type Dirs } from "./helpers/cli.js";

const model = useModelServer();
const pkg = (name: string) => resolve(`node_modules/@modelcontextprotocol/${name}/dist/index.js`);

let d: Dirs;
before(() => {
  d = sandboxDirs();
  const fs = { command: "node", args: [pkg("server-filesystem"), d.workspace] };
  const everything = { command: "node", args: [pkg("server-everything"), "stdio"] };
  writeFileSync(
    join(d.dataDir, "extensions_config.json"),
    JSON.stringify({ mcpServers: { fs, fs2: fs, ev: { ...everything, always_allow: ["echo"] }, ev2: everything, memory: { command: "node", args: [pkg("server-memory")], env: { MEMORY_FILE_PATH: join(d.dataDir, "memory.jsonl") } } } }),
  );
});

type Req = { body?: { tools?: Array<{ function: { name: string } }>; messages?: Array<Record<string, any>> } | null } | undefined;
const offered = (r: Req) => (r?.body?.tools ?? []).map((t) => t.function.name);
const system = (r: Req) => JSON.stringify(r?.body?.messages?.find((m) => m.role === "system")?.content ?? "");
const toolResult = (r: Req, id: string) => r?.body?.messages?.find((m) => m.role === "tool" && m.tool_call_id === id)?.content as unknown;

test("past 40 MCP tools they are deferred: names in the prompt, DeerFlow's error before tool_search, callable once promoted", async () => {
  const r = await scriptedRun(
    model,
    d,
    [
      { toolCalls: [{ id: "early", name: "ev2_echo", args: { message: "too soon" } }] },
      { toolCalls: [{ id: "search", name: "tool_search", args: { query: "select:ev_echo,fs_list_allowed_directories" } }] },
      { toolCalls: [{ id: "late", name: "ev_echo", args: { message: "now" } }] },
      { toolCalls: [{ id: "kw", name: "tool_search", args: { query: "+memory entities" } }] },
      { content: "Done." },
    ],
    "Echo something.",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.status, "success");
  // Default policy (mcp=ask): the unpromoted call was answered by DeerFlow's error, not put to the
  // user; ev's echo ran without asking because the user's own config lists it in always_allow.
  assert.ok(!r.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"), "nobody was asked");
  const statuses = r.lines.filter((l) => l.event === "custom" && l.data.type === "mcp_status" && l.data.state === "ready");
  const total = statuses.reduce((n, l) => n + (l.data.tools as number), 0);
  assert.ok(total >= 60, `at least 60 MCP tools (${total})`);

  const first = offered(r.requests[0]);
  assert.ok(first.includes("tool_search"));
  assert.ok(!first.some((n) => /^(fs|fs2|ev|ev2|memory)_/.test(n)), `no MCP schema bound: ${first.join(",")}`);
  const prompt = system(r.requests[0]);
  assert.match(prompt, /<available-deferred-tools>/);
  for (const name of ["ev_echo", "fs2_read_text_file", "memory_create_entities"]) assert.ok(prompt.includes(name), name);

  assert.equal(
    toolResult(r.requests[1], "early"),
    "Error: Tool 'ev2_echo' is deferred and has not been promoted yet. Call tool_search first to expose and promote this tool's schema, then retry.",
  );
  const schemas = JSON.parse(String(toolResult(r.requests[2], "search"))) as Array<{ name: string }>;
  assert.deepEqual(schemas.map((s) => s.name).sort(), ["ev_echo", "fs_list_allowed_directories"]);
  const promoted = offered(r.requests[2]);
  assert.ok(promoted.includes("ev_echo") && promoted.includes("fs_list_allowed_directories"));
  assert.ok(!promoted.includes("ev2_echo"), "only what was fetched");
  assert.equal(toolResult(r.requests[3], "late"), "Echo: now");
  const ranked = JSON.parse(String(toolResult(r.requests[4], "kw"))) as Array<{ name: string }>;
  assert.ok(ranked.length > 0 && ranked.length <= 5, "ranked searches return at most 5");
  assert.ok(ranked.every((s) => s.name.toLowerCase().includes("memory")));

  const state = await cliState(d, r.threadId);
  assert.ok(state.promoted.names.includes("ev_echo"), JSON.stringify(state.promoted));
  assert.equal(typeof state.promoted.catalog_hash, "string");
});
