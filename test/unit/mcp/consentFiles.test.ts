// Issue 31 item 3: a workspace server's consent covers the workspace files its command line
// names, read at every refresh and again right before each process starts. The server is a
// workspace script that runs the registry's server-everything (a real process over stdio); the
// "agent's edit" is a write to that script, which would write a marker when it runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { namedWorkspaceFiles, withNamedFiles } from "../../../extension/harness/trust/consents.js";
import { openMcpRegistry } from "../../../extension/harness/mcp/open.js";
import { McpConfigChanged } from "../../../extension/harness/mcp/registry.js";
import type { McpServerView } from "../../../extension/protocol/mcp.js";

const temp = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `deerflow-${name}-`)));
const EVERYTHING_STDIO = pathToFileURL(resolve("node_modules/@modelcontextprotocol/server-everything/dist/transports/stdio.js")).href;
const serverScript = (before = "") => `${before}await import(${JSON.stringify(EVERYTHING_STDIO)});\n`;

test("namedWorkspaceFiles: words and --flag=value values that are regular files inside the workspace, from the server's folder or absolute", () => {
  const ws = temp("ws");
  const outside = temp("outside");
  mkdirSync(join(ws, "tools"));
  writeFileSync(join(ws, "tools", "server.js"), "a");
  writeFileSync(join(ws, "tools", "preload.cjs"), "b");
  writeFileSync(join(ws, "config.json"), "{}");
  writeFileSync(join(outside, "elsewhere.js"), "c");
  symlinkSync(join(ws, "config.json"), join(outside, "link-in.json"));
  const files = namedWorkspaceFiles(
    ["node", "--require=./preload.cjs", "server.js", join(ws, "config.json"), join(outside, "elsewhere.js"), join(outside, "link-in.json"), ws, "missing.js", "-y", "stdio"],
    { workspaceFolder: ws, cwd: join(ws, "tools") },
  );
  assert.deepEqual(
    files.map((f) => f.rel),
    ["config.json", "tools/preload.cjs", "tools/server.js"],
    "a link from outside into the workspace counts once; a folder, a file outside and a plain word do not",
  );
  assert.equal(withNamedFiles("base", []), "base", "nothing named: the entry's fingerprint as before");
  assert.notEqual(withNamedFiles("base", files), "base");
  assert.deepEqual(namedWorkspaceFiles(["server.js"], { workspaceFolder: ws, cwd: outside }), [], "relative words are found from where the server starts");
});

test("an approved workspace server whose script is edited needs approval again (changed), and does not start, not even for a new thread's session; approved again, it runs", async () => {
  const ws = temp("ws");
  const dataDir = temp("data");
  const marker = join(temp("marks"), "edited-script-ran");
  mkdirSync(join(ws, ".vscode"));
  mkdirSync(join(ws, "tools"));
  const script = join(ws, "tools", "server.mjs");
  writeFileSync(script, serverScript());
  writeFileSync(join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { wsscript: { command: process.execPath, args: ["${workspaceFolder}/tools/server.mjs"] } } }));
  const registry = openMcpRegistry({ workspaceFolder: ws, dataDir, env: { HOME: dataDir, PATH: process.env.PATH } });
  const statuses: McpServerView[] = [];
  registry.onStatus((v) => statuses.push(v));
  try {
    const first = registry.list().servers[0]!;
    assert.equal(first.state, "needs_approval");
    assert.equal(first.changed, false);
    assert.ok(first.approval_text.includes("with these workspace files as they are now (an edit asks again): tools/server.mjs"), first.approval_text.join("\n"));
    registry.approve("wsscript", first.fingerprint.slice(0, 16));
    const ctx = { supportsVision: false };
    const t1 = (await registry.toolsFor("t1", ctx)).tools.find((t) => t.name === "wsscript_echo");
    const t2 = (await registry.toolsFor("t2", ctx)).tools.find((t) => t.name === "wsscript_echo");
    assert.ok(t1 && t2, "approved, it starts and offers its tools");
    assert.match(JSON.stringify(await t1.invoke({ message: "one" })), /Echo: one/, "the first thread takes the running session");

    // The agent's edit, while the approved process runs. A new thread's session would start it.
    writeFileSync(script, serverScript(`import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\n`));
    await assert.rejects(t2.invoke({ message: "two" }), /MCP server 'wsscript' was not started: \.vscode\/mcp\.json is a workspace file and this server changed since you approved it: approve it with `deerflow mcp approve/);
    assert.equal(existsSync(marker), false, "the edited script never ran");
    assert.equal(statuses.at(-1)?.state, "needs_approval", "the last word is the gate, not an error");
    const now = registry.list().servers[0]!;
    assert.deepEqual([now.state, now.changed], ["needs_approval", true]);
    assert.notEqual(now.fingerprint, first.fingerprint);
    assert.throws(() => registry.approve("wsscript", first.fingerprint.slice(0, 16)), McpConfigChanged, "a yes to what was shown before the edit approves nothing");
    assert.equal((await registry.start()).servers[0]!.state, "needs_approval");
    assert.equal(existsSync(marker), false);

    // Going back to the approved bytes needs no second yes; the edited form, once approved, runs.
    writeFileSync(script, serverScript());
    assert.equal((await registry.start()).servers[0]!.state, "ready");
    writeFileSync(script, serverScript(`import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\n`));
    const edited = registry.list().servers[0]!;
    assert.equal(edited.state, "needs_approval");
    registry.approve("wsscript", edited.fingerprint);
    assert.equal((await registry.start()).servers[0]!.state, "ready");
    assert.equal(existsSync(marker), true, "what the user approved runs");
  } finally {
    await registry.dispose();
  }
});
