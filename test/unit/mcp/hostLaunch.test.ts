// Issue 31 item 3: a stdio server on this machine starts where the workspace cannot steer it. A
// real process (this Node) reports the folder it started in and the environment it got; the
// harness's environment carries what would steer npm, yarn, pip, uv and node, and a PATH with
// relative entries and entries inside the workspace ahead of the system's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { HostLauncher } from "../../../extension/harness/mcp/launch.js";
import { withoutWorkspaceEntries } from "../../../extension/harness/mcp/shellPath.js";
import type { McpLaunch } from "../../../extension/harness/mcp/types.js";

const temp = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `deerflow-${name}-`)));
const REPORT = `require("node:fs").writeFileSync(process.argv[1], JSON.stringify({ cwd: process.cwd(), env: process.env }))`;

/** Starts `launch` through the launcher and resolves with what the process saw, once it has exited. */
async function startAndReport(launcher: HostLauncher, server: string, launch: Extract<McpLaunch, { type: "stdio" }>, out: string) {
  let exited!: (how: string) => void;
  const ended = new Promise<string>((r) => (exited = r));
  const stderr: string[] = [];
  const transport = await launcher.transport(launch, { server, sessionKey: `${server}\0t`, signal: new AbortController().signal, onStderr: (s) => stderr.push(s), onExit: exited });
  await transport.start();
  assert.equal(await ended, "exit code 0", stderr.join(""));
  await transport.close();
  return JSON.parse(readFileSync(out, "utf8")) as { cwd: string; env: Record<string, string> };
}

test("withoutWorkspaceEntries drops relative entries and those inside the workspace (through links too), keeps the rest in order", () => {
  const ws = temp("ws");
  const outside = temp("outside");
  mkdirSync(join(ws, "bin"));
  symlinkSync(join(ws, "bin"), join(outside, "ws-bin"));
  const path = ["node_modules/.bin", ".", "", "~/bin", join(ws, "node_modules", ".bin"), join(ws, "bin"), join(outside, "ws-bin"), "/usr/local/bin", outside, "/usr/bin"].join(delimiter);
  assert.deepEqual(withoutWorkspaceEntries(path, ws).split(delimiter), ["/usr/local/bin", outside, "/usr/bin"]);
});

test("a host stdio server starts in its own 0700 folder outside the workspace, without the harness's package-manager settings or the workspace's PATH entries", async () => {
  const ws = temp("ws");
  const data = temp("data");
  mkdirSync(join(ws, "bin"));
  const launcher = new HostLauncher(ws, join(data, "run"), {
    HOME: data,
    LANG: "C.UTF-8",
    PATH: ["node_modules/.bin", ".", join(ws, "bin"), join(ws, "node_modules", ".bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter),
    // Each of these makes a package manager or node run code, or read configuration, named elsewhere.
    NODE_OPTIONS: `--require=${join(ws, "evil.cjs")}`,
    npm_config_node_options: `--require=${join(ws, "evil.cjs")}`,
    NPM_CONFIG_USERCONFIG: join(ws, ".npmrc"),
    npm_config_globalconfig: join(ws, "npmrc"),
    YARN_RC_FILENAME: join(ws, ".yarnrc.yml"),
    YARN_YARN_PATH: join(ws, "evil.cjs"),
    PIP_CONFIG_FILE: join(ws, "pip.conf"),
    UV_CONFIG_FILE: join(ws, "uv.toml"),
    OPENAI_API_KEY: "sk-not-for-servers",
  });
  const out = join(data, "report.json");
  const launch = { type: "stdio" as const, command: process.execPath, args: ["-e", REPORT, out], env: {} };
  const seen = await startAndReport(launcher, "fs tools", launch, out);
  const cwd = launcher.cwdOf("fs tools", launch);
  assert.equal(seen.cwd, cwd);
  assert.ok(cwd.startsWith(join(data, "run") + "/") && !cwd.startsWith(ws), cwd);
  assert.equal(statSync(cwd).mode & 0o777, 0o700);
  assert.notEqual(launcher.cwdOf("fs_tools", launch), cwd, "two names that sanitize alike get two folders");
  for (const name of ["NODE_OPTIONS", "NPM_CONFIG_USERCONFIG", "YARN_RC_FILENAME", "YARN_YARN_PATH", "PIP_CONFIG_FILE", "UV_CONFIG_FILE", "OPENAI_API_KEY"]) {
    assert.equal(seen.env[name], undefined, name);
  }
  assert.deepEqual(Object.keys(seen.env).filter((k) => /^npm_config_/i.test(k)), []);
  assert.equal(seen.env.LANG, "C.UTF-8", "the login basics pass");
  const entries = seen.env.PATH!.split(delimiter);
  assert.ok(entries.every((e) => isAbsolute(e) && !e.startsWith(ws)), seen.env.PATH);
  assert.ok(entries.includes("/usr/bin") && entries.includes(dirname(process.execPath)), seen.env.PATH);
});

test("what the entry sets itself is kept: its cwd (even the workspace) and its env, PATH and NODE_OPTIONS included", async () => {
  const ws = temp("ws");
  const data = temp("data");
  const launcher = new HostLauncher(ws, join(data, "run"), { HOME: data, PATH: `/usr/bin${delimiter}/bin` });
  const out = join(data, "report.json");
  const env = { NODE_OPTIONS: "--no-warnings", PATH: `${join(ws, "bin")}${delimiter}/usr/bin`, npm_config_registry: "https://registry.example/" };
  const seen = await startAndReport(launcher, "mine", { type: "stdio", command: process.execPath, args: ["-e", REPORT, out], env, cwd: ws }, out);
  assert.equal(seen.cwd, ws);
  assert.equal(seen.env.NODE_OPTIONS, "--no-warnings");
  assert.equal(seen.env.PATH, env.PATH);
  assert.equal(seen.env.npm_config_registry, "https://registry.example/");
});
