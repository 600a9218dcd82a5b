// Issue 33 item 1 (2, 3), through the CLI against the registry's server-everything over stdio,
// with tool_search on (config.yaml) so the MCP tools are deferred:
// - a per-tool routing override that names only `priority` keeps the server's `prefer` mode and
//   keywords (DeerFlow `test_tool_routing_override_only_replaces_explicit_fields`): the tool is
//   the first routing hint and the one auto-promoted;
// - under a slash-activated skill whose allowed-tools leave ev_get-sum only, tool_search neither
//   returns nor promotes the denied ev_echo (DeerFlow
//   `test_tool_search_promotion_cannot_expose_or_execute_denied_deferred_tool`).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cliState, sandboxDirs, scriptedRun, useModelServer, type Dirs } from "./helpers/cli.js";

const model = useModelServer();
const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

let d: Dirs;
before(() => {
  d = sandboxDirs();
  writeFileSync(join(d.dataDir, "config.yaml"), "tool_search:\n  enabled: true\n  auto_promote_top_k: 1\n");
  writeFileSync(
    join(d.dataDir, "extensions_config.json"),
    JSON.stringify({
      mcpServers: {
        ev: {
          command: "node",
          args: [EVERYTHING, "stdio"],
          routing: { mode: "prefer", priority: 20, keywords: ["database", "table"] },
          tools: { echo: { routing: { priority: 100 } } },
        },
      },
    }),
  );
  const skill = join(d.dataDir, "skills", "calc-only");
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, "SKILL.md"), "---\nname: calc-only\ndescription: Adds numbers. Use when asked to add.\nallowed-tools: [ev_get-sum]\n---\n# Calc only\nUse ev_get-sum.\n");
});

type Req = { body?: { tools?: Array<{ function: { name: string } }>; messages?: Array<Record<string, any>> } | null } | undefined;
const offered = (r: Req) => (r?.body?.tools ?? []).map((t) => t.function.name);
const system = (r: Req) => String(r?.body?.messages?.find((m) => m.role === "system")?.content ?? "");
const toolResult = (r: Req, id: string) => String(r?.body?.messages?.find((m) => m.role === "tool" && m.tool_call_id === id)?.content ?? "");

test("a partial per-tool routing override keeps the server's mode and keywords: first hint, and auto-promoted", async () => {
  const r = await scriptedRun(model, d, [{ content: "Noted." }], "Which table holds the orders?");
  assert.equal(r.code, 0, r.stderr);
  const prompt = system(r.requests[0]);
  const hints = prompt.slice(prompt.indexOf("<mcp_routing_hints>"));
  assert.match(hints, /^<mcp_routing_hints>\nWhen the user's request involves database, or table:\n {2}use `tool_search` to fetch `ev_echo`, then prefer that MCP tool\./, hints.slice(0, 400));
  const bound = offered(r.requests[0]).filter((n) => n.startsWith("ev_"));
  assert.deepEqual(bound, ["ev_echo"], "priority 100 with the server's keywords wins the one auto-promotion");
});

test("under a restrictive skill, tool_search neither returns nor promotes the tool the skill denies", async () => {
  const r = await scriptedRun(
    model,
    d,
    [
      { toolCalls: [{ id: "search", name: "tool_search", args: { query: "select:ev_echo,ev_get-sum" } }] },
      { toolCalls: [{ id: "denied", name: "tool_search", args: { query: "select:ev_echo" } }] },
      { content: "Done." },
    ],
    "/calc-only add 1 and 2",
  );
  assert.equal(r.code, 0, r.stderr);
  const found = JSON.parse(toolResult(r.requests[1], "search")) as Array<{ name: string }>;
  assert.deepEqual(found.map((s) => s.name), ["ev_get-sum"]);
  assert.equal(toolResult(r.requests[2], "denied"), "No tools found matching the active skill policy.");
  assert.ok(!offered(r.requests[2]).includes("ev_echo"));
  const state = await cliState(d, r.threadId);
  assert.deepEqual(state.promoted.names, ["ev_get-sum"], JSON.stringify(state.promoted));
});
