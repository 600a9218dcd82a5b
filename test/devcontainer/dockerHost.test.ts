// The dev container sandbox on the Docker engine DOCKER_HOST names (issue 26: a `deerflow serve`
// whose sandboxes run on another machine's engine). The engine here listens on loopback TCP as
// well as its socket (scripts/ci/docker-setup.sh); the serve process runs in a mount namespace
// where /var/run/docker.sock is /dev/null, so only DOCKER_HOST can bring its container up: our
// Engine API calls and the docker CLI that @devcontainers/cli runs both go there. A DOCKER_HOST
// where nothing listens fails at once with `sandbox_engine_unavailable` naming it (the model's
// command gets that error), even though the default socket works.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { runCli, tempDir } from "../integration/helpers/cli.js";
import { startServe } from "../integration/helpers/serveProcess.js";
import { approvedDataDir, DOCKER_PATH, ENGINE_TCP, useEngineFixture } from "./helpers/engine.js";
import { HarnessError } from "../../extension/harness/errors.js";
import { engineEndpoint } from "../../extension/harness/sandbox/devcontainer/engineEndpoint.js";
import { DevContainerSandboxProvider } from "../../extension/harness/sandbox/devcontainer/provider.js";

const fx = useEngineFixture("basic");
const PATH = `/usr/bin:${process.env.PATH ?? ""}`;

/** Runs node with the default Docker socket unreachable (a private bind of /dev/null over it). */
function withoutDefaultSocket(): string {
  const wrapper = join(tempDir("no-socket"), "node-without-docker-sock");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec unshare --mount --propagation private sh -c 'mount --bind /dev/null /var/run/docker.sock && exec "$0" "$@"' ${JSON.stringify(process.execPath)} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

test("serve brings the folder's dev container up on the engine DOCKER_HOST names, with the default socket unreachable", async () => {
  const dataDir = approvedDataDir(fx.folder);
  const serve = await startServe(
    ["--workspace", `main=${fx.folder}`, "--data-dir", dataDir, "--model", "scripted", "--base-url", fx.server.url, "--sandbox", "devcontainer"],
    { PATH, DOCKER_HOST: ENGINE_TCP },
    { node: withoutDefaultSocket() },
  );
  try {
    const c = serve.client();
    const thread = await c.threads.create();
    fx.server.setScript([
      { toolCalls: [{ name: "bash", args: { description: "where am I", command: "test -f /.dockerenv && echo in-container; echo $FIXTURE_CONTAINER_ENV" } }] },
      { content: "Done on the remote engine." },
    ]);
    const first = fx.server.requests.length;
    const parts: Array<{ event: string; data: any }> = [];
    for await (const p of c.runs.stream(thread.thread_id, "lead_agent", { input: { messages: [{ role: "user", content: "go" }] }, streamMode: ["updates"] })) parts.push(p);
    assert.equal(parts.at(-1)!.data.status, "success", `${JSON.stringify(parts.at(-1))}\n${serve.stderr()}`);
    const bash = (fx.server.requests[first + 1]!.body!.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool").at(-1)!.content;
    assert.deepEqual(bash.trim().split("\n"), ["in-container", "from-containerEnv"], bash);
    // The same engine, seen through its socket from here: the container is the folder's.
    const containers = await fx.api.listContainers([`devcontainer.local_folder=${fx.folder}`]);
    assert.equal(containers.filter((x) => x.State === "running").length, 1, JSON.stringify(containers));
  } finally {
    await serve.stop();
  }
});

test("a DOCKER_HOST where no engine listens: sandbox_engine_unavailable naming that host at once, although the default socket answers", async () => {
  const dataDir = approvedDataDir(fx.folder);
  const port = await closedPort();
  fx.server.setScript([{ toolCalls: [{ name: "bash", args: { description: "x", command: "true" } }] }, { content: "unreachable" }]);
  const r = await runCli(
    ["run", "--workspace", fx.folder, "--data-dir", dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "go", "--sandbox", "devcontainer"],
    { PATH, DOCKER_HOST: `tcp://127.0.0.1:${port}` },
  );
  // Through the CLI: the model's command gets the error naming that host, and the run goes on to its end.
  assert.equal(r.code, 0, r.stderr);
  const tool = r.lines.filter((l) => l.event === "updates").flatMap((l) => (l.data.tools?.messages ?? []) as Array<{ content: string }>);
  assert.equal(tool.length, 1, JSON.stringify(r.lines));
  assert.match(tool[0]!.content, new RegExp(`^Error: No Docker engine answers at tcp://127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED[^)]*\\)\\. Start Docker there`));
  assert.equal(r.lines.at(-1)!.data.status, "success");

  // The provider's typed error, for the same DOCKER_HOST.
  const provider = new DevContainerSandboxProvider({ workspaceFolder: fx.folder, dataDir, dockerPath: DOCKER_PATH, engine: engineEndpoint({ DOCKER_HOST: `tcp://127.0.0.1:${port}` }) });
  await assert.rejects(provider.acquire("t-closed"), (err: unknown) => {
    assert.ok(err instanceof HarnessError);
    assert.equal(err.code, "sandbox_engine_unavailable");
    assert.match(err.message, new RegExp(`tcp://127\\.0\\.0\\.1:${port}`));
    return true;
  });
  await provider.shutdown();
});
