// Issue 33 item 1 (1): MCP call limits as DeerFlow has them, through the CLI, against the
// registry's server-everything (its long-running tool: the duration and the number of progress
// steps are the call's arguments) over stdio and over streamable HTTP.
// - stdio with `tool_call_timeout`: a call that outlasts it fails within seconds, naming the key;
// - progress notifications extend the call (the client asks for them with a progress token);
// - http: `tool_call_timeout` is ignored with DeerFlow's warning, the call is not cut.
// (No limit at all when the key is unset: test/unit/mcp/callTimeout.test.ts, on the client's clock.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runCli, sandboxDirs, scriptedRun, useModelServer, type Dirs } from "./helpers/cli.js";

const model = useModelServer();
const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const LONG = "trigger-long-running-operation";

let d: Dirs;
let child: ChildProcess | undefined;

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, "close");
  return port;
}

before(async () => {
  const port = await freePort();
  child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let text = "";
  await new Promise<void>((res, rej) => {
    child!.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      if (/listening on port/.test(text)) res();
    });
    child!.once("exit", (code) => rej(new Error(`server-everything exited (${code}): ${text}`)));
  });
  d = sandboxDirs();
  writeFileSync(
    join(d.dataDir, "extensions_config.json"),
    JSON.stringify({
      mcpServers: {
        local: { command: "node", args: [EVERYTHING, "stdio"], tool_call_timeout: 2 },
        web: { type: "http", url: `http://127.0.0.1:${port}/mcp`, tool_call_timeout: 1 },
      },
    }),
  );
});

after(async () => {
  if (child && child.exitCode === null) {
    child.kill();
    await once(child, "exit");
  }
});

type Req = { body?: { messages?: Array<Record<string, any>> } | null } | undefined;
const toolResult = (r: Req, id: string) => String(r?.body?.messages?.find((m) => m.role === "tool" && m.tool_call_id === id)?.content ?? "");

test("stdio: a call past tool_call_timeout fails naming it; one that reports progress is extended by it and returns", async () => {
  const r = await scriptedRun(
    model,
    d,
    [
      // One step of 30 s: no progress before the end, so the 2 s limit cuts it.
      { toolCalls: [{ id: "slow", name: `local_${LONG}`, args: { duration: 30, steps: 1 } }] },
      // Four steps of 1 s: each progress notification restarts the 2 s wait.
      { toolCalls: [{ id: "steady", name: `local_${LONG}`, args: { duration: 4, steps: 4 } }] },
      { content: "Done." },
    ],
    "Run the long operations.",
    ["--approval", "mcp=auto"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.status, "success");
  const cut = toolResult(r.requests[1], "slow");
  assert.match(cut, /gave no answer within 2 s \(tool_call_timeout\); the call was cancelled/, cut);
  const extended = toolResult(r.requests[2], "steady");
  assert.match(extended, /Long running operation completed\. Duration: 4 seconds, Steps: 4\./, extended);
});

test("http: tool_call_timeout is ignored with DeerFlow's warning, and a call longer than it returns", async () => {
  const listed = await runCli(["mcp", "list", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stderr, /Ignoring tool_call_timeout for MCP server 'web' because transport 'http' is not stdio; configure HTTP\/SSE transport-level timeouts instead\./);
  const r = await scriptedRun(
    model,
    d,
    [{ toolCalls: [{ id: "web", name: `web_${LONG}`, args: { duration: 3, steps: 1 } }] }, { content: "Done." }],
    "Run it over http.",
    ["--approval", "mcp=auto"],
  );
  assert.equal(r.code, 0, r.stderr);
  const result = toolResult(r.requests[1], "web");
  assert.match(result, /Long running operation completed\. Duration: 3 seconds, Steps: 1\./, result);
});

test("extensions_config keys the port does not act on are said once on stderr, with their key paths", async () => {
  const w = sandboxDirs();
  writeFileSync(
    join(w.dataDir, "extensions_config.json"),
    JSON.stringify({
      mcpServers: { github: { enabled: false, type: "http", url: "http://127.0.0.1:9/mcp", oauth: { token_url: "http://127.0.0.1:9/token" } } },
      mcpInterceptors: ["my_package.mcp.auth:build"],
      middlewares: [],
      task_toolsets: {},
      skills: {},
    }),
  );
  const r = await runCli(["mcp", "list", "--workspace", w.workspace, "--data-dir", w.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.includes("not supported here"));
  assert.equal(lines.length, 1, r.stderr);
  assert.ok(lines[0]!.endsWith(`${join(w.dataDir, "extensions_config.json")}: not supported here: mcpInterceptors, middlewares, task_toolsets, mcpServers.github.oauth`), lines[0]);
});
