// Issue 23: an MCP server over streamable HTTP, the registry's server-everything in its
// `streamableHttp` mode (a real process on 127.0.0.1), named in the user's extensions_config.json
// with the spelling DeerFlow's files use (`type: http`) and VS Code's (`streamable-http` alias):
// mcp list shows it ready, a run calls its tool and the result reaches the model.
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
  // Ready when it says so on stderr (an event, not a sleep); an early exit fails the file.
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
        web: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
        alias: { transport: "streamable-http", url: `http://127.0.0.1:${port}/mcp`, tool_name_prefix: true },
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

test("mcp list: server-everything over streamable HTTP is ready with its tools", async () => {
  const r = await runCli(["mcp", "list", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  for (const name of ["web", "alias"]) {
    const s = r.lines.find((x: Record<string, any>) => x.name === name);
    assert.equal(s?.state, "ready", JSON.stringify(s));
    assert.equal(s.transport, "http");
    assert.equal(s.where, "remote");
    assert.ok(s.tools.some((t: Record<string, any>) => t.name === `${name}_get-sum`), JSON.stringify(s.tools.map((t: Record<string, any>) => t.name)));
  }
});

test("a run calls get-sum over HTTP (mcp=auto) and the model reads the result", async () => {
  const r = await scriptedRun(model, d, [{ toolCalls: [{ id: "call_sum", name: "web_get-sum", args: { a: 19, b: 23 } }] }, { content: "42." }], "Add.", ["--approval", "mcp=auto"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.status, "success");
  const result = (r.requests[1]?.body?.messages ?? []).find((m: Record<string, any>) => m.role === "tool" && m.tool_call_id === "call_sum");
  assert.match(JSON.stringify(result?.content), /42/);
});
