// Agent Skills in an approved dev container (issue 24), through the real CLI and a real engine:
// the workspace's enabled skills are mounted read-only at /mnt/skills, so bash runs a skill's
// script from there inside the container, cannot write there, and finds no disabled skill.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textOf } from "../fixtures/requests.js";
import { runCli } from "../integration/helpers/cli.js";
import { useEngineFixture } from "./helpers/engine.js";

const fx = useEngineFixture("basic");
const ENV = { PATH: `/usr/bin:${process.env.PATH ?? ""}`, HOME: mkdtempSync(join(tmpdir(), "deerflow-dc-skills-home-")) };

test("bash runs a skill's script from /mnt/skills inside the container; the mount is read-only; a disabled skill is absent", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-dc-skills-data-"));
  const root = join(fx.folder, ".agents", "skills");
  for (const name of ["greeter", "hidden"]) {
    mkdirSync(join(root, name, "scripts"), { recursive: true });
    writeFileSync(join(root, name, "SKILL.md"), `---\nname: ${name}\ndescription: Greets. Run scripts/hello.sh.\n---\nRun \`sh scripts/hello.sh\`.\n`);
    writeFileSync(join(root, name, "scripts", "hello.sh"), '#!/bin/sh\nif test -f /.dockerenv; then echo "hello from the container"; fi\n');
    chmodSync(join(root, name, "scripts", "hello.sh"), 0o755);
  }
  for (const args of [["devcontainer", "approve"], ["skills", "disable", "hidden"]]) {
    const r = await runCli([...args, "--workspace", fx.folder, "--data-dir", dataDir], ENV);
    assert.equal(r.code, 0, r.stderr);
  }
  const command = [
    "/mnt/skills/project/greeter/scripts/hello.sh",
    "touch /mnt/skills/project/greeter/x 2>/dev/null && echo WROTE || echo READ-ONLY",
    "test -e /mnt/skills/project/hidden && echo HIDDEN-PRESENT || echo HIDDEN-ABSENT",
  ].join("; ");
  fx.server.setScript([{ toolCalls: [{ id: "c_sh", name: "bash", args: { description: "run the skill's script", command } }] }, { content: "Greeted." }]);
  const first = fx.server.requests.length;
  const r = await runCli(
    ["run", "--workspace", fx.folder, "--data-dir", dataDir, "--base-url", fx.server.url, "--model", "scripted", "--prompt", "/greeter say hello", "--sandbox", "devcontainer", "--thread", "skills", "--no-memory"],
    ENV,
  );
  assert.equal(r.code, 0, `${r.stderr}\n${JSON.stringify(r.lines.at(-1))}`);
  assert.equal(r.lines.at(-1)!.data.status, "success");
  const result = textOf((fx.server.requests[first + 1]!.body!.messages ?? []).find((m) => m.role === "tool" && m.tool_call_id === "c_sh"));
  assert.deepEqual(result.trim().split("\n"), ["hello from the container", "READ-ONLY", "HIDDEN-ABSENT"], result);
});
