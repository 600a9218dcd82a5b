// Issue 23: MCP tools in a run, through the CLI, against the registry's own reference servers
// (@modelcontextprotocol/server-filesystem and server-everything, real processes over stdio) and
// the scripted model server. One data directory and one workspace for the file: the user's
// extensions_config.json names both servers and one that cannot start.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { cliState, runCli, sandboxDirs, scriptedRun, tempDir, useModelServer, waitForFile, type Dirs } from "./helpers/cli.js";

const server = useModelServer();
const FS_SERVER = resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

let d: Dirs;
before(() => {
  d = sandboxDirs();
  writeFileSync(join(d.workspace, "hello.txt"), "hello from the workspace\n");
  writeFileSync(
    join(d.dataDir, "extensions_config.json"),
    JSON.stringify({
      mcpServers: {
        fs: { type: "stdio", command: "node", args: [FS_SERVER, d.workspace] },
        everything: { command: "node", args: [EVERYTHING, "stdio"] },
        broken: { command: "deerflow-no-such-mcp-server", args: [] },
      },
    }),
  );
});

const toolNames = (request: { body?: { tools?: Array<{ function: { name: string } }> } | null } | undefined) => (request?.body?.tools ?? []).map((t) => t.function.name);
const toolMessages = (request: { body?: { messages?: Array<Record<string, any>> } | null } | undefined) => (request?.body?.messages ?? []).filter((m) => m.role === "tool");

test("mcp list starts the user's servers: both ready with their tools, the one that cannot start has its reason", async () => {
  const r = await runCli(["mcp", "list", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  const by = new Map<string, Record<string, any>>(r.lines.map((s: Record<string, any>) => [s.name, s]));
  assert.equal(by.get("fs")?.state, "ready", JSON.stringify(by.get("fs")));
  assert.ok(by.get("fs")!.tools.some((t: Record<string, any>) => t.name === "fs_read_text_file" && t.tool === "read_text_file"));
  assert.equal(by.get("everything")?.state, "ready", JSON.stringify(by.get("everything")));
  assert.ok(by.get("everything")!.tools.some((t: Record<string, any>) => t.name === "everything_echo"));
  assert.equal(by.get("broken")?.state, "error");
  assert.match(by.get("broken")!.reason, /command was not found \(deerflow-no-such-mcp-server\)/);
  assert.equal(by.get("fs")!.source.scope, "user");
  assert.match(r.stderr, /fs: ready \(\d+ tools\)/, "the same facts for a person on stderr");
});

test("an MCP call asks by default; approved, its result reaches the model and the state, while the broken server is skipped", async () => {
  const paused = await scriptedRun(server, d, [{ toolCalls: [{ id: "call_echo", name: "everything_echo", args: { message: "hi from mcp" } }] }], "Echo it.");
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.end?.data.stop_reason, "approval");
  const offered = toolNames(paused.requests[0]);
  assert.ok(offered.includes("everything_echo") && offered.includes("fs_read_text_file"), offered.join(","));
  assert.ok(!offered.some((n) => n.startsWith("broken_")));
  const statuses = paused.lines.filter((l) => l.event === "custom" && l.data.type === "mcp_status").map((l) => l.data);
  assert.ok(statuses.some((s) => s.server === "everything" && s.state === "ready" && s.tools > 0));
  assert.ok(statuses.some((s) => s.server === "broken" && s.state === "error" && /not found/.test(s.error)));
  const card = (paused.end?.data.pending_approvals as Array<Record<string, any>>)[0]!;
  assert.equal(card.class, "mcp");
  assert.deepEqual([card.name, card.mcp?.server, card.mcp?.tool, card.mcp?.source], ["everything_echo", "everything", "echo", "user"]);
  assert.deepEqual(card.args, { message: "hi from mcp" });
  assert.match(card.reason, /calls echo on MCP server everything/);
  assert.ok(!paused.lines.some((l) => l.event === "updates" && l.data.tools), "nothing ran before the decision");

  server.setScript([{ content: "It echoed." }]);
  const first = server.requests.length;
  const done = await runCli(["approve", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", paused.threadId, "--approve", "call_echo"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.lines.at(-1)?.data.status, "success");
  const results = toolMessages(server.requests[first]);
  assert.deepEqual(
    results.map((m) => [m.tool_call_id, m.content]),
    [["call_echo", "Echo: hi from mcp"]],
  );
  const state = await cliState(d, paused.threadId);
  const stored = state.messages.find((m: Record<string, any>) => m.type === "tool" && m.tool_call_id === "call_echo");
  assert.equal(stored?.content, "Echo: hi from mcp");
});

test("--approval mcp=auto runs an MCP tool without asking: server-filesystem reads a workspace file for the model", async () => {
  const r = await scriptedRun(
    server,
    d,
    [{ toolCalls: [{ id: "call_read", name: "fs_read_text_file", args: { path: join(d.workspace, "hello.txt") } }] }, { content: "Read it." }],
    "Read hello.txt.",
    ["--approval", "mcp=auto"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.status, "success");
  assert.equal(r.end?.data.stop_reason, undefined);
  assert.ok(!r.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"));
  const results = toolMessages(r.requests[1]);
  assert.equal(results[0]?.tool_call_id, "call_read");
  assert.match(JSON.stringify(results[0]?.content), /hello from the workspace/);
});

test("workspace servers (.vscode/mcp.json, .deerflow/extensions_config.json) do not start before mcp approve; an edit asks again", async () => {
  const w: Dirs = sandboxDirs();
  mkdirSync(join(w.workspace, ".vscode"));
  mkdirSync(join(w.workspace, ".deerflow"));
  // A workspace file's always_allow is not read: approving a server never lets its calls skip the user.
  writeFileSync(join(w.workspace, ".deerflow", "extensions_config.json"), JSON.stringify({ mcpServers: { wsev: { command: "node", args: [EVERYTHING, "stdio"], always_allow: ["echo"] } } }));
  const mcpJson = (extra: string[]) => JSON.stringify({ servers: { wsfs: { type: "stdio", command: "node", args: [FS_SERVER, w.workspace, ...extra] } } });
  writeFileSync(join(w.workspace, ".vscode", "mcp.json"), mcpJson([]));
  const listed = await runCli(["mcp", "list", "--workspace", w.workspace, "--data-dir", w.dataDir]);
  assert.equal(listed.code, 0, listed.stderr);
  const servers = new Map<string, Record<string, any>>(listed.lines.map((s: Record<string, any>) => [s.name, s]));
  assert.equal(servers.get("wsev")?.state, "needs_approval");
  assert.equal(servers.get("wsev")?.source.label, ".deerflow/extensions_config.json");
  const before = servers.get("wsfs")!;
  assert.equal(before.state, "needs_approval");
  assert.equal(before.source.scope, "workspace");
  assert.deepEqual(before.tools, []);
  assert.match(before.reason, /deerflow mcp approve --workspace/);
  assert.equal(existsSync(before.log_file), false, "the server was never started (its log would say so)");

  const run = await scriptedRun(server, w, [{ content: "No tools." }], "Hi.");
  assert.equal(run.code, 0, run.stderr);
  assert.ok(!toolNames(run.requests[0]).some((n) => n.startsWith("wsfs_") || n.startsWith("wsev_")), "their tools are not offered");
  assert.ok(run.lines.some((l) => l.event === "custom" && l.data.type === "mcp_status" && l.data.server === "wsfs" && l.data.state === "needs_approval"));
  assert.equal(existsSync(before.log_file), false);

  const approved = await runCli(["mcp", "approve", "--workspace", w.workspace, "--data-dir", w.dataDir, "--server", "wsfs"]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.deepEqual(
    approved.lines.map((l) => [l.name, l.approved]),
    [["wsfs", true]],
  );
  assert.match(approved.stderr, /runs on THIS MACHINE: node /);
  const after = await runCli(["mcp", "list", "--workspace", w.workspace, "--data-dir", w.dataDir]);
  const listedAfter = new Map<string, Record<string, any>>(after.lines.map((s: Record<string, any>) => [s.name, s]));
  const now = listedAfter.get("wsfs")!;
  assert.equal(now.state, "ready", JSON.stringify(now));
  assert.ok(now.tools.some((t: Record<string, any>) => t.name === "wsfs_list_directory"));
  assert.equal(listedAfter.get("wsev")?.state, "needs_approval", "only the server named was approved");

  writeFileSync(join(w.workspace, ".vscode", "mcp.json"), mcpJson([join(w.workspace, ".vscode")]));
  const edited = await runCli(["mcp", "list", "--workspace", w.workspace, "--data-dir", w.dataDir, "--no-start"]);
  const wsfs = edited.lines.find((s: Record<string, any>) => s.name === "wsfs")!;
  assert.equal(wsfs.state, "needs_approval");
  assert.equal(wsfs.changed, true);
});

test("a user's npx server cannot be steered by the workspace: a planted .npmrc node-options, node_modules/.bin shadow, npm_config_* and workspace PATH entries do nothing; the server works", async () => {
  const d = sandboxDirs();
  const marks = tempDir("marks");
  const ran = (what: string) => join(marks, what);
  // The user's own npm: a global prefix (in their ~/.npmrc) with server-everything installed.
  const home = tempDir("home");
  const prefix = tempDir("npm-global");
  mkdirSync(join(prefix, "bin"));
  symlinkSync(EVERYTHING, join(prefix, "bin", "mcp-server-everything"));
  writeFileSync(join(home, ".npmrc"), `prefix=${prefix}\n`);
  writeFileSync(join(d.dataDir, "extensions_config.json"), JSON.stringify({ mcpServers: { npmev: { command: "npx", args: ["--offline", "mcp-server-everything", "stdio"] } } }));
  // What the agent can write with write_file (write=auto) before this change: all in the workspace.
  const ws = d.workspace;
  writeFileSync(join(ws, "evil.cjs"), `require("node:fs").writeFileSync(${JSON.stringify(ran("npmrc"))}, "ran");\n`);
  writeFileSync(join(ws, ".npmrc"), `node-options=--require=${join(ws, "evil.cjs")}\n`);
  mkdirSync(join(ws, "node_modules", ".bin"), { recursive: true });
  mkdirSync(join(ws, "bin"));
  const shim = (what: string) => `#!/bin/sh\necho ran > ${ran(what)}\n`;
  writeFileSync(join(ws, "node_modules", ".bin", "mcp-server-everything"), shim("shadow"), { mode: 0o755 });
  writeFileSync(join(ws, "node_modules", ".bin", "npx"), shim("relative-path-npx"), { mode: 0o755 });
  writeFileSync(join(ws, "bin", "npx"), shim("workspace-path-npx"), { mode: 0o755 });
  // The harness's own environment, as a shell in the workspace could leave it (direnv's PATH_add, npm run).
  const env = {
    HOME: home,
    PATH: ["node_modules/.bin", join(ws, "bin"), process.env.PATH].join(delimiter),
    npm_config_node_options: `--require=${join(ws, "evil.cjs")}`,
    NPM_CONFIG_GLOBALCONFIG: join(ws, ".npmrc"),
  };
  const r = await runCli(["mcp", "list", "--workspace", ws, "--data-dir", d.dataDir], env);
  assert.equal(r.code, 0, r.stderr);
  const npmev = r.lines.find((s: Record<string, any>) => s.name === "npmev")!;
  assert.equal(npmev.state, "ready", JSON.stringify(npmev));
  assert.ok(npmev.tools.some((t: Record<string, any>) => t.name === "npmev_echo"), "the user's server answered");
  assert.deepEqual(readdirSync(marks), [], "nothing of the workspace's ran");
  const [key] = readdirSync(join(d.dataDir, "workspaces"));
  const runs = join(d.dataDir, "workspaces", key!, "mcp", "run");
  assert.equal(readdirSync(runs).length, 1, "it started in a folder of its own");
  assert.equal(statSync(join(runs, readdirSync(runs)[0]!)).mode & 0o777, 0o700);

  // The routes are real: the same command started in the workspace runs the shadow, and without it, the .npmrc's option.
  const npx = () => spawn("npx", ["--offline", "mcp-server-everything", "stdio"], { cwd: ws, env: { HOME: home, PATH: process.env.PATH }, stdio: ["pipe", "ignore", "ignore"], detached: true });
  const shadowed = npx();
  await once(shadowed, "close");
  assert.ok(existsSync(ran("shadow")), "npx in the workspace ran the planted bin");
  rmSync(join(ws, "node_modules"), { recursive: true });
  const optioned = npx();
  await waitForFile(ran("npmrc"));
  process.kill(-optioned.pid!, "SIGKILL");
  await once(optioned, "close");
});

test("an approved workspace server whose script the agent edits (write_file, write=auto) needs approval again and does not start; approved again, it runs", async () => {
  const w: Dirs = sandboxDirs();
  const ws = w.workspace;
  const marker = join(tempDir("marks"), "edited-script-ran");
  const stdio = pathToFileURL(resolve("node_modules/@modelcontextprotocol/server-everything/dist/transports/stdio.js")).href;
  mkdirSync(join(ws, ".vscode"));
  mkdirSync(join(ws, ".deerflow"));
  mkdirSync(join(ws, "tools"));
  writeFileSync(join(ws, "tools", "server.mjs"), `await import(${JSON.stringify(stdio)});\n`);
  // The script by absolute path (VS Code's format), and by a path relative to the entry's own cwd (DeerFlow's).
  writeFileSync(join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { wsscript: { command: "node", args: ["${workspaceFolder}/tools/server.mjs"] } } }));
  writeFileSync(join(ws, ".deerflow", "extensions_config.json"), JSON.stringify({ mcpServers: { wsrel: { command: "node", args: ["tools/server.mjs"], cwd: "." } } }));
  const list = async (extra: string[] = []) => {
    const r = await runCli(["mcp", "list", "--workspace", ws, "--data-dir", w.dataDir, ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return new Map<string, Record<string, any>>(r.lines.map((s: Record<string, any>) => [s.name, s]));
  };
  const approved = await runCli(["mcp", "approve", "--workspace", ws, "--data-dir", w.dataDir]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.deepEqual(approved.lines.map((l) => l.name).sort(), ["wsrel", "wsscript"]);
  assert.match(approved.stderr, /with these workspace files as they are now \(an edit asks again\): tools\/server\.mjs/);
  const before = await list();
  assert.deepEqual([before.get("wsscript")?.state, before.get("wsrel")?.state], ["ready", "ready"], JSON.stringify([...before.values()]));

  // The agent edits the script: an ordinary write, which write=auto runs without asking.
  const edit = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nawait import(${JSON.stringify(stdio)});\n`;
  const run = await scriptedRun(
    server,
    w,
    [
      { toolCalls: [{ id: "read", name: "read_file", args: { description: "x", path: "/mnt/user-data/workspace/tools/server.mjs" } }] },
      { toolCalls: [{ id: "edit", name: "write_file", args: { description: "x", path: "/mnt/user-data/workspace/tools/server.mjs", content: edit } }] },
      { content: "Edited." },
    ],
    "Edit the server.",
    ["--approval", "write=auto"],
  );
  assert.equal(run.end?.data.status, "success", run.stderr);
  assert.deepEqual(
    toolMessages(run.requests[2]).map((m) => [m.tool_call_id, m.content]).filter(([id]) => id === "edit"),
    [["edit", "OK"]],
  );
  assert.ok(!run.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"), "the edit itself asked nothing");

  const after = await list();
  for (const name of ["wsscript", "wsrel"]) {
    const s = after.get(name)!;
    assert.deepEqual([s.state, s.changed], ["needs_approval", true], JSON.stringify(s));
    assert.match(s.reason, /is a workspace file and this server changed since you approved it: approve it with `deerflow mcp approve --workspace /);
    assert.notEqual(s.fingerprint, before.get(name)!.fingerprint);
  }
  const next = await scriptedRun(server, w, [{ content: "No tools." }], "Hi.");
  assert.ok(!toolNames(next.requests[0]).some((n) => n.startsWith("wsscript_") || n.startsWith("wsrel_")), "their tools are not offered");
  assert.equal(existsSync(marker), false, "the edited script never ran");

  const again = await runCli(["mcp", "approve", "--workspace", ws, "--data-dir", w.dataDir, "--server", "wsscript"]);
  assert.equal(again.code, 0, again.stderr);
  const now = await list();
  assert.equal(now.get("wsscript")?.state, "ready");
  assert.equal(now.get("wsrel")?.state, "needs_approval", "only the server named was approved");
  assert.equal(existsSync(marker), true, "approved, the edited script runs");
});
