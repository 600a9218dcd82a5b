// Issue 23: with an approved dev container, a stdio MCP server runs INSIDE the container, not on
// the host. The registry's server-filesystem (this checkout's node and node_modules, bind-mounted
// read-only by the folder's devcontainer.json: the registry-free test image has no node) is the
// user's server; a run calls its read_text_file on /etc/hostname, which in the container is the
// container's own hostname, and the model reads it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runCli } from "../integration/helpers/cli.js";
import { useEngineFixture } from "./helpers/engine.js";

const fx = useEngineFixture("basic");

test("an approved dev container runs the stdio MCP server inside it: the tool reads the container's hostname", async () => {
  const configFile = join(fx.folder, ".devcontainer", "devcontainer.json");
  const config = JSON.parse(readFileSync(configFile, "utf8").replace(/^\s*\/\/.*$/gm, "")) as Record<string, unknown>;
  config.mounts = [`source=${process.execPath},target=/opt/node/bin/node,type=bind,readonly`, `source=${resolve("node_modules")},target=/opt/mcp/node_modules,type=bind,readonly`];
  writeFileSync(configFile, JSON.stringify(config));
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-dc-mcp-data-"));
  writeFileSync(
    join(dataDir, "extensions_config.json"),
    JSON.stringify({ mcpServers: { fs: { command: "/opt/node/bin/node", args: ["/opt/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/etc"] } } }),
  );
  const approved = await runCli(["devcontainer", "approve", "--workspace", fx.folder, "--data-dir", dataDir]);
  assert.equal(approved.code, 0, approved.stderr);

  fx.server.setScript([{ toolCalls: [{ id: "call_host", name: "fs_read_text_file", args: { path: "/etc/hostname" } }] }, { content: "Read." }]);
  const first = fx.server.requests.length;
  const r = await runCli(
    ["run", "--workspace", fx.folder, "--data-dir", dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "Which host?", "--approval", "mcp=auto", "--no-memory", "--sandbox", "devcontainer"],
    { PATH: `/usr/bin:${process.env.PATH ?? ""}` },
  );
  assert.equal(r.code, 0, `${r.stderr}\n${JSON.stringify(r.lines.at(-1))}`);
  assert.equal(r.lines[0]!.data.sandbox, "devcontainer");
  assert.ok(r.lines.some((l) => l.event === "custom" && l.data.type === "mcp_status" && l.data.server === "fs" && l.data.state === "ready"), r.stdout.slice(0, 3000));
  const result = (fx.server.requests[first + 1]!.body!.messages as Array<Record<string, any>>).find((m) => m.role === "tool" && m.tool_call_id === "call_host");
  const seen = String(result?.content ?? "").trim();
  assert.match(seen, /^[0-9a-f]{12}$/, `a container's hostname (its short id): ${seen}`);
  assert.notEqual(seen, hostname(), "not the host's hostname");
  const containers = await fx.api.listContainers([`devcontainer.local_folder=${fx.folder}`]);
  assert.ok(
    containers.some((c) => c.Id.startsWith(seen)),
    `the folder's container (${containers.map((c) => c.Id.slice(0, 12)).join(", ")})`,
  );
});
