// A scripted run through the real CLI with `--sandbox devcontainer` against a real Docker engine:
// the model's bash calls run inside the folder's container (not on the host, and without any host
// consent flag), write into outputs, and the presented file exists on the host at once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../integration/helpers/cli.js";
import { useEngineFixture } from "./helpers/engine.js";

const fx = useEngineFixture("basic");

test("the model's bash runs in the dev container, writes outputs, and the presented file is on the host", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-dc-cli-data-"));
  const approved = await runCli(["devcontainer", "approve", "--workspace", fx.folder, "--data-dir", dataDir]);
  assert.equal(approved.code, 0, approved.stderr);
  fx.server.setScript([
    { toolCalls: [{ name: "bash", args: { description: "where am I", command: "test -f /.dockerenv && echo in-container; hostname; pwd; echo from-container > /mnt/user-data/outputs/report.txt" } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.txt"] } }] },
    { content: "Done in the container." },
  ]);
  const first = fx.server.requests.length;
  const r = await runCli(
    ["run", "--workspace", fx.folder, "--data-dir", dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "go", "--sandbox", "devcontainer", "--thread", "dc"],
    { PATH: `/usr/bin:${process.env.PATH ?? ""}` },
  );
  assert.equal(r.code, 0, `${r.stderr}\n${JSON.stringify(r.lines.at(-1))}`);
  assert.equal(r.lines.at(-1)!.data.status, "success");
  const bashResult = (fx.server.requests[first + 1]!.body!.messages as any[]).filter((m) => m.role === "tool").at(-1)!.content as string;
  const [marker, containerHost, cwd] = bashResult.trim().split("\n");
  assert.equal(marker, "in-container", bashResult);
  assert.notEqual(containerHost, hostname(), "not the host's hostname");
  assert.equal(cwd, "/mnt/user-data/workspace");
  assert.equal(r.lines[0]!.data.sandbox, "devcontainer");
  const onHost = join(fx.folder, ".deerflow", "threads", "dc", "outputs", "report.txt");
  assert.ok(existsSync(onHost));
  assert.equal(readFileSync(onHost, "utf8"), "from-container\n");
  const state = await runCli(["state", "--workspace", fx.folder, "--data-dir", dataDir, "--thread", "dc"]);
  assert.deepEqual(JSON.parse(state.stdout).artifacts, ["/mnt/user-data/outputs/report.txt"]);
  assert.match(JSON.parse(state.stdout).sandbox.sandbox_id, /^devcontainer:/);
});
