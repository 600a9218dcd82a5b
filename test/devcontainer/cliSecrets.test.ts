/**
 * No host secrets cross into the sandbox by accident (issue 10), through the real CLI:
 * - a host variable like SECRET_TOKEN=xyz, and the API key itself, are not visible to `env` run
 *   by the bash tool in the container (the approved config's remoteEnv is);
 * - the API key comes from the environment or `--api-key-stdin`; `--api-key` still works but
 *   warns on stderr that the command line is visible to other processes.
 */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CLI, runCli, sandboxDirs } from "../integration/helpers/cli.js";
import { approvedDataDir, useEngineFixture } from "./helpers/engine.js";

const fx = useEngineFixture("basic");

function toolOutput(first: number): string {
  const tool = (fx.server.requests[first + 1]!.body!.messages as any[]).filter((m) => m.role === "tool").at(-1);
  return String(tool?.content ?? "");
}

test("a host SECRET_TOKEN and the API key are not visible to env in the container; remoteEnv is", async () => {
  const dataDir = approvedDataDir(fx.folder, mkdtempSync(join(tmpdir(), "deerflow-dc-secrets-data-")));
  fx.server.setScript([{ toolCalls: [{ name: "bash", args: { description: "env", command: "env; echo end-of-env" } }] }, { content: "Done." }]);
  const first = fx.server.requests.length;
  const r = await runCli(
    ["run", "--workspace", fx.folder, "--data-dir", dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "go", "--sandbox", "devcontainer"],
    { PATH: `/usr/bin:${process.env.PATH ?? ""}`, SECRET_TOKEN: "xyz-host-secret", OPENAI_API_KEY: "sk-host-api-key-123" },
  );
  assert.equal(r.code, 0, r.stderr);
  const env = toolOutput(first);
  assert.match(env, /end-of-env/, "env ran in the container");
  assert.match(env, /^FIXTURE_REMOTE_ENV=remote-from-containerEnv$/m, "the approved config's remoteEnv is there");
  assert.ok(!env.includes("xyz-host-secret"), "SECRET_TOKEN's value did not cross");
  assert.ok(!env.includes("SECRET_TOKEN"), "nor its name");
  assert.ok(!env.includes("sk-host-api-key-123"), "the API key did not cross");
  assert.equal(fx.server.requests[first]!.headers.authorization, "Bearer sk-host-api-key-123", "the key came from the environment");
});

/** The CLI with a key on stdin (runCli's stdin is /dev/null). */
async function runWithStdin(args: string[], stdin: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.end(stdin);
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stderr };
}

test("--api-key-stdin reads the key from stdin; --api-key works but warns; both at once is a usage error", async () => {
  const dirs = sandboxDirs();
  const base = ["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "hi", "--sandbox", "local"];

  fx.server.setScript([{ content: "Hello." }]);
  let first = fx.server.requests.length;
  const fromStdin = await runWithStdin([...base, "--api-key-stdin"], "sk-from-stdin\n");
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.equal(fx.server.requests[first]!.headers.authorization, "Bearer sk-from-stdin");
  assert.ok(!fromStdin.stderr.includes("warning"), fromStdin.stderr);

  fx.server.setScript([{ content: "Hello." }]);
  first = fx.server.requests.length;
  const onCommandLine = await runCli([...base, "--api-key", "sk-on-the-command-line"]);
  assert.equal(onCommandLine.code, 0, onCommandLine.stderr);
  assert.equal(fx.server.requests[first]!.headers.authorization, "Bearer sk-on-the-command-line");
  assert.match(onCommandLine.stderr, /warning: --api-key puts the key on the command line, where other processes on this machine can read it/);

  const both = await runWithStdin([...base, "--api-key", "a", "--api-key-stdin"], "b\n");
  assert.equal(both.code, 2);
  assert.match(both.stderr, /either --api-key or --api-key-stdin/);
  const empty = await runWithStdin([...base, "--api-key-stdin"], "\n");
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /read no key from stdin/);
});
